import Foundation
import MicroHTTP
import SQLiteStore
import SheetPolicy
import Synchronization
import TestSupport
import Testing

@testable import SheetService

/// A clock the test moves: starts at the wall clock plus `offsetSeconds`, and `advance` steps it.
final class SteppedClock: Sendable {
    private let offsetMillis = Atomic<Int64>(0)
    init(offsetSeconds: Int64 = 0) { offsetMillis.store(offsetSeconds * 1000, ordering: .relaxed) }
    func advance(millis: Int64) { offsetMillis.add(millis, ordering: .relaxed) }
    var now: @Sendable () -> Timestamp {
        { [self] in
            Timestamp(millisecondsSince1970: Timestamp.now().millisecondsSince1970 + offsetMillis.load(ordering: .relaxed))
        }
    }
}

/// Issue 15 over real HTTP: the campaign members of a definition, the new query parameters, and
/// decisions that change at a time boundary (cache, stream, long-poll).
@Suite(.serialized) struct CampaignPolicyAPITests {
    static let campaignOffers = #"""
        {"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,
         "schedule":{"start":"2026-12-01T10:00:00.250+01:00","end":"2027-01-01T00:00:00Z"},"cooldownSeconds":3600,
         "frequency":{"max":3,"periodSeconds":86400},
         "audience":{"platforms":["ios"],"idioms":["phone","pad"],"minAppVersion":"2.10.0","maxAppVersion":"3",
                     "locales":["de","fr-CH"],"segments":["beta"]}}
        """#

    /// The members are stored and answered in canonical form (times in UTC); absent ones are null.
    @Test func campaignMembersRoundTrip() throws {
        let live = try LiveService()
        let put = try live.put("/v1/sheets/offers", Self.campaignOffers)
        #expect(put.status == 200 || put.status == 201, "\(put.text)")
        let got = try live.get("/v1/sheets/offers").json
        let schedule = got["schedule"] as? [String: Any]
        #expect(schedule?["start"] as? String == "2026-12-01T09:00:00.250Z")
        #expect(schedule?["end"] as? String == "2027-01-01T00:00:00Z")
        #expect(got["cooldownSeconds"] as? Int == 3600)
        #expect((got["frequency"] as? [String: Any])?["max"] as? Int == 3)
        let audience = got["audience"] as? [String: Any]
        #expect(audience?["platforms"] as? [String] == ["ios"] && audience?["locales"] as? [String] == ["de", "fr-CH"])
        #expect(audience?["minAppVersion"] as? String == "2.10.0" && audience?["segments"] as? [String] == ["beta"])
        #expect(live.service.catalog["offers"]?.campaign.cooldownSeconds == 3600)
        // A sheet without rules answers them as null; the list carries the same members.
        _ = try live.put("/v1/sheets/plain", #"{"kind":"cards","screen":"home","containerId":"c"}"#)
        let plain = try live.get("/v1/sheets/plain").json
        for member in ["schedule", "cooldownSeconds", "frequency", "audience"] { #expect(plain[member] is NSNull, "\(member)") }
        #expect(try live.get("/v1/sheets").text.contains(#""cooldownSeconds":3600"#))
        // null and {} are "no rule".
        _ = try live.put("/v1/sheets/plain", #"{"kind":"cards","screen":"home","containerId":"c","schedule":{},"audience":null}"#)
        #expect(live.service.catalog["plain"]?.campaign == CampaignRules.none)
    }

    /// Every invalid member is named in invalid-params.
    @Test(arguments: [
        (#""schedule":{"start":"2026-12-01 09:00"}"#, "schedule.start"),
        (#""schedule":{"end":"2026-12-01T09:00:00"}"#, "schedule.end"),
        (#""schedule":{"start":"2026-12-01T09:00:00Z","end":"2026-12-01T09:00:00Z"}"#, "schedule.end"),
        (#""schedule":{"start":"2026-12-01T10:00:00+01:00","end":"2026-12-01T09:00:00Z"}"#, "schedule.end"),
        (#""schedule":{"begin":"2026-12-01T09:00:00Z"}"#, "schedule.begin"),
        (#""schedule":"tomorrow""#, "schedule"),
        (#""cooldownSeconds":0"#, "cooldownSeconds"),
        (#""cooldownSeconds":1.5"#, "cooldownSeconds"),
        (#""frequency":{"max":0,"periodSeconds":60}"#, "frequency.max"),
        (#""frequency":{"max":1,"periodSeconds":0}"#, "frequency.periodSeconds"),
        (#""frequency":{"max":1}"#, "frequency.periodSeconds"),
        (#""audience":{"platforms":["web"]}"#, "audience.platforms"),
        (#""audience":{"platforms":[]}"#, "audience.platforms"),
        (#""audience":{"idioms":"phone"}"#, "audience.idioms"),
        (#""audience":{"minAppVersion":"2.x"}"#, "audience.minAppVersion"),
        (#""audience":{"minAppVersion":"2.10","maxAppVersion":"2.9.9"}"#, "audience.maxAppVersion"),
        (#""audience":{"locales":["de_CH"]}"#, "audience.locales"),
        (#""audience":{"segments":["no spaces"]}"#, "audience.segments"),
        (#""audience":{"country":"CH"}"#, "audience.country"),
    ])
    func campaignValidationNamesTheField(member: String, field: String) throws {
        let live = try LiveService()
        let r = try live.put("/v1/sheets/bad", #"{"kind":"cards","screen":"home","containerId":"c","# + member + "}")
        #expect(r.status == 400)
        #expect(r.header("Content-Type")?.hasPrefix("application/problem+json") == true)
        let params = r.json["invalid-params"] as? [[String: Any]] ?? []
        #expect(params.contains { $0["name"] as? String == field }, "\(r.text)")
    }

    /// A campaign member on a sheet that is not a card sheet is a 400 naming it.
    @Test func campaignMembersOnlyOnCardSheets() throws {
        let live = try LiveService()
        let r = try live.put(
            "/v1/sheets/about",
            #"{"kind":"informational","screen":"home","cooldownSeconds":60,"frequency":{"max":1,"periodSeconds":60},"schedule":null}"#)
        #expect(r.status == 400)
        let names = (r.json["invalid-params"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names == ["cooldownSeconds", "frequency"], "\(r.text)")
    }

    /// `appVersion` and `locale` are validated, and contexts differing in them do not share a cached answer.
    @Test func appVersionAndLocaleQuery() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        _ = try live.put(
            "/v1/sheets/offers",
            #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,"audience":{"minAppVersion":"2.10","locales":["de"]}}"#
        )
        _ = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count":2}"#)
        let base = "/v1/users/u1/decision?\(Fixtures.homeAccountsIOS)"
        for (query, name) in [("&appVersion=2.x", "appVersion"), ("&locale=de_CH", "locale"), ("&appVersion=1&appVersion=2", "appVersion")] {
            let r = try live.get(base + query)
            #expect(r.status == 400)
            #expect((r.json["invalid-params"] as? [[String: Any]])?.contains { $0["name"] as? String == name } == true, "\(r.text)")
        }
        #expect(try live.get(base).json["reason"] as? String == "not-in-audience")
        #expect(try live.get(base + "&appVersion=2.10.1&locale=de-CH").json["reason"] as? String == "cards-available")
        #expect(try live.get(base + "&appVersion=2.9.1&locale=de-CH").json["reason"] as? String == "not-in-audience")
        #expect(try live.get(base + "&appVersion=2.10.1&locale=fr").json["reason"] as? String == "not-in-audience")
        let held = try live.get(base + "&appVersion=2.10.1").json
        #expect((held["held"] as? [[String: Any]])?.first?["reason"] as? String == "not-in-audience")
        // The stream route shares the query parsing.
        let stream = try live.get("/v1/users/u1/decision/stream?\(Fixtures.homeAccountsIOS)&locale=1")
        #expect(stream.status == 400)
    }

    /// A dismissal starts the cooldown at the service's clock; the decision says so until it ends.
    @Test func cooldownAfterDismissal() throws {
        let clock = SteppedClock()
        let live = try LiveService(clock: clock.now)
        try Fixtures.install(live)
        _ = try live.put(
            "/v1/sheets/offers", #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,"cooldownSeconds":600}"#
        )
        let base = "/v1/users/u1/decision?\(Fixtures.homeAccountsIOS)"
        _ = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count":2}"#)
        #expect(try live.get(base).json["reason"] as? String == "cards-available")
        _ = try live.post("/v1/users/u1/dismissals", #"{"sheetId":"offers","method":"swipe"}"#)
        _ = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count":3}"#)  // releases the latch
        #expect(try live.get(base).json["reason"] as? String == "cooling-down")
        clock.advance(millis: 599_000)
        #expect(try live.get(base).json["reason"] as? String == "cooling-down")
        clock.advance(millis: 1_000)
        #expect(try live.get(base).json["reason"] as? String == "cards-available")
    }

    /// A cached decision is not served past its time boundary: at the schedule's start it changes,
    /// and so does its ETag.
    @Test func cachedDecisionChangesAtTheScheduleBoundary() throws {
        let clock = SteppedClock()
        let live = try LiveService(clock: clock.now)
        try Fixtures.install(live)
        let start = clock.now().adding(seconds: 3600)
        _ = try live.put(
            "/v1/sheets/offers",
            #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,"schedule":{"start":"\#(start.rfc3339)"}}"#)
        _ = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count":2}"#)
        let base = "/v1/users/u1/decision?\(Fixtures.homeAccountsIOS)"
        let first = try live.get(base)
        #expect(first.json["reason"] as? String == "outside-schedule")
        let etag = try #require(first.header("ETag"))
        // Cached meanwhile (same ETag, 304 on a conditional GET).
        clock.advance(millis: 3_599_000)
        #expect(try live.get(base, headers: ["If-None-Match": etag]).status == 304)
        clock.advance(millis: 1_000)
        let after = try live.get(base, headers: ["If-None-Match": etag])
        #expect(after.status == 200 && after.json["reason"] as? String == "cards-available")
        #expect(after.header("ETag") != etag)
    }

    /// An open stream pushes the new decision at the boundary, with no write; so does a waiting long-poll.
    @Test func streamAndLongPollPushAtTheBoundary() throws {
        let clock = SteppedClock()
        let live = try LiveService(clock: clock.now)
        try Fixtures.install(live)
        let start = clock.now().adding(seconds: 2)
        _ = try live.put(
            "/v1/sheets/offers",
            #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,"schedule":{"start":"\#(start.rfc3339)"}}"#)
        _ = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count":2}"#)
        let token = live.userToken("u1")
        let stream = try EventStreamClient(
            port: live.server.port, target: "/v1/users/u1/decision/stream?\(Fixtures.homeAccountsIOS)",
            headers: [("Authorization", "Bearer \(token)")])
        _ = try stream.next()  // retry hint
        let first = try #require(try stream.next())
        #expect(first.data?.contains(#""reason":"outside-schedule""#) == true)
        let etag = try #require(first.id)
        // A long-poll on the same decision, waiting up to 10 s.
        let poll = try live.get(
            "/v1/users/u1/decision?\(Fixtures.homeAccountsIOS)", headers: ["If-None-Match": etag, "Prefer": "wait=10"])
        #expect(poll.status == 200 && poll.json["reason"] as? String == "cards-available")
        #expect(clock.now() >= start)
        let pushed = try #require(try stream.next(timeoutMilliseconds: 4000))
        #expect(pushed.event == "decision" && pushed.data?.contains(#""reason":"cards-available""#) == true)
        #expect(clock.now() >= start)
        // No further boundary: no further event.
        #expect(stream.drain(quietMilliseconds: 300).filter { $0.event == "decision" }.isEmpty)
    }
}

/// The timer behind streams and long-polls at a decision's time boundary: one per boundary, none
/// without one, none after cancel.
struct BoundaryTimerTests {
    final class Fired: Sendable {
        let count = Atomic<Int>(0)
        func fire() { count.add(1, ordering: .relaxed) }
    }

    @Test func firesOncePerBoundaryAndNotAfterCancel() throws {
        let timer = BoundaryTimer()
        let fired = Fired()
        let now = Timestamp(millisecondsSince1970: 1_000_000)
        let at = now.millisecondsSince1970 + 100
        // Armed twice for the same instant: one timer.
        timer.arm(at: Timestamp(millisecondsSince1970: at), now: now) { fired.fire() }
        timer.arm(at: Timestamp(millisecondsSince1970: at), now: now) { fired.fire() }
        #expect(timer.armedAt == Timestamp(millisecondsSince1970: at))
        Thread.sleep(forTimeInterval: 0.4)
        #expect(fired.count.load(ordering: .relaxed) == 1)
        #expect(timer.armedAt == nil)
        // A moved boundary replaces the earlier one (which then fires as a no-op).
        timer.arm(at: Timestamp(millisecondsSince1970: at), now: now) { fired.fire() }
        timer.arm(at: Timestamp(millisecondsSince1970: at + 100), now: now) { fired.fire() }
        Thread.sleep(forTimeInterval: 0.4)
        #expect(fired.count.load(ordering: .relaxed) == 2)
        // No boundary disarms; cancel stops a pending one.
        timer.arm(at: Timestamp(millisecondsSince1970: at), now: now) { fired.fire() }
        timer.arm(at: nil, now: now) { fired.fire() }
        timer.arm(at: Timestamp(millisecondsSince1970: at), now: now) { fired.fire() }
        timer.cancel()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(fired.count.load(ordering: .relaxed) == 2)
        #expect(timer.armedAt == nil)
    }
}
