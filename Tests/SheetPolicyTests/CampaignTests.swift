import SheetPolicy
import SheetWire
import TestSupport
import Testing

/// Issue 15's campaign rules, with fixed clocks: each rule, its boundaries to the millisecond, their order.
enum Campaign {
    /// `Fixtures.now` moved by `seconds` (and `millis`).
    static func at(_ seconds: Int, millis: Int64 = 0) -> Timestamp {
        Timestamp(millisecondsSince1970: Fixtures.now.adding(seconds: seconds).millisecondsSince1970 + millis)
    }

    /// The fixture catalog with rules on `offers` (priority 5) and `promo` (priority 1), and settings.
    static func catalog(offers: CampaignRules = .none, promo: CampaignRules = .none, settings: CampaignSettings = .off) -> Catalog {
        var catalog = Fixtures.catalog
        var o = Fixtures.offers
        o.campaign = offers
        var p = Fixtures.promo
        p.campaign = promo
        catalog.upsert(o)
        catalog.upsert(p)
        catalog.settings = settings
        return catalog
    }

    /// Offers has 3 cards (promo none unless `promoCards`), with the campaign state given.
    static func state(_ campaign: CampaignState = CampaignState(), promoCards: Int = 0, events: [UserEvent] = []) -> UserState {
        var state = fold([.count("offers", 3), .count("promo", promoCards)] + events)
        state.campaign = campaign
        return state
    }
}

struct CampaignRuleCase: Sendable, CustomTestStringConvertible {
    var name: String
    var offers: CampaignRules = .none
    var settings: CampaignSettings = .off
    var campaign = CampaignState()
    var promoCards = 0
    var context = Fixtures.context()
    var now: Timestamp
    /// `nil`: offers is presented.
    var held: DecisionReason?
    var validUntil: Timestamp?
    var testDescription: String { name }

    static func at(_ seconds: Int, millis: Int64 = 0) -> Timestamp { Campaign.at(seconds, millis: millis) }
    static let dismissedJustNow = CampaignState(lastDismissals: ["offers": at(0)])

    static let all: [CampaignRuleCase] = [
        // Schedule: start <= now < end.
        .init(
            name: "before the start", offers: .init(schedule: .init(start: at(60))), now: at(59, millis: 999), held: .outsideSchedule,
            validUntil: at(60)),
        .init(name: "exactly at the start", offers: .init(schedule: .init(start: at(60))), now: at(60), held: nil, validUntil: nil),
        .init(
            name: "a window: inside, until its end", offers: .init(schedule: .init(start: at(0), end: at(60))), now: at(0), held: nil,
            validUntil: at(60)),
        .init(name: "just before the end", offers: .init(schedule: .init(end: at(60))), now: at(59, millis: 999), held: nil, validUntil: at(60)),
        .init(name: "exactly at the end", offers: .init(schedule: .init(end: at(60))), now: at(60), held: .outsideSchedule, validUntil: nil),
        // Cooldown from the latest dismissal.
        .init(
            name: "cooling down", offers: .init(cooldownSeconds: 600), campaign: dismissedJustNow, now: at(599, millis: 999), held: .coolingDown,
            validUntil: at(600)),
        .init(
            name: "exactly at the cooldown's end", offers: .init(cooldownSeconds: 600), campaign: dismissedJustNow, now: at(600), held: nil,
            validUntil: nil),
        .init(name: "a cooldown without a dismissal", offers: .init(cooldownSeconds: 600), now: at(0), held: nil),
        // Frequency: impressions in (now - period, now]; not on screen (dismissed after the latest).
        .init(
            name: "frequency capped", offers: .init(frequency: .init(max: 2, periodSeconds: 3600)),
            campaign: .init(impressions: ["offers": [at(-3000), at(-1000)]], lastDismissals: ["offers": at(-900)]),
            now: at(599, millis: 999), held: .frequencyCapped, validUntil: at(600)),
        .init(
            name: "exactly when the oldest impression leaves the window", offers: .init(frequency: .init(max: 2, periodSeconds: 3600)),
            campaign: .init(impressions: ["offers": [at(-3000), at(-1000)]], lastDismissals: ["offers": at(-900)]),
            now: at(600), held: nil),
        .init(
            name: "under the cap", offers: .init(frequency: .init(max: 3, periodSeconds: 3600)),
            campaign: .init(impressions: ["offers": [at(-3000), at(-1000)]], lastDismissals: ["offers": at(-900)]),
            now: at(0), held: nil),
        .init(
            name: "a sheet on screen stays on screen under its cap", offers: .init(frequency: .init(max: 2, periodSeconds: 3600)),
            campaign: .init(impressions: ["offers": [at(-3000), at(-1000)]], lastDismissals: ["offers": at(-2000)]),
            now: at(0), held: nil, validUntil: nil),
        // Audience.
        .init(name: "platform matches", offers: .init(audience: .init(platforms: [.ios])), now: at(0), held: nil),
        .init(name: "platform does not match", offers: .init(audience: .init(platforms: [.android])), now: at(0), held: .notInAudience),
        .init(name: "idiom does not match", offers: .init(audience: .init(idioms: [.pad])), now: at(0), held: .notInAudience),
        .init(name: "no appVersion sent", offers: .init(audience: .init(minAppVersion: "2.10.0")), now: at(0), held: .notInAudience),
        .init(
            name: "2.9.1 is below 2.10.0", offers: .init(audience: .init(minAppVersion: "2.10.0")),
            context: ClientContext(screen: "home", tab: "accounts", platform: .ios, appVersion: "2.9.1"), now: at(0), held: .notInAudience),
        .init(
            name: "2.10 equals 2.10.0", offers: .init(audience: .init(minAppVersion: "2.10.0", maxAppVersion: "3")),
            context: ClientContext(screen: "home", tab: "accounts", platform: .ios, appVersion: "2.10"), now: at(0), held: nil),
        .init(
            name: "3.0.1 is above 3", offers: .init(audience: .init(maxAppVersion: "3")),
            context: ClientContext(screen: "home", tab: "accounts", platform: .ios, appVersion: "3.0.1"), now: at(0), held: .notInAudience),
        .init(name: "no locale sent", offers: .init(audience: .init(locales: ["de"])), now: at(0), held: .notInAudience),
        .init(
            name: "de matches de-CH", offers: .init(audience: .init(locales: ["fr", "de"])),
            context: ClientContext(screen: "home", tab: "accounts", platform: .ios, locale: "de-CH"), now: at(0), held: nil),
        .init(
            name: "de does not match den", offers: .init(audience: .init(locales: ["de"])),
            context: ClientContext(screen: "home", tab: "accounts", platform: .ios, locale: "den"), now: at(0), held: .notInAudience),
        .init(
            name: "de-CH does not match de", offers: .init(audience: .init(locales: ["de-CH"])),
            context: ClientContext(screen: "home", tab: "accounts", platform: .ios, locale: "de"), now: at(0), held: .notInAudience),
        .init(
            name: "the user has one of the segments", offers: .init(audience: .init(segments: ["staff", "beta"])),
            campaign: .init(segments: ["beta"]), now: at(0), held: nil),
        .init(
            name: "the user has none of the segments", offers: .init(audience: .init(segments: ["staff"])),
            campaign: .init(segments: ["beta"]), now: at(0), held: .notInAudience),
        // Global settings count every card sheet's impressions.
        .init(
            name: "global cap reached by another card sheet", settings: .init(globalCap: .init(max: 1, periodSeconds: 3600)),
            campaign: .init(impressions: ["promo": [at(-100)]], lastDismissals: ["promo": at(-50)]),
            now: at(3499, millis: 999), held: .globalCap, validUntil: at(3500)),
        .init(
            name: "global cap's window edge", settings: .init(globalCap: .init(max: 1, periodSeconds: 3600)),
            campaign: .init(impressions: ["promo": [at(-100)]], lastDismissals: ["promo": at(-50)]),
            now: at(3500), held: nil),
        .init(
            name: "impressions of sheets that are not card sheets do not count",
            settings: .init(globalCap: .init(max: 1, periodSeconds: 3600), minIntervalSeconds: 300),
            campaign: .init(impressions: ["about": [at(-100)]]), now: at(0), held: nil),
        .init(
            name: "within the minimum interval", settings: .init(minIntervalSeconds: 300),
            campaign: .init(impressions: ["promo": [at(-100)]], lastDismissals: ["promo": at(-50)]),
            now: at(199, millis: 999), held: .minInterval, validUntil: at(200)),
        .init(
            name: "exactly at the minimum interval's end", settings: .init(minIntervalSeconds: 300),
            campaign: .init(impressions: ["promo": [at(-100)]], lastDismissals: ["promo": at(-50)]), now: at(200), held: nil),
        .init(
            name: "on screen, the minimum interval does not hold it", settings: .init(minIntervalSeconds: 300),
            campaign: .init(impressions: ["offers": [at(-100)]]), now: at(0), held: nil),
        .init(
            name: "on screen, the schedule's end still applies", offers: .init(schedule: .init(end: at(0))),
            campaign: .init(impressions: ["offers": [at(-100)]]), now: at(0), held: .outsideSchedule),
        .init(
            name: "on screen, the audience still applies", offers: .init(audience: .init(platforms: [.android])),
            campaign: .init(impressions: ["offers": [at(-100)]]), now: at(0), held: .notInAudience),
        // Several rules: the first of the settled order, with the first one's boundary (and the schedule's end).
        .init(
            name: "outside-schedule before cooling-down", offers: .init(schedule: .init(start: at(60)), cooldownSeconds: 600),
            campaign: dismissedJustNow, now: at(0), held: .outsideSchedule, validUntil: at(60)),
        .init(
            name: "not-in-audience before cooling-down, until the schedule ends",
            offers: .init(schedule: .init(end: at(900)), cooldownSeconds: 600, audience: .init(idioms: [.pad])),
            campaign: dismissedJustNow, now: at(0), held: .notInAudience, validUntil: at(900)),
        .init(
            name: "cooling-down before frequency-capped",
            offers: .init(cooldownSeconds: 60, frequency: .init(max: 1, periodSeconds: 3600)),
            campaign: .init(impressions: ["offers": [at(-10)]], lastDismissals: ["offers": at(0)]),
            now: at(0), held: .coolingDown, validUntil: at(60)),
        .init(
            name: "frequency-capped before global-cap", offers: .init(frequency: .init(max: 1, periodSeconds: 600)),
            settings: .init(globalCap: .init(max: 1, periodSeconds: 3600), minIntervalSeconds: 60),
            campaign: .init(impressions: ["offers": [at(-10)]], lastDismissals: ["offers": at(-5)]),
            now: at(0), held: .frequencyCapped, validUntil: at(590)),
        .init(
            name: "global-cap before min-interval",
            settings: .init(globalCap: .init(max: 1, periodSeconds: 3600), minIntervalSeconds: 60),
            campaign: .init(impressions: ["promo": [at(-10)]], lastDismissals: ["promo": at(-5)]),
            now: at(0), held: .globalCap, validUntil: at(3590)),
    ]
}

struct CampaignTests {
    @Test(arguments: CampaignRuleCase.all)
    func ruleHoldsOrPresents(_ c: CampaignRuleCase) {
        let catalog = Campaign.catalog(offers: c.offers, settings: c.settings)
        let decision = SheetPolicy.decide(
            catalog: catalog, state: Campaign.state(c.campaign, promoCards: c.promoCards), context: c.context, now: c.now)
        if let reason = c.held {
            #expect(!decision.present)
            #expect(decision.reason == reason)
            #expect(decision.held == [HeldSheet(sheetId: "offers", reason: reason)])
            #expect(decision.trace.contains { $0.hasPrefix("campaign: 'offers' held (\(reason.rawValue))") }, "\(decision.trace)")
        } else {
            #expect(decision.present && decision.reason == .cardsAvailable && decision.sheet?.id == "offers", "\(decision.trace)")
            #expect(decision.held.isEmpty)
        }
        #expect(decision.validUntil == c.validUntil)
        if let until = c.validUntil {
            // Exact: the same bytes up to the last millisecond before the boundary; at it, different ones.
            #expect(until > c.now)
            let state = Campaign.state(c.campaign, promoCards: c.promoCards)
            let before = SheetPolicy.decide(
                catalog: catalog, state: state, context: c.context, now: Timestamp(millisecondsSince1970: until.millisecondsSince1970 - 1))
            let after = SheetPolicy.decide(catalog: catalog, state: state, context: c.context, now: until)
            #expect(before.jsonBytes() == decision.jsonBytes())
            #expect(after.jsonBytes() != decision.jsonBytes())
        }
    }

    /// Without rules and with the settings off, the decision is what it was before issue 15.
    @Test func noRulesNoCampaignWork() {
        let decision = SheetPolicy.decide(catalog: Fixtures.catalog, state: Campaign.state(), context: Fixtures.context(), now: Campaign.at(0))
        #expect(decision.held.isEmpty && decision.validUntil == nil)
        #expect(!decision.trace.contains { $0.hasPrefix("campaign:") })
    }

    /// Held sheets are listed in id order; when nothing is presented the reason is the best-ranked held sheet's.
    @Test func reasonIsTheHighestPriorityHeldSheets() {
        let catalog = Campaign.catalog(
            offers: .init(audience: .init(platforms: [.android])), promo: .init(schedule: .init(start: Campaign.at(60))))
        let decision = SheetPolicy.decide(catalog: catalog, state: Campaign.state(promoCards: 2), context: Fixtures.context(), now: Campaign.at(0))
        #expect(!decision.present && decision.reason == .notInAudience)
        #expect(decision.held == [HeldSheet(sheetId: "offers", reason: .notInAudience), HeldSheet(sheetId: "promo", reason: .outsideSchedule)])
        #expect(decision.validUntil == Campaign.at(60))
        // A held sheet does not block a lower-priority one that is not held.
        let promoFree = Campaign.catalog(offers: .init(audience: .init(platforms: [.android])))
        let second = SheetPolicy.decide(catalog: promoFree, state: Campaign.state(promoCards: 2), context: Fixtures.context(), now: Campaign.at(0))
        #expect(second.present && second.sheet?.id == "promo" && second.held.map(\.sheetId) == ["offers"] && second.yielded.isEmpty)
    }

    /// When the stack wins, `held` still lists held card sheets and the reason stays `stack`; a card sheet
    /// in the stack shown is never held.
    @Test func stackIsNeverHeld() {
        let catalog = Campaign.catalog(offers: .init(cooldownSeconds: 600), promo: .init(cooldownSeconds: 600))
        let cooling = CampaignState(lastDismissals: ["offers": Campaign.at(0), "promo": Campaign.at(0)])
        let overFilters = SheetPolicy.decide(
            catalog: catalog, state: Campaign.state(cooling, promoCards: 1, events: [.push("filters")]), context: Fixtures.context(),
            now: Campaign.at(10))
        #expect(overFilters.reason == .stack && overFilters.sheet?.id == "filters")
        #expect(overFilters.held == [HeldSheet(sheetId: "offers", reason: .coolingDown), HeldSheet(sheetId: "promo", reason: .coolingDown)])
        #expect(overFilters.validUntil == Campaign.at(600))
        let nested = SheetPolicy.decide(
            catalog: catalog, state: Campaign.state(cooling, events: [.push("offer-detail", parent: "offers")]),
            context: Fixtures.context(), now: Campaign.at(10))
        #expect(nested.reason == .stack && nested.stack.map(\.id) == ["offers", "offer-detail"])
        #expect(nested.held.isEmpty)
    }

    /// Dismissals record their time for cooldowns (card sheets, every method).
    @Test func dismissalsRecordTheirTime() {
        var state = Campaign.state()
        _ = SheetPolicy.apply(.dismiss("offers", .programmatic), to: &state, catalog: Fixtures.catalog, now: Campaign.at(5))
        _ = SheetPolicy.apply(.push("about"), to: &state, catalog: Fixtures.catalog, now: Campaign.at(6))
        _ = SheetPolicy.apply(.dismiss("about"), to: &state, catalog: Fixtures.catalog, now: Campaign.at(7))
        #expect(state.campaign.lastDismissals == ["offers": Campaign.at(5)])
        _ = SheetPolicy.apply(.dismiss("offers"), to: &state, catalog: Fixtures.catalog, now: Campaign.at(9))
        #expect(state.campaign.lastDismissals == ["offers": Campaign.at(9)])
        // Reported late (`occurredAt`): one that happened before the latest does not move it back, and
        // still latches and leaves the stack as it arrives.
        let late = SheetPolicy.apply(.dismiss("offers"), to: &state, catalog: Fixtures.catalog, now: Campaign.at(8))
        #expect(late.latched)
        #expect(state.campaign.lastDismissals == ["offers": Campaign.at(9)])
        _ = SheetPolicy.apply(.dismiss("offers"), to: &state, catalog: Fixtures.catalog, now: Campaign.at(12))
        #expect(state.campaign.lastDismissals == ["offers": Campaign.at(12)])
    }

    /// A late impression is kept in time order: the caps count it where it happened, and the
    /// latest stays the latest (the "on screen" rule reads it).
    @Test func lateImpressionsKeepTimeOrder() {
        let catalog = Campaign.catalog(offers: .init(frequency: .init(max: 2, periodSeconds: 3600)))
        var state = Campaign.state()
        for t in [Campaign.at(-600), Campaign.at(-3000)] {
            state.campaign.recordImpression(
                of: "offers", at: t, keepSeconds: catalog.longestImpressionPeriod, keepNewest: catalog.impressionsKeptPerSheet)
        }
        #expect(state.campaign.impressions["offers"] == [Campaign.at(-3000), Campaign.at(-600)])
        _ = SheetPolicy.apply(.dismiss("offers", .programmatic), to: &state, catalog: catalog, now: Campaign.at(-500))
        let capped = SheetPolicy.decide(catalog: catalog, state: state, context: Fixtures.context(), now: Campaign.at(0))
        #expect(capped.held == [HeldSheet(sheetId: "offers", reason: .frequencyCapped)])
        #expect(capped.validUntil == Campaign.at(600), "released an hour after the earlier impression")
    }

    /// "A sheet on screen stays on screen": its own impression does not make it vanish; after its
    /// dismissal (and the latch's release) the cap holds it.
    @Test func sheetOnScreenStaysOnScreen() {
        let catalog = Campaign.catalog(offers: .init(frequency: .init(max: 1, periodSeconds: 3600)), settings: .init(minIntervalSeconds: 600))
        var state = Campaign.state()
        #expect(SheetPolicy.decide(catalog: catalog, state: state, context: Fixtures.context(), now: Campaign.at(0)).sheet?.id == "offers")
        state.campaign.recordImpression(of: "offers", at: Campaign.at(1), keepSeconds: catalog.longestImpressionPeriod)
        let shown = SheetPolicy.decide(catalog: catalog, state: state, context: Fixtures.context(), now: Campaign.at(2))
        #expect(shown.sheet?.id == "offers" && shown.held.isEmpty)
        #expect(shown.trace.contains { $0.hasPrefix("campaign: 'offers' is on screen") })
        // The count going to 0 closes it; back above 0 with no dismissal in between, it is still "on screen".
        _ = SheetPolicy.apply(.dismiss("offers"), to: &state, catalog: catalog, now: Campaign.at(3))
        _ = SheetPolicy.apply(.count("offers", 4), to: &state, catalog: catalog, now: Campaign.at(4))
        let capped = SheetPolicy.decide(catalog: catalog, state: state, context: Fixtures.context(), now: Campaign.at(5))
        #expect(!capped.present && capped.reason == .frequencyCapped && capped.validUntil == Campaign.at(3601))
    }
}

/// RFC 3339 times, app versions and language tags as the definitions and queries take them.
struct CampaignFormatTests {
    @Test func rfc3339ParsesExactly() {
        let z = Timestamp(rfc3339: "2026-12-01T09:00:00Z")
        #expect(z?.millisecondsSince1970 == 1_796_115_600_000)
        #expect(Timestamp(rfc3339: "2026-12-01T10:00:00+01:00") == z)
        #expect(Timestamp(rfc3339: "2026-12-01T04:30:00-04:30") == z)
        #expect(Timestamp(rfc3339: "2026-12-01t09:00:00z") == z)
        #expect(Timestamp(rfc3339: "2026-12-01T09:00:00.250Z")?.millisecondsSince1970 == 1_796_115_600_250)
        #expect(Timestamp(rfc3339: "2026-12-01T09:00:00.5Z")?.millisecondsSince1970 == 1_796_115_600_500)
        #expect(Timestamp(rfc3339: "2026-12-01T09:00:00.250000Z")?.millisecondsSince1970 == 1_796_115_600_250)
        #expect(Timestamp(rfc3339: "1969-12-31T23:59:59.999Z")?.millisecondsSince1970 == -1)
        #expect(Timestamp(rfc3339: "2026-12-01T09:00:00.2501Z") == nil)
        #expect(
            Timestamp(rfc3339: "2026-12-01T09:00:00.2501Z", finerFraction: .roundUp)?.millisecondsSince1970
                == 1_796_115_600_251)
        #expect(
            Timestamp(rfc3339: "2026-12-01T08:59:59.9990001Z", finerFraction: .roundUp)?.millisecondsSince1970
                == 1_796_115_600_000)
        #expect(
            Timestamp(rfc3339: "2026-12-01T09:00:00.250000Z", finerFraction: .roundUp)?.millisecondsSince1970
                == 1_796_115_600_250)
        #expect(Timestamp(rfc3339: "2028-02-29T00:00:00Z") != nil)
        for bad in [
            "2026-12-01T09:00:00", "2026-12-01 09:00:00Z", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-12-01T24:00:00Z",
            "2026-12-01T09:00:60Z", "2026-12-01T09:00:00.Z", "2026-12-01T09:00:00.2501Z", "2026-12-01T09:00:00+1:00",
            "2026-12-01T09:00:00Z ", "26-12-01T09:00:00Z", "",
        ] {
            #expect(Timestamp(rfc3339: bad) == nil, "\(bad)")
        }
        #expect(z?.rfc3339 == "2026-12-01T09:00:00Z")
        #expect(Timestamp(millisecondsSince1970: 1_796_115_600_250).rfc3339 == "2026-12-01T09:00:00.250Z")
        #expect(Timestamp(millisecondsSince1970: -1).rfc3339 == "1969-12-31T23:59:59.999Z")
        var rng = SplitMix64(seed: 15)
        for _ in 0..<2000 {
            let t = Timestamp(millisecondsSince1970: Int64(rng.int(in: -62_135_596_800_000...253_402_300_799_999)))
            #expect(Timestamp(rfc3339: t.rfc3339) == t, "\(t.rfc3339)")
        }
    }

    @Test func appVersionsCompareAsDottedNumbers() {
        #expect(AppVersion.compare("2.10.0", "2.9.1") > 0)
        #expect(AppVersion.compare("2.10", "2.10.0") == 0)
        #expect(AppVersion.compare("1", "1.0.1") < 0)
        #expect(AppVersion.compare("010", "10") == 0)
        for good in ["1", "2.10.0", "0.0.0.0.0.0.0.1", "999999999"] { #expect(AppVersion.isValid(good), "\(good)") }
        for bad in ["", "1.", ".1", "1..2", "v1", "1.2-beta", "1.0.0.0.0.0.0.0.0", "1234567890"] {
            #expect(!AppVersion.isValid(bad), "\(bad)")
        }
    }

    @Test func languageTags() {
        for good in ["de", "de-CH", "zh-Hant-TW", "es-419", "EN-us"] { #expect(LanguageTag.isValid(good), "\(good)") }
        for bad in ["", "d", "de_CH", "de-", "-de", "1de", "de--CH", "de-toolongsubtag"] { #expect(!LanguageTag.isValid(bad), "\(bad)") }
        #expect(LanguageTag.matches("de", "de-CH") && LanguageTag.matches("de", "DE") && LanguageTag.matches("de-ch", "de-CH-1996"))
        #expect(!LanguageTag.matches("de", "den") && !LanguageTag.matches("de-CH", "de"))
    }
}

/// Over random event sequences, with a client that shows what the decision says (reporting an
/// impression when it newly shows a card sheet, and a programmatic dismissal when it takes one off the
/// screen), no sheet is shown more than `max` times per window, none inside its cooldown, the global
/// settings hold, and every decision stays byte for byte the same until its `validUntil`.
struct CampaignPropertyTests {
    @Test func capsCooldownsAndBoundariesHold() {
        var shown = 0, capped = 0, cooling = 0, checkedBoundaries = 0
        for seed in UInt64(1)...400 {
            var rng = SplitMix64(seed: seed)
            func rules() -> CampaignRules {
                CampaignRules(
                    schedule: rng.maybe(20) { r in Schedule(start: Campaign.at(r.int(in: -600...600)), end: Campaign.at(r.int(in: 700...4000))) },
                    cooldownSeconds: rng.maybe(60) { $0.int(in: 1...400) },
                    frequency: rng.maybe(70) { r in FrequencyCap(max: r.int(in: 1...3), periodSeconds: r.int(in: 1...900)) })
            }
            let settings = CampaignSettings(
                globalCap: rng.maybe(30) { r in FrequencyCap(max: r.int(in: 1...4), periodSeconds: r.int(in: 1...900)) },
                minIntervalSeconds: rng.maybe(30) { $0.int(in: 1...120) })
            let catalog = Campaign.catalog(offers: rules(), promo: rules(), settings: settings)
            let context = Fixtures.context()
            var state = UserState()
            var now = Campaign.at(0)
            var showing: String? = nil
            var log: [String: [Timestamp]] = [:]  // every impression, never pruned
            var dismissed: [String: Timestamp] = [:]
            var allCards: [Timestamp] = []

            func apply(_ event: UserEvent) { _ = SheetPolicy.apply(event, to: &state, catalog: catalog, now: now) }
            for _ in 0..<120 {
                switch rng.int(in: 0...9) {
                case 0...3: now = now.adding(seconds: rng.int(in: 0...120))
                case 4: now = Timestamp(millisecondsSince1970: now.millisecondsSince1970 + Int64(rng.int(in: 1...999)))
                case 5, 6: apply(.count(rng.pick(["offers", "promo"]), rng.int(in: 0...3)))
                case 7, 8:
                    if let sheet = showing {
                        apply(.dismiss(sheet, rng.pick([.swipe, .closeButton, .programmatic])))
                        dismissed[sheet] = now
                        showing = nil
                    }
                default: break
                }
                let decision = SheetPolicy.decide(catalog: catalog, state: state, context: context, now: now)
                if let until = decision.validUntil {
                    checkedBoundaries += 1
                    #expect(until > now)
                    let later = Timestamp(
                        millisecondsSince1970: rng.int(in: 0...1) == 0
                            ? until.millisecondsSince1970 - 1
                            : Int64(rng.int(in: Int(now.millisecondsSince1970)...Int(until.millisecondsSince1970 - 1))))
                    #expect(SheetPolicy.decide(catalog: catalog, state: state, context: context, now: later).jsonBytes() == decision.jsonBytes())
                } else {
                    let later = now.adding(seconds: rng.int(in: 1...5000))
                    #expect(SheetPolicy.decide(catalog: catalog, state: state, context: context, now: later).jsonBytes() == decision.jsonBytes())
                }
                let presented = decision.reason == .cardsAvailable ? decision.sheet?.id : nil
                capped += decision.held.filter { $0.reason == .frequencyCapped || $0.reason == .globalCap }.count
                cooling += decision.held.filter { $0.reason == .coolingDown }.count
                guard presented != showing else { continue }
                if let old = showing {
                    apply(.dismiss(old, .programmatic))
                    dismissed[old] = now
                }
                showing = presented
                guard let sheet = presented, let rules = catalog[sheet]?.campaign else { continue }
                state.campaign.recordImpression(of: sheet, at: now, keepSeconds: catalog.longestImpressionPeriod)
                log[sheet, default: []].append(now)
                allCards.append(now)
                shown += 1
                if let f = rules.frequency {
                    let inWindow = log[sheet]!.filter { $0.adding(seconds: f.periodSeconds) > now }.count
                    #expect(inWindow <= f.max, "seed \(seed): \(sheet) shown \(inWindow) times in \(f.periodSeconds) s")
                }
                if let c = rules.cooldownSeconds, let d = dismissed[sheet] {
                    #expect(now >= d.adding(seconds: c), "seed \(seed): \(sheet) shown inside its cooldown")
                }
                if let cap = settings.globalCap {
                    #expect(allCards.filter { $0.adding(seconds: cap.periodSeconds) > now }.count <= cap.max, "seed \(seed): global cap")
                }
                if let interval = settings.minIntervalSeconds, allCards.count > 1 {
                    #expect(now >= allCards[allCards.count - 2].adding(seconds: interval), "seed \(seed): minimum interval")
                }
                if let schedule = rules.schedule {
                    #expect(schedule.start.map { now >= $0 } ?? true && schedule.end.map { now < $0 } ?? true)
                }
            }
        }
        #expect(shown > 500 && capped > 200 && cooling > 200 && checkedBoundaries > 2000, "\(shown) \(capped) \(cooling) \(checkedBoundaries)")
    }
}

/// Keeping only each sheet's newest `Catalog.impressionsKeptPerSheet` impressions changes no decision:
/// a client that reports impressions whatever the caps say (so the log is longer than any cap), and
/// at random moments the decision from the pruned state equals the one from the full log.
struct ImpressionPruningTests {
    @Test func keepingTheNewestImpressionsDecidesAsTheWholeLog() {
        var compared = 0, capped = 0
        for seed in UInt64(1)...120 {
            var rng = SplitMix64(seed: seed)
            func rules() -> CampaignRules {
                CampaignRules(frequency: rng.maybe(80) { r in FrequencyCap(max: r.int(in: 1...4), periodSeconds: r.int(in: 1...900)) })
            }
            let settings = CampaignSettings(
                globalCap: rng.maybe(50) { r in FrequencyCap(max: r.int(in: 1...5), periodSeconds: r.int(in: 1...900)) },
                minIntervalSeconds: rng.maybe(20) { $0.int(in: 1...120) })
            let catalog = Campaign.catalog(offers: rules(), promo: rules(), settings: settings)
            let context = Fixtures.context()
            var pruned = UserState(), whole = UserState()
            var now = Campaign.at(0)
            for sheet in ["offers", "promo"] {
                _ = SheetPolicy.apply(.count(sheet, 2), to: &pruned, catalog: catalog, now: now)
                _ = SheetPolicy.apply(.count(sheet, 2), to: &whole, catalog: catalog, now: now)
            }
            for _ in 0..<50 {
                now = now.adding(seconds: rng.int(in: 0...60))
                let sheet = rng.pick(["offers", "promo"])
                pruned.campaign.recordImpression(
                    of: sheet, at: now, keepSeconds: catalog.longestImpressionPeriod, keepNewest: catalog.impressionsKeptPerSheet)
                whole.campaign.recordImpression(of: sheet, at: now, keepSeconds: 1_000_000)
                // A dismissal now and then, so that caps (not "on screen") decide.
                if rng.int(in: 0...1) == 0 {
                    _ = SheetPolicy.apply(.dismiss(sheet, .programmatic), to: &pruned, catalog: catalog, now: now)
                    _ = SheetPolicy.apply(.dismiss(sheet, .programmatic), to: &whole, catalog: catalog, now: now)
                }
                #expect(pruned.campaign.impressions.values.allSatisfy { $0.count <= catalog.impressionsKeptPerSheet })
                for _ in 0..<2 {
                    let at = now.adding(seconds: rng.int(in: 0...900))
                    let a = SheetPolicy.decide(catalog: catalog, state: pruned, context: context, now: at)
                    let b = SheetPolicy.decide(catalog: catalog, state: whole, context: context, now: at)
                    #expect(a.jsonBytes() == b.jsonBytes(), "seed \(seed)")
                    compared += 1
                    capped += a.held.filter { $0.reason == .frequencyCapped || $0.reason == .globalCap }.count
                }
            }
        }
        #expect(compared == 12_000 && capped > 2_000, "\(compared) \(capped)")
    }
}
