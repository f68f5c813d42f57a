import Crypto
import Dispatch
import Foundation
import MicroHTTP
import SheetPolicy
import Synchronization
import TestSupport
import Testing

/// A clock the test moves by the millisecond.
final class MillisecondClock: Sendable {
    private let ms: Mutex<Int64>
    init(_ ms: Int64) { self.ms = Mutex(ms) }
    func set(_ value: Int64) { ms.withLock { $0 = value } }
    var now: @Sendable () -> Timestamp { { [self] in Timestamp(millisecondsSince1970: ms.withLock { $0 }) } }
}

/// Issue 27 over real HTTP, on SQLite and (when the test PostgreSQL is there) PostgreSQL: the
/// experiment in the decision, exposure once, conversions and their window, results, validation,
/// running experiments, stop with a winner, pins and /metrics.
@Suite(.serialized) struct ExperimentAPITests {
    /// 2026-12-01T08:00:00Z in milliseconds.
    static let start: Int64 = 1_796_112_000_000
    static let window: Int64 = 604_800

    static func offers(status: String = "running", weights: (Int, Int, Int) = (20, 40, 40), winner: String? = nil) -> String {
        """
        {"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,
         "experiment":{"id":"offers-copy-2026-12","status":"\(status)",\(winner.map { "\"winner\":\"\($0)\"," } ?? "")
          "arms":[{"id":"control","weight":\(weights.0),"holdout":true},
                  {"id":"a","weight":\(weights.1),"payload":{"copy":"A"}},
                  {"id":"b","weight":\(weights.2),"overrides":{"size":"large"},"payload":{"copy":"B"}}],
          "conversionWindowSeconds":\(window)}}
        """
    }

    /// The first user id `prefix-N` whose bucket falls in `range` (arms of 20/40/40: control below 2000, a below 6000, b above).
    static func user(_ prefix: String, in range: Range<Int>) -> String {
        for i in 0... {
            let id = "\(prefix)-\(i)"
            if range.contains(Int(SHA256.bigEndianPrefix(of: "offers-copy-2026-12:\(id)") % 10_000)) { return id }
        }
        fatalError("unreachable")
    }

    static func arm(_ results: LiveService.Response, _ id: String) -> [String: Any] {
        ((results.json["arms"] as? [[String: Any]]) ?? []).first { $0["id"] as? String == id } ?? [:]
    }

    /// Polls the results until `done` holds (exposures are written off the decision's path).
    static func results(_ live: LiveService, until done: (LiveService.Response) -> Bool) throws -> LiveService.Response {
        var r = try live.get("/v1/experiments/offers-copy-2026-12/results")
        for _ in 0..<100 where !done(r) {
            Thread.sleep(forTimeInterval: 0.02)
            r = try live.get("/v1/experiments/offers-copy-2026-12/results")
        }
        return r
    }

    static func invalidNames(_ r: LiveService.Response) -> [String] {
        ((r.json["invalid-params"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
    }

    /// The decision presents arm b (overrides and payload) and holds the holdout; repeated and
    /// concurrent decisions expose each user once; impressions count for the arm; a conversion one
    /// millisecond before the window closes counts for the arm, one at the closing millisecond is
    /// unattributed; a replayed conversion counts once.
    @Test(arguments: LiveService.backends) func exposureConversionsAndResults(_ postgres: Bool) throws {
        let clock = MillisecondClock(Self.start)
        let live = try LiveService(postgres: postgres, clock: clock.now)
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 201)
        let inB = Self.user("b", in: 6000..<10_000), held = Self.user("h", in: 0..<2000)
        for user in [inB, held] {
            #expect(try live.put("/v1/users/\(user)/containers/offers-home/count", #"{"count":2}"#).status == 200)
        }

        var r = try live.get("/v1/users/\(inB)/decision?\(Fixtures.homeAccountsIOS)")
        #expect(r.status == 200)
        let sheet = r.json["sheet"] as? [String: Any]
        let experiment = sheet?["experiment"] as? [String: Any]
        #expect(experiment?["id"] as? String == "offers-copy-2026-12")
        #expect(experiment?["arm"] as? String == "b")
        #expect((experiment?["payload"] as? [String: Any])?["copy"] as? String == "B")
        #expect(sheet?["variant"] as? String == "large")
        #expect(((r.json["stack"] as? [[String: Any]])?.first?["experiment"] as? [String: Any])?["arm"] as? String == "b")
        #expect((r.json["trace"] as? [String])?.contains { $0.contains("arm 'b', assigned by bucket") } == true)

        r = try live.get("/v1/users/\(held)/decision?\(Fixtures.homeAccountsIOS)")
        #expect(r.json["present"] as? Bool == false)
        #expect(r.json["reason"] as? String == "holdout")
        #expect((r.json["held"] as? [[String: Any]])?.first?["reason"] as? String == "holdout")

        // Repeated and concurrent decisions of the same users.
        for _ in 0..<3 { _ = try live.get("/v1/users/\(inB)/decision?\(Fixtures.homeAccountsIOS)") }
        let failures = Atomic<Int>(0)
        let port = live.server.port
        DispatchQueue.concurrentPerform(iterations: 12) { i in
            let user = i % 2 == 0 ? inB : held
            let context = i % 3 == 0 ? Fixtures.homeAccountsIOS : "screen=home&tab=accounts&platform=android"
            let headers = [("Authorization", "Bearer \(LiveService.adminToken)")]
            if (try? fetch(port, "GET", "/v1/users/\(user)/decision?\(context)", headers: headers).status) != 200 {
                failures.add(1, ordering: .relaxed)
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        r = try Self.results(live) { Self.arm($0, "b")["exposedUsers"] as? Int == 1 && Self.arm($0, "control")["exposedUsers"] as? Int == 1 }
        Thread.sleep(forTimeInterval: 0.2)
        r = try live.get("/v1/experiments/offers-copy-2026-12/results")
        #expect(Self.arm(r, "b")["exposedUsers"] as? Int == 1)
        #expect(Self.arm(r, "control")["exposedUsers"] as? Int == 1)
        #expect(Self.arm(r, "a")["exposedUsers"] as? Int == 0)

        // An impression counts for the arm.
        #expect(try live.post("/v1/users/\(inB)/impressions", #"{"sheetId":"offers"}"#).status == 200)

        // The window: exposed at `start`, it closes at start + 604800 s (excluded).
        let token = live.userToken(inB)
        clock.set(Self.start + Self.window * 1000 - 1)
        r = try live.post("/v1/users/\(inB)/conversions", #"{"sheetId":"offers","eventId":"c-1","goal":"signup"}"#, token: token)
        #expect(r.status == 200)
        #expect(r.json["arm"] as? String == "b")
        #expect(r.json["counted"] as? Bool == true)
        #expect(r.json["goal"] as? String == "signup")
        r = try live.post("/v1/users/\(inB)/conversions", #"{"sheetId":"offers","eventId":"c-1","goal":"signup"}"#, token: token)
        #expect(r.header("Idempotent-Replayed") == "true")
        clock.set(Self.start + Self.window * 1000)
        r = try live.post("/v1/users/\(inB)/conversions", #"{"sheetId":"offers","eventId":"c-2"}"#, token: token)
        #expect(r.json["arm"] is NSNull)
        #expect(r.json["counted"] as? Bool == true)
        // Never exposed: unattributed too; unknown sheet: 404; another user's token: 403.
        #expect(try live.post("/v1/users/stranger/conversions", #"{"sheetId":"offers"}"#).json["arm"] is NSNull)
        #expect(try live.post("/v1/users/\(inB)/conversions", #"{"sheetId":"nope"}"#).status == 404)
        #expect(try live.post("/v1/users/\(inB)/conversions", #"{"sheetId":"offers"}"#, token: live.userToken("other")).status == 403)
        #expect(Self.invalidNames(try live.post("/v1/users/\(inB)/conversions", #"{"sheetId":"offers","goal":"a b"}"#)) == ["goal"])

        r = try live.get("/v1/experiments/offers-copy-2026-12/results")
        #expect(r.status == 200)
        #expect(r.json["status"] as? String == "running")
        let b = Self.arm(r, "b")
        #expect(b["impressions"] as? Int == 1)
        #expect(b["convertedUsers"] as? Int == 1)
        #expect(b["conversions"] as? Int == 1)
        #expect(b["conversionRate"] as? Double == 1)
        #expect(b["weight"] as? Int == 40)
        #expect(Self.arm(r, "control")["holdout"] as? Bool == true)
        #expect(r.json["unattributed"] as? Int == 2)
        let comparisons = r.json["comparisons"] as? [[String: Any]] ?? []
        #expect(comparisons.map { $0["arm"] as? String } == ["a", "b"])
        #expect(comparisons.last?["baseline"] as? String == "control")
        #expect(comparisons.last?["difference"] as? Double == 1)
        #expect((r.json["sampleRatio"] as? [String: Any])?["mismatch"] as? Bool == false)

        // /metrics: per experiment and arm.
        let metrics = try live.get("/metrics", token: nil).text
        #expect(metrics.contains(#"sheetd_experiment_exposures_total{experiment="offers-copy-2026-12",arm="b"} 1"#))
        #expect(metrics.contains(#"sheetd_experiment_exposures_total{experiment="offers-copy-2026-12",arm="control"} 1"#))
        #expect(metrics.contains(#"sheetd_experiment_conversions_total{experiment="offers-copy-2026-12",arm="b"} 1"#))
        #expect(metrics.contains(#"sheetd_experiment_unattributed_conversions_total{experiment="offers-copy-2026-12"} 2"#))

        // Admin only; unknown experiments are 404.
        #expect(try live.get("/v1/experiments/offers-copy-2026-12/results", token: token).status == 403)
        #expect(try live.get("/v1/experiments/nope/results").status == 404)
    }

    /// One user cannot inflate the results: an exposed user's conversions stop counting for the arm
    /// at the per-user cap, an unexposed user's stop counting as unattributed, the answers say
    /// `capped`, and the results state the cap (the probe raised an arm from 172 to 773).
    @Test(arguments: LiveService.backends) func conversionsAreCappedPerUser(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 201)
        let inB = Self.user("b", in: 6000..<10_000)
        #expect(try live.put("/v1/users/\(inB)/containers/offers-home/count", #"{"count":2}"#).status == 200)
        #expect(try live.get("/v1/users/\(inB)/decision?\(Fixtures.homeAccountsIOS)").status == 200)
        _ = try Self.results(live) { Self.arm($0, "b")["exposedUsers"] as? Int == 1 }
        var answers: [[String: Any]] = []
        for user in [inB, "stranger"] {
            for i in 0..<30 {
                answers.append(try live.post("/v1/users/\(user)/conversions", #"{"sheetId":"offers","eventId":"c-\#(i)"}"#).json)
            }
        }
        #expect(answers.filter { $0["counted"] as? Bool == true }.count == 20)
        #expect(answers.filter { $0["capped"] as? Bool == true }.count == 40)
        #expect(answers[9]["arm"] as? String == "b" && answers[10]["capped"] as? Bool == true && answers[10]["counted"] as? Bool == false)
        let r = try live.get("/v1/experiments/offers-copy-2026-12/results")
        #expect(Self.arm(r, "b")["conversions"] as? Int == 10)
        #expect(Self.arm(r, "b")["convertedUsers"] as? Int == 1)
        #expect(r.json["unattributed"] as? Int == 10)
        #expect(r.json["conversionCapPerUser"] as? Int == 10)
    }

    /// Two users in the same state and the same arm get byte-identical decision bodies and ETags
    /// (one interned answer), so an experiment does not make every body unique.
    @Test func usersOfOneArmShareTheirDecisionBytes() throws {
        let live = try LiveService()
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 201)
        let first = Self.user("b", in: 6000..<7000), second = Self.user("b", in: 9000..<10_000)
        var bodies: [String] = [], tags: [String?] = []
        for user in [first, second] {
            #expect(try live.put("/v1/users/\(user)/containers/offers-home/count", #"{"count":2}"#).status == 200)
            let r = try live.get("/v1/users/\(user)/decision?\(Fixtures.homeAccountsIOS)")
            #expect(((r.json["sheet"] as? [String: Any])?["experiment"] as? [String: Any])?["arm"] as? String == "b")
            bodies.append(r.text)
            tags.append(r.header("ETag"))
        }
        #expect(bodies[0] == bodies[1])
        #expect(tags[0] != nil && tags[0] == tags[1])
    }

    /// An experiment's identity is fixed from its first exposure, whichever route tries to change it
    /// (the probe's three ways round the in-place 409): PUT without the experiment then with new arms,
    /// DELETE and the id on another sheet, restoring an older revision; each is a 409 naming the
    /// experiment and changes nothing. A stopped experiment's id is not reused with other arms.
    @Test(arguments: LiveService.backends) func anExposedExperimentsIdentityCannotBeRewritten(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        // Revision with arms 40/30/30 before any exposure (changing it then is fine), then 20/40/40.
        #expect(try live.put("/v1/sheets/offers", Self.offers(weights: (40, 30, 30))).status == 201)
        let older = try #require(try live.get("/v1/catalog/revisions?limit=1").json["revisions"] as? [[String: Any]]).first?["revision"] as? Int
        let plain = #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10}"#
        #expect(try live.put("/v1/sheets/offers", plain).status == 200)
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 200, "other arms before any exposure")
        let inB = Self.user("b", in: 6000..<10_000)
        #expect(try live.put("/v1/users/\(inB)/containers/offers-home/count", #"{"count":2}"#).status == 200)
        #expect(try live.get("/v1/users/\(inB)/decision?\(Fixtures.homeAccountsIOS)").status == 200)
        _ = try Self.results(live) { Self.arm($0, "b")["exposedUsers"] as? Int == 1 }

        func refused(_ r: LiveService.Response, _ route: String) {
            #expect(r.status == 409, "\(route): \(r.status) \(r.text)")
            #expect(r.json["type"] as? String == "urn:sheetd:problem:experiment-running", "\(route)")
            #expect((r.json["detail"] as? String)?.contains("offers-copy-2026-12") == true, "\(route): \(r.text)")
        }
        #expect(try live.put("/v1/sheets/offers", plain).status == 200, "removing the experiment ends it")
        refused(try live.put("/v1/sheets/offers", Self.offers(weights: (10, 45, 45))), "PUT without, then with new arms")
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 200, "the same identity again")
        #expect(try live.request("DELETE", "/v1/sheets/offers").status == 204)
        refused(try live.put("/v1/sheets/elsewhere", Self.offers()), "the id on another sheet")
        #expect(try live.get("/v1/sheets/elsewhere").status == 404, "the refused PUT changed nothing")
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 201)
        let restore = try live.request("POST", "/v1/catalog/revisions/\(try #require(older))/restore")
        refused(restore, "restore of a revision with other arms")
        #expect(
            ((try live.get("/v1/sheets/offers").json["experiment"] as? [String: Any])?["arms"] as? [[String: Any]])?.first?["weight"] as? Int
                == 20)
        // A conversion still counts for arm b (not under arms that no longer exist).
        let conversion = try live.post("/v1/users/\(inB)/conversions", #"{"sheetId":"offers"}"#)
        #expect(conversion.json["arm"] as? String == "b")

        // Stopped: its id keeps its arms too, exposure or not.
        #expect(try live.put("/v1/sheets/quiet", Self.offers().replacingOccurrences(of: "offers-copy-2026-12", with: "quiet-1")).status == 201)
        #expect(
            try live.put(
                "/v1/sheets/quiet", Self.offers(status: "stopped").replacingOccurrences(of: "offers-copy-2026-12", with: "quiet-1")
            ).status == 200)
        let reused = try live.put(
            "/v1/sheets/quiet", Self.offers(weights: (30, 35, 35)).replacingOccurrences(of: "offers-copy-2026-12", with: "quiet-1"))
        #expect(reused.status == 409 && (reused.json["detail"] as? String)?.contains("stopped") == true, "\(reused.text)")
    }

    /// Invalid experiments are 400 with invalid-params naming the member.
    @Test func validation() throws {
        let live = try LiveService()
        func names(_ experiment: String) throws -> [String] {
            let r = try live.put(
                "/v1/sheets/offers", #"{"kind":"cards","screen":"home","containerId":"offers-home","experiment":"# + experiment + "}")
            #expect(r.status == 400, "\(experiment): \(r.status) \(r.text)")
            return Self.invalidNames(r)
        }
        let base = #""id":"e","status":"running","conversionWindowSeconds":60"#
        #expect(try names(#"{\#(base),"arms":[{"id":"x","weight":1,"holdout":true},{"id":"y","weight":1,"holdout":true}]}"#) == ["experiment.arms"])
        #expect(try names(#"{\#(base),"arms":[{"id":"x","weight":0},{"id":"y","weight":1}]}"#) == ["experiment.arms[0].weight"])
        #expect(try names(#"{\#(base),"arms":[{"id":"x","weight":1.5},{"id":"y","weight":1}]}"#) == ["experiment.arms[0].weight"])
        #expect(try names(#"{\#(base),"arms":[{"id":"x","weight":1},{"id":"x","weight":1}]}"#) == ["experiment.arms[1].id"])
        #expect(try names(#"{\#(base),"arms":[{"id":"x","weight":1}]}"#) == ["experiment.arms"])
        #expect(
            try names(#"{\#(base),"arms":[{"id":"x","weight":1,"overrides":{"screen":"more"}},{"id":"y","weight":1}]}"#) == [
                "experiment.arms[0].overrides.screen"
            ])
        #expect(
            try names(#"{\#(base),"arms":[{"id":"x","weight":1,"overrides":{"size":"huge"}},{"id":"y","weight":1}]}"#) == [
                "experiment.arms[0].overrides.size"
            ])
        // An override that breaks a rule on a member it did not set (strict needs a title): named, not dropped.
        let strict = try live.put(
            "/v1/sheets/offers",
            #"{"kind":"cards","screen":"home","containerId":"offers-home","experiment":{\#(base),"arms":[{"id":"x","weight":1},{"id":"y","weight":1,"overrides":{"style":"strict"}}]}}"#
        )
        #expect(strict.status == 400, "\(strict.text)")
        #expect(Self.invalidNames(strict) == ["experiment.arms[1].overrides"], "\(strict.text)")
        #expect(strict.text.contains("title"), "the rule is not named: \(strict.text)")
        #expect(try names(#"{\#(base),"arms":[{"id":"x","weight":1,"payload":[1]},{"id":"y","weight":1}]}"#) == ["experiment.arms[0].payload"])
        let big = String(repeating: "x", count: 4100)
        #expect(
            try names(#"{\#(base),"arms":[{"id":"x","weight":1,"payload":{"t":"\#(big)"}},{"id":"y","weight":1}]}"#) == ["experiment.arms[0].payload"]
        )
        #expect(try names(#"{\#(base),"winner":"x","arms":[{"id":"x","weight":1},{"id":"y","weight":1}]}"#) == ["experiment.winner"])
        #expect(
            try names(
                #"{"id":"e","status":"stopped","conversionWindowSeconds":60,"winner":"z","arms":[{"id":"x","weight":1},{"id":"y","weight":1}]}"#) == [
                    "experiment.winner"
                ])
        #expect(try names(#"{\#(base),"arms":[{"id":"x","weight":1,"colour":"red"},{"id":"y","weight":1}]}"#) == ["experiment.arms[0].colour"])
        #expect(
            try names(#"{"id":"e","status":"paused","arms":[{"id":"x","weight":1},{"id":"y","weight":1}]}"#).sorted() == [
                "experiment.conversionWindowSeconds", "experiment.status",
            ])
        // Nested sheets take experiments too; overrides of presentation members are fine; the canonical JSON carries it.
        let ok = try live.put(
            "/v1/sheets/detail",
            #"{"kind":"informational","screen":"home","experiment":{\#(base),"arms":[{"id":"x","weight":1,"overrides":{"size":"large","primaryButton":{"label":"Go"}}},{"id":"y","weight":3}]}}"#
        )
        #expect(ok.status == 201, "\(ok.text)")
        #expect((ok.json["experiment"] as? [String: Any])?["status"] as? String == "running")
        // An experiment id is one sheet's.
        let taken = try live.put(
            "/v1/sheets/other",
            #"{"kind":"informational","screen":"home","experiment":{\#(base),"arms":[{"id":"x","weight":1},{"id":"y","weight":1}]}}"#)
        #expect(Self.invalidNames(taken) == ["experiment.id"])
    }

    /// A running experiment's arms and weights cannot change (409); stopped with a winner, every
    /// user, the holdout included, gets the winner's overrides and payload, nobody new is exposed,
    /// and the results stay readable.
    @Test(arguments: LiveService.backends) func runningChangesAndStopWithWinner(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 201)
        var r = try live.put("/v1/sheets/offers", Self.offers(weights: (10, 45, 45)))
        #expect(r.status == 409)
        #expect(r.json["type"] as? String == "urn:sheetd:problem:experiment-running")
        #expect((r.json["detail"] as? String)?.contains("reassign") == true)
        // The same arms again (a no-op) are fine.
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 200)

        let held = Self.user("h", in: 0..<2000)
        _ = try live.put("/v1/users/\(held)/containers/offers-home/count", #"{"count":1}"#)
        r = try live.get("/v1/users/\(held)/decision?\(Fixtures.homeAccountsIOS)")
        #expect(r.json["reason"] as? String == "holdout")
        r = try Self.results(live) { Self.arm($0, "control")["exposedUsers"] as? Int == 1 }
        #expect(Self.arm(r, "control")["exposedUsers"] as? Int == 1)

        #expect(try live.put("/v1/sheets/offers", Self.offers(status: "stopped", winner: "b")).status == 200)
        r = try live.get("/v1/users/\(held)/decision?\(Fixtures.homeAccountsIOS)")
        #expect(r.json["present"] as? Bool == true)
        let experiment = (r.json["sheet"] as? [String: Any])?["experiment"] as? [String: Any]
        #expect(experiment?["arm"] as? String == "b")
        #expect((experiment?["payload"] as? [String: Any])?["copy"] as? String == "B")
        #expect((r.json["sheet"] as? [String: Any])?["variant"] as? String == "large")
        let other = Self.user("a", in: 2000..<6000)
        _ = try live.put("/v1/users/\(other)/containers/offers-home/count", #"{"count":1}"#)
        #expect(
            ((try live.get("/v1/users/\(other)/decision?\(Fixtures.homeAccountsIOS)").json["sheet"] as? [String: Any])?["experiment"]
                as? [String: Any])?["arm"] as? String == "b")

        Thread.sleep(forTimeInterval: 0.2)
        r = try live.get("/v1/experiments/offers-copy-2026-12/results")
        #expect(r.status == 200)
        #expect(r.json["status"] as? String == "stopped")
        #expect(r.json["winner"] as? String == "b")
        #expect(Self.arm(r, "a")["exposedUsers"] as? Int == 0, "a stopped experiment exposes nobody")
        #expect(Self.arm(r, "control")["exposedUsers"] as? Int == 1)
    }

    /// A pin puts a QA user in an arm (the decision shows it), leaves them out of the results, and
    /// DELETE gives them their bucket back.
    @Test(arguments: LiveService.backends) func pins(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        #expect(try live.put("/v1/sheets/offers", Self.offers()).status == 201)
        let held = Self.user("h", in: 0..<2000)
        _ = try live.put("/v1/users/\(held)/containers/offers-home/count", #"{"count":1}"#)
        _ = try live.get("/v1/users/\(held)/decision?\(Fixtures.homeAccountsIOS)")
        var r = try Self.results(live) { Self.arm($0, "control")["exposedUsers"] as? Int == 1 }
        #expect(Self.arm(r, "control")["exposedUsers"] as? Int == 1)

        r = try live.put("/v1/experiments/offers-copy-2026-12/pins/\(held)", #"{"arm":"a"}"#)
        #expect(r.status == 200)
        #expect(r.json["arm"] as? String == "a")
        r = try live.get("/v1/users/\(held)/decision?\(Fixtures.homeAccountsIOS)")
        let experiment = (r.json["sheet"] as? [String: Any])?["experiment"] as? [String: Any]
        #expect(experiment?["arm"] as? String == "a", "\(r.text)")
        #expect((r.json["trace"] as? [String])?.contains { $0.contains("pinned for QA") } == true)
        r = try live.get("/v1/experiments/offers-copy-2026-12/results")
        #expect(Self.arm(r, "control")["exposedUsers"] as? Int == 0, "a pinned user is left out")
        #expect(Self.arm(r, "a")["exposedUsers"] as? Int == 0)
        // A pinned user's conversion counts nowhere.
        r = try live.post("/v1/users/\(held)/conversions", #"{"sheetId":"offers"}"#)
        #expect(r.json["counted"] as? Bool == false)
        #expect(try live.get("/v1/experiments/offers-copy-2026-12/results").json["unattributed"] as? Int == 0)

        r = try live.request("DELETE", "/v1/experiments/offers-copy-2026-12/pins/\(held)")
        #expect(r.status == 200)
        r = try live.get("/v1/users/\(held)/decision?\(Fixtures.homeAccountsIOS)")
        #expect(r.json["reason"] as? String == "holdout")
        #expect(Self.arm(try live.get("/v1/experiments/offers-copy-2026-12/results"), "control")["exposedUsers"] as? Int == 1)

        #expect(Self.invalidNames(try live.put("/v1/experiments/offers-copy-2026-12/pins/\(held)", #"{"arm":"zzz"}"#)) == ["arm"])
        #expect(try live.put("/v1/experiments/nope/pins/\(held)", #"{"arm":"a"}"#).status == 404)
        #expect(try live.put("/v1/experiments/offers-copy-2026-12/pins/\(held)", #"{"arm":"a"}"#, token: live.userToken(held)).status == 403)
    }
}
