import Foundation
import MicroHTTP
import SQLiteKit
import SQLiteStore
import SheetService
import SheetStore
import Testing

@Suite(.serialized) struct StateLimitTests {
    /// Over real HTTP: the container beyond SHEETD_MAX_CONTAINERS_PER_USER is a 409 problem naming the
    /// limit; the stored state is byte for byte unchanged, a retry with the same eventId answers the
    /// same, and the containers already kept still take new counts.
    @Test func containerBeyondTheLimitIs409() throws {
        let live = try LiveService(stateLimits: UserStateLimits(containers: 2))
        for id in ["c1", "c2"] {
            #expect(try live.put("/v1/users/u/containers/\(id)/count", #"{"count":1,"eventId":"e-\#(id)"}"#).status == 200)
        }
        let before = try storedRow(live, "u")
        let stateBefore = try live.get("/v1/users/u/state").text
        for _ in 0..<2 {
            let r = try live.put("/v1/users/u/containers/c3/count", #"{"count":1,"eventId":"e3"}"#)
            #expect(r.status == 409)
            #expect(r.header("Content-Type") == "application/problem+json")
            #expect(r.json["type"] as? String == "urn:sheetd:problem:limit-exceeded")
            #expect(r.json["title"] as? String == ProblemType.limitExceeded.title)
            #expect(r.json["limit"] as? String == "containers-per-user")
            #expect(r.json["maximum"] as? Int == 2)
            #expect(r.header("Idempotent-Replayed") == nil)
        }
        // A filter is another container key.
        #expect(try live.put("/v1/users/u/containers/c1/count", #"{"count":1,"filter":"f"}"#).status == 409)
        #expect(try storedRow(live, "u") == before)
        #expect(try live.get("/v1/users/u/state").text == stateBefore)
        // An event accepted before the limit was reached still replays its first answer.
        let replay = try live.put("/v1/users/u/containers/c2/count", #"{"count":1,"eventId":"e-c2"}"#)
        #expect(replay.status == 200)
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect(try live.put("/v1/users/u/containers/c1/count", #"{"count":5}"#).status == 200)
        #expect(try live.put("/v1/users/other/containers/c3/count", #"{"count":1}"#).status == 200, "limits are per user")
    }

    /// The content height beyond its limit is refused the same way.
    @Test func contentHeightBeyondTheLimitIs409() throws {
        let live = try LiveService(stateLimits: UserStateLimits(contentHeights: 1))
        try Fixtures.install(live)
        #expect(try live.put("/v1/users/u/sheets/offers/content-height", #"{"height":300,"platform":"ios"}"#).status == 200)
        let r = try live.put("/v1/users/u/sheets/offers/content-height", #"{"height":300,"platform":"android"}"#)
        #expect(r.status == 409)
        #expect(r.json["limit"] as? String == "content-heights-per-user")
        #expect(r.json["maximum"] as? Int == 1)
    }

    /// A presentation that would make the stack deeper than allowed is refused; the stack stays as it was.
    @Test func pushBeyondTheStackDepthIs409() throws {
        let live = try LiveService(stateLimits: UserStateLimits(stackDepth: 1))
        try Fixtures.install(live)
        #expect(try live.put("/v1/users/u/containers/offers-home/count", #"{"count":1}"#).status == 200)
        let stateBefore = try live.get("/v1/users/u/state").text
        // Over the card sheet: a stack of two.
        let r = try live.post("/v1/users/u/presentations", #"{"sheetId":"offer-detail","mode":"push","parentSheetId":"offers"}"#)
        #expect(r.status == 409)
        #expect(r.json["limit"] as? String == "stack-depth")
        #expect(r.json["maximum"] as? Int == 1)
        #expect(try live.get("/v1/users/u/state").text == stateBefore)
    }

    private func storedRow(_ live: LiveService, _ userId: String) throws -> SQLiteValue? {
        let db = try Connection(path: live.store.path, flags: [.readOnly])
        defer { db.close() }
        return try db.scalar("SELECT state FROM user_states WHERE user_id = ?1", [.text(userId)])
    }
}
