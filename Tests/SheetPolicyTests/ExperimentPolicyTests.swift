import SheetPolicy
import Testing

/// Experiments in the pure policy, with a hash the test controls (the service passes SHA-256's,
/// checked in SheetServiceTests.ExperimentAssignmentTests): arms by bucket, overrides and payload,
/// the holdout held (and exposed only when it would have won), pins, stopped experiments, nested
/// sheets, and no experiment work without experiments.
@Suite struct ExperimentPolicyTests {
    /// Buckets by user id: the hash prefix is the bucket itself (prefix % 10000 == bucket).
    static func assigner(_ user: String, bucket: Int) -> ExperimentAssigner {
        ExperimentAssigner(userId: user, hashPrefix: { _ in UInt64(bucket) })
    }

    static let large = SheetDefinition(
        id: "offers", kind: .cards, size: .large, screen: "home", tab: "accounts", containerId: "offers", priority: 5)

    static func experiment(status: ExperimentStatus = .running, winner: String? = nil) -> Experiment {
        Experiment(
            id: "offers-copy", status: status,
            arms: [
                ExperimentArm(id: "control", weight: 20, holdout: true),
                ExperimentArm(id: "a", weight: 40, payloadJSON: Array(#"{"copy":"A"}"#.utf8)),
                ExperimentArm(
                    id: "b", weight: 40, payloadJSON: Array(#"{"copy":"B"}"#.utf8), overridesJSON: Array(#"{"size":"large"}"#.utf8),
                    definition: large),
            ], conversionWindowSeconds: 604_800, winner: winner)
    }

    static func catalog(_ experiment: Experiment, promo: Bool = true) -> Catalog {
        var offers = Fixtures.offers
        offers.experiment = experiment
        return Catalog(promo ? [offers, Fixtures.promo, Fixtures.offerDetail] : [offers, Fixtures.offerDetail])
    }

    static func state(promo: Bool = true) -> UserState {
        var state = UserState()
        state.containers[ContainerKey(containerId: "offers")] = ContainerCount(count: 3)
        if promo { state.containers[ContainerKey(containerId: "promo")] = ContainerCount(count: 1) }
        return state
    }

    static let now = Timestamp(secondsSince1970: 1_796_112_000)

    static func decide(_ catalog: Catalog, _ state: UserState, bucket: Int, user: String = "u1") -> Decision {
        SheetPolicy.decide(catalog: catalog, state: state, context: Fixtures.context(), now: now, experiments: assigner(user, bucket: bucket))
    }

    /// Arms take consecutive bucket ranges in listed order: 20/40/40 ends below 2000, 6000, 10000.
    @Test func armsCoverConsecutiveRanges() {
        let e = Self.experiment()
        #expect(e.upperBuckets == [2000, 6000, 10000])
        #expect(e.armIndex(forBucket: 0) == 0)
        #expect(e.armIndex(forBucket: 1999) == 0)
        #expect(e.armIndex(forBucket: 2000) == 1)
        #expect(e.armIndex(forBucket: 5999) == 1)
        #expect(e.armIndex(forBucket: 6000) == 2)
        #expect(e.armIndex(forBucket: 9999) == 2)
        // floor(10000 * 1 / 3) = 3333, floor(10000 * 2 / 3) = 6666.
        let thirds = Experiment(
            id: "t", status: .running, arms: (0..<3).map { ExperimentArm(id: "\($0)", weight: 1) }, conversionWindowSeconds: 60)
        #expect(thirds.upperBuckets == [3333, 6666, 10000])
        #expect(Experiment.bucket(hashPrefix: 860_995_859_278_055_580) == 5580)
    }

    /// Arm b: its overrides (size large) and payload are presented, the user is exposed once.
    @Test func armOverridesAndPayloadArePresented() throws {
        let d = Self.decide(Self.catalog(Self.experiment()), Self.state(), bucket: 7000)
        let sheet = try #require(d.sheet)
        #expect(sheet.id == "offers")
        #expect(sheet.variant == .large)
        #expect(sheet.experiment == PresentedExperiment(id: "offers-copy", arm: "b", payloadJSON: Array(#"{"copy":"B"}"#.utf8)))
        #expect(d.exposures == [ExperimentExposure(experimentId: "offers-copy", sheetId: "offers", arm: "b")])
        #expect(d.trace.contains { $0.hasPrefix("experiment: 'offers' in 'offers-copy': arm 'b', assigned by bucket") })
        // The user's own bucket is not in the decision: two users of one arm in one state decide alike.
        #expect(Self.decide(Self.catalog(Self.experiment()), Self.state(), bucket: 9999).trace == d.trace)
        // Arm a: no overrides, its payload.
        let a = Self.decide(Self.catalog(Self.experiment()), Self.state(), bucket: 2000)
        #expect(a.sheet?.variant != .large)
        #expect(a.sheet?.experiment?.arm == "a")
    }

    /// A holdout user is not shown the sheet: held (holdout), another sheet wins, and the holdout
    /// is exposed because the sheet would have won.
    @Test func holdoutIsHeldAndAnotherSheetWins() throws {
        let d = Self.decide(Self.catalog(Self.experiment()), Self.state(), bucket: 10)
        #expect(d.sheet?.id == "promo")
        #expect(d.sheet?.experiment == nil)
        #expect(d.held == [HeldSheet(sheetId: "offers", reason: .holdout)])
        #expect(d.exposures == [ExperimentExposure(experimentId: "offers-copy", sheetId: "offers", arm: "control")])
        #expect(d.trace.contains { $0.contains("the holdout is not shown the sheet") })

        // Nothing else to present: the reason is the holdout.
        let alone = Self.decide(Self.catalog(Self.experiment(), promo: false), Self.state(promo: false), bucket: 10)
        #expect(alone.present == false)
        #expect(alone.reason == .holdout)
        #expect(alone.exposures.count == 1)
    }

    /// A holdout sheet that would have lost (a higher priority wins) exposes nobody.
    @Test func holdoutThatWouldHaveLostIsNotExposed() {
        var promo = Fixtures.promo
        promo.priority = 50
        var offers = Fixtures.offers
        offers.experiment = Self.experiment()
        let d = SheetPolicy.decide(
            catalog: Catalog([offers, promo]), state: Self.state(), context: Fixtures.context(), now: Self.now,
            experiments: Self.assigner("u1", bucket: 10))
        #expect(d.sheet?.id == "promo")
        #expect(d.held == [HeldSheet(sheetId: "offers", reason: .holdout)])
        #expect(d.exposures.isEmpty)
        // And an arm sheet that loses is not exposed either.
        let lost = SheetPolicy.decide(
            catalog: Catalog([offers, promo]), state: Self.state(), context: Fixtures.context(), now: Self.now,
            experiments: Self.assigner("u1", bucket: 7000))
        #expect(lost.sheet?.id == "promo")
        #expect(lost.exposures.isEmpty)
        #expect(lost.yielded == ["offers"])
    }

    /// A stopped experiment with a winner gives every user, the holdout included, the winner's arm,
    /// and exposes nobody; without a winner the sheet is presented as defined.
    @Test func stoppedWithWinnerForEveryone() {
        let catalog = Self.catalog(Self.experiment(status: .stopped, winner: "b"))
        for bucket in [10, 3000, 9000] {
            let d = Self.decide(catalog, Self.state(), bucket: bucket)
            #expect(d.sheet?.id == "offers")
            #expect(d.sheet?.experiment?.arm == "b")
            #expect(d.sheet?.variant == .large)
            #expect(d.held.isEmpty)
            #expect(d.exposures.isEmpty)
        }
        let none = Self.decide(Self.catalog(Self.experiment(status: .stopped)), Self.state(), bucket: 10)
        #expect(none.sheet?.id == "offers")
        #expect(none.sheet?.experiment == nil)
        #expect(none.exposures.isEmpty)
    }

    /// A pin wins over the bucket and exposes nobody (pinned users are left out of the results).
    @Test func pinnedUserGetsTheArmUnexposed() {
        var state = Self.state()
        state.experiments.pins["offers-copy"] = "b"
        let d = Self.decide(Self.catalog(Self.experiment()), state, bucket: 10)
        #expect(d.sheet?.experiment?.arm == "b")
        #expect(d.exposures.isEmpty)
        #expect(d.trace.contains { $0.contains("pinned for QA") })
        // A pin to the holdout holds the sheet back, still unexposed.
        state.experiments.pins["offers-copy"] = "control"
        let held = Self.decide(Self.catalog(Self.experiment()), state, bucket: 9000)
        #expect(held.held == [HeldSheet(sheetId: "offers", reason: .holdout)])
        #expect(held.exposures.isEmpty)
    }

    /// Nested sheets: the arm applies to a stack entry; a holdout entry cuts the stack there.
    @Test func nestedSheetsTakeArmsToo() {
        var detail = Fixtures.offerDetail
        var e = Self.experiment()
        e.id = "detail-copy"
        e.arms[2].definition = nil
        e.arms[2].overridesJSON = nil
        detail.experiment = e
        let catalog = Catalog([Fixtures.offers, detail])
        var state = Self.state(promo: false)
        _ = SheetPolicy.apply(
            .sheetOpened(sheetId: "offer-detail", mode: .push, parentSheetId: "offers"), to: &state, catalog: catalog, now: Self.now)
        let shown = Self.decide(catalog, state, bucket: 7000)
        #expect(shown.stack.map(\.id) == ["offers", "offer-detail"])
        #expect(shown.stack.map { $0.experiment?.arm } == [nil, "b"])
        #expect(shown.exposures == [ExperimentExposure(experimentId: "detail-copy", sheetId: "offer-detail", arm: "b")])

        let held = Self.decide(catalog, state, bucket: 10)
        // The stack is cut below the nested sheet; the card sheet left alone is presented by the card rules.
        #expect(held.stack.map(\.id) == ["offers"])
        #expect(held.reason == .cardsAvailable)
        #expect(held.held == [HeldSheet(sheetId: "offer-detail", reason: .holdout)])
        #expect(held.exposures == [ExperimentExposure(experimentId: "detail-copy", sheetId: "offer-detail", arm: "control")])
    }

    /// Without an experiment in the catalog the assigner is never called.
    @Test func noExperimentsNoHashing() {
        let d = SheetPolicy.decide(
            catalog: Fixtures.catalog, state: Self.state(), context: Fixtures.context(), now: Self.now,
            experiments: ExperimentAssigner(
                userId: "u1",
                hashPrefix: { _ in
                    Issue.record("hashed without an experiment")
                    return 0
                }))
        #expect(d.sheet?.experiment == nil)
        #expect(d.exposures.isEmpty)
        #expect(!Fixtures.catalog.hasExperiments)
    }

    /// The conversion window: from the exposure's millisecond (included) to `window` seconds later (excluded).
    @Test func conversionWindowIsHalfOpenToTheMillisecond() {
        let e = Self.experiment()
        let exposed = Timestamp(millisecondsSince1970: 1_000_000)
        let end = 1_000_000 + 604_800_000 as Int64
        #expect(e.isWithinWindow(exposed, exposedAt: exposed))
        #expect(e.isWithinWindow(Timestamp(millisecondsSince1970: end - 1), exposedAt: exposed))
        #expect(!e.isWithinWindow(Timestamp(millisecondsSince1970: end), exposedAt: exposed))
        #expect(!e.isWithinWindow(Timestamp(millisecondsSince1970: 999_999), exposedAt: exposed))
        var state = UserState()
        state.experiments.exposures[e.id] = ExperimentState.Exposure(arm: "a", at: exposed)
        func attribute(_ state: UserState, at: Timestamp) -> (Bool, String?) {
            var copy = state
            let a = SheetPolicy.recordConversion(in: e, state: &copy, at: at, capPerUser: 10)
            return (a.counted, a.arm)
        }
        #expect(attribute(state, at: Timestamp(millisecondsSince1970: end - 1)) == (true, "a"))
        #expect(attribute(state, at: Timestamp(millisecondsSince1970: end)) == (true, nil))
        #expect(attribute(UserState(), at: exposed) == (true, nil))
        state.experiments.pins[e.id] = "b"
        #expect(attribute(state, at: exposed) == (false, nil))
    }

    /// One user counts at most `capPerUser` conversions per experiment, attributed or not; past the
    /// cap nothing counts and the answer says why. An exposure to an arm the experiment no longer has
    /// counts as unattributed, never for that arm.
    @Test func conversionsAreCappedPerUserAndOnlyForArmsTheExperimentHas() {
        let e = Self.experiment()
        let exposed = Timestamp(millisecondsSince1970: 1_000_000)
        var state = UserState()
        state.experiments.exposures[e.id] = ExperimentState.Exposure(arm: "a", at: exposed)
        var outcomes: [SheetPolicy.ConversionAttribution] = []
        for _ in 0..<5 { outcomes.append(SheetPolicy.recordConversion(in: e, state: &state, at: exposed, capPerUser: 3)) }
        #expect(outcomes.map(\.counted) == [true, true, true, false, false])
        #expect(outcomes.map(\.capped) == [false, false, false, true, true])
        #expect(outcomes.prefix(3).allSatisfy { $0.arm == "a" })
        #expect(state.experiments.conversions[e.id] == 3)

        var unexposed = UserState()
        let counted = (0..<20).filter { _ in SheetPolicy.recordConversion(in: e, state: &unexposed, at: exposed, capPerUser: 3).counted }
        #expect(counted.count == 3, "an unexposed user inflates unattributed")

        var gone = UserState()
        gone.experiments.exposures[e.id] = ExperimentState.Exposure(arm: "yy", at: exposed)
        let attribution = SheetPolicy.recordConversion(in: e, state: &gone, at: exposed, capPerUser: 3)
        #expect(attribution.counted && attribution.arm == nil, "counted for an arm the experiment does not have")
    }
}
