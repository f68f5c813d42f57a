import Concurrency
import Foundation
import MicroHTTP
import SheetService
import TestSupport
import Testing

/// Optimistic concurrency on the catalog: `GET /v1/sheets` answers the catalog's `ETag`, and catalog
/// writes with `If-Match` are refused with 412 when someone else changed the catalog first.
@Suite struct CatalogIfMatchTests {
    static let info = #"{"kind":"informational","screen":"home"}"#

    /// Two editors read the same catalog; the first write wins, the second (same If-Match) is 412 and
    /// changes nothing; it succeeds after reading again. Every write answers the catalog's new tag.
    @Test(arguments: LiveService.backends)
    func theSecondOfTwoEditorsGets412(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        #expect(try live.put("/v1/sheets/a", Self.info).status == 201)
        let read = try live.get("/v1/sheets")
        let tag = try #require(read.header("ETag"))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\""))
        #expect(try live.get("/v1/sheets?limit=1").header("ETag") == tag, "every page answers the catalog's tag")

        let first = try live.request(
            "PUT", "/v1/sheets/a", json: #"{"kind":"informational","screen":"home","title":"First"}"#, headers: ["If-Match": tag])
        #expect(first.status == 200)
        let newTag = try #require(first.header("ETag"))
        #expect(newTag != tag)
        #expect(try live.get("/v1/sheets").header("ETag") == newTag)

        let second = try live.request(
            "PUT", "/v1/sheets/a", json: #"{"kind":"informational","screen":"home","title":"Second"}"#, headers: ["If-Match": tag])
        #expect(second.status == 412)
        #expect(second.json["type"] as? String == "urn:sheetd:problem:precondition-failed")
        #expect(second.text.contains(newTag.replacingOccurrences(of: "\"", with: "\\\"")))
        #expect(try live.get("/v1/sheets/a").json["title"] as? String == "First")
        // A new sheet and a delete are catalog writes too.
        #expect(try live.request("PUT", "/v1/sheets/b", json: Self.info, headers: ["If-Match": tag]).status == 412)
        #expect(try live.request("DELETE", "/v1/sheets/a", headers: ["If-Match": tag]).status == 412)
        #expect(try live.get("/v1/sheets/b").status == 404)

        let again = try #require(try live.get("/v1/sheets").header("ETag"))
        let retried = try live.request(
            "PUT", "/v1/sheets/a", json: #"{"kind":"informational","screen":"home","title":"Second"}"#, headers: ["If-Match": again])
        #expect(retried.status == 200)
        let deleted = try live.request("DELETE", "/v1/sheets/a", headers: ["If-Match": try #require(retried.header("ETag"))])
        #expect(deleted.status == 204)
        // Without If-Match a write is unconditional (as before); `*` matches any catalog.
        #expect(try live.put("/v1/sheets/c", Self.info).status == 201)
        #expect(try live.request("PUT", "/v1/sheets/d", json: Self.info, headers: ["If-Match": "*"]).status == 201)
        #expect(try live.request("PUT", "/v1/sheets/e", json: Self.info, headers: ["If-Match": "W/\(tag)"]).status == 412)
    }

    /// Settings are part of the catalog's tag: `PUT /v1/settings` honours If-Match, and a settings
    /// change moves the tag that sheet writes compare with.
    @Test func settingsWritesHonourIfMatch() throws {
        let live = try LiveService()
        let tag = try #require(try live.get("/v1/settings").header("ETag"))
        #expect(try live.get("/v1/sheets").header("ETag") == tag)
        let settings = #"{"globalCap":{"max":3,"periodSeconds":86400},"minIntervalSeconds":60}"#
        let changed = try live.request("PUT", "/v1/settings", json: settings, headers: ["If-Match": tag])
        #expect(changed.status == 200, "\(changed.text)")
        #expect(changed.header("ETag") != tag)
        #expect(try live.request("PUT", "/v1/settings", json: settings, headers: ["If-Match": tag]).status == 412)
        #expect(try live.request("PUT", "/v1/sheets/a", json: Self.info, headers: ["If-Match": tag]).status == 412)
    }

    /// Racing conditional writers with the same tag: exactly one wins.
    @Test func exactlyOneOfManyRacingWritersWins() throws {
        let live = try LiveService()
        let tag = try #require(try live.get("/v1/sheets").header("ETag"))
        let statuses = Locked<[Int]>([])
        let port = live.server.port
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            let headers = [
                ("Authorization", "Bearer \(LiveService.adminToken)"), ("Content-Type", "application/json"), ("If-Match", tag),
            ]
            let status = (try? fetch(port, "PUT", "/v1/sheets/race\(i)", headers: headers, body: Array(Self.info.utf8)).status) ?? -1
            statuses.withLock { $0.append(status) }
        }
        let all = statuses.withLock { $0 }
        #expect(all.filter { $0 == 201 }.count == 1, "\(all)")
        #expect(all.filter { $0 == 412 }.count == 7, "\(all)")
    }
}
