import Concurrency
import Foundation
import MicroHTTP
import SheetService
import SheetStore
import TestSupport
import Testing

/// Catalog history over HTTP on both backends: revisions of every catalog and settings change, the
/// catalog as it was and what changed, restores (themselves undoable), names instead of tokens,
/// retention, If-Match.
@Suite struct CatalogRevisionTests {
    static let alice = AdminToken(name: "alice", token: "alice-token-0123456789abcdef0123456789")
    static let bob = AdminToken(name: "bob", token: "bob-token-0123456789abcdef0123456789abc")
    static let offers = #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10}"#
    static let info = #"{"kind":"informational","screen":"home","title":"Hello"}"#

    static func revisions(_ live: LiveService, _ query: String = "") throws -> [[String: Any]] {
        let r = try live.get("/v1/catalog/revisions" + query, token: alice.token)
        #expect(r.status == 200, "\(r.text)")
        return r.json["revisions"] as? [[String: Any]] ?? []
    }

    /// The comment is counted as the databases count it (code points): 600 x "e" + U+0301 (600
    /// grapheme clusters, 1 200 code points) is refused with 400 and changes nothing, where before the
    /// sheet changed and its revision was lost; 1 000 code points are kept.
    @Test(arguments: LiveService.backends) func commentsAreCountedAsTheDatabaseCountsThem(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres, adminTokens: [Self.alice])
        let before = try Self.revisions(live).count
        let combining = String(repeating: "e\u{301}", count: 600)
        let r = try live.request(
            "PUT", "/v1/sheets/offers", token: Self.alice.token, json: Self.offers, headers: ["Sheetd-Comment": combining])
        #expect(r.status == 400, "\(r.text)")
        #expect(try live.get("/v1/sheets/offers").status == 404, "the refused change was applied")
        #expect(try Self.revisions(live).count == before)
        let longest = String(repeating: "e\u{301}", count: 500)
        let kept = try live.request(
            "PUT", "/v1/sheets/offers", token: Self.alice.token, json: Self.offers, headers: ["Sheetd-Comment": longest])
        #expect(kept.status == 201, "\(kept.text)")
        #expect(try Self.revisions(live).first?["comment"] as? String == longest)
    }

    /// Each change is a revision, newest first, with the token's name (never the token), the time and
    /// the `Sheetd-Comment`; a revision shows the whole catalog then and what changed from the one before.
    @Test(arguments: LiveService.backends)
    func everyChangeIsARevisionWithWhoWhenAndWhy(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres, adminTokens: [Self.alice, Self.bob])
        let first = try Self.revisions(live)
        #expect(first.count == 1 && first[0]["actor"] as? String == "sheetd", "the catalog as found: \(first)")

        var r = try live.request("PUT", "/v1/sheets/offers", token: Self.alice.token, json: Self.offers, headers: ["Sheetd-Comment": "launch offers"])
        #expect(r.status == 201)
        r = try live.request("PUT", "/v1/sheets/info", token: Self.bob.token, json: Self.info)
        #expect(r.status == 201)
        r = try live.request(
            "PUT", "/v1/sheets/offers", token: Self.bob.token, json: Self.offers.replacingOccurrences(of: "10", with: "30"),
            headers: ["Sheetd-Comment": "offers first"])
        #expect(r.status == 200)
        #expect(try live.request("PUT", "/v1/settings", token: Self.alice.token, json: #"{"globalCap":null,"minIntervalSeconds":60}"#).status == 200)
        #expect(try live.request("DELETE", "/v1/sheets/info", token: LiveService.adminToken).status == 204)
        // The same definition again changes nothing, so no revision.
        #expect(
            try live.request("PUT", "/v1/sheets/offers", token: Self.bob.token, json: Self.offers.replacingOccurrences(of: "10", with: "30")).status
                == 200)

        let list = try Self.revisions(live)
        #expect(list.map { $0["actor"] as? String } == ["admin", "alice", "bob", "bob", "alice", "sheetd"])
        #expect(list.map { $0["comment"] as? String } == [nil, nil, "offers first", nil, "launch offers", "the catalog when revisions began"])
        let numbers = list.compactMap { $0["revision"] as? Int }
        #expect(numbers == numbers.sorted(by: >) && Set(numbers).count == 6)
        #expect(list.allSatisfy { ($0["createdAt"] as? String)?.hasSuffix("Z") == true })
        #expect(!(try live.get("/v1/catalog/revisions", token: Self.alice.token).text.contains("token-")), "no token in the answer")

        // Bob's priority change: the catalog then, and one member changed.
        let bobs = try live.get("/v1/catalog/revisions/\(numbers[2])", token: Self.alice.token)
        #expect(bobs.status == 200)
        let catalog = try #require(bobs.json["catalog"] as? [String: Any])
        let sheets = try #require(catalog["sheets"] as? [[String: Any]])
        #expect(sheets.map { $0["id"] as? String } == ["info", "offers"])
        #expect(sheets[1]["priority"] as? Int == 30)
        let changes = try #require(bobs.json["changes"] as? [String: Any])
        #expect(changes["previousRevision"] as? Int == numbers[3])
        #expect((changes["added"] as? [String]) == [] && (changes["removed"] as? [String]) == [])
        let changed = try #require(changes["changed"] as? [[String: Any]])
        #expect(changed.count == 1 && changed[0]["id"] as? String == "offers" && changed[0]["members"] as? [String] == ["priority"])
        // The delete: removed, and the settings change before it.
        let delete = try live.get("/v1/catalog/revisions/\(numbers[0])", token: Self.alice.token).json["changes"] as? [String: Any]
        #expect(delete?["removed"] as? [String] == ["info"])
        let settings = try live.get("/v1/catalog/revisions/\(numbers[1])", token: Self.alice.token).json["changes"] as? [String: Any]
        #expect(settings?["settingsChanged"] as? Bool == true)
        let added = try live.get("/v1/catalog/revisions/\(numbers[3])", token: Self.alice.token).json["changes"] as? [String: Any]
        #expect(added?["added"] as? [String] == ["info"])
    }

    /// A restore makes the catalog (and settings) those of the old revision, serves them at once, and
    /// is a new revision that can itself be restored away.
    @Test(arguments: LiveService.backends)
    func restoreIsANewRevisionAndCanBeUndone(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres, adminTokens: [Self.alice])
        #expect(try live.put("/v1/sheets/offers", Self.offers).status == 201)
        let good = try #require(try Self.revisions(live).first?["revision"] as? Int)
        #expect(try live.put("/v1/sheets/info", Self.info).status == 201)
        #expect(try live.request("DELETE", "/v1/sheets/offers").status == 204)
        #expect(try live.put("/v1/settings", #"{"globalCap":{"max":1,"periodSeconds":60},"minIntervalSeconds":null}"#).status == 200)
        let bad = try #require(try Self.revisions(live).first?["revision"] as? Int)

        let restore = try live.request(
            "POST", "/v1/catalog/revisions/\(good)/restore", token: Self.alice.token, headers: ["Sheetd-Comment": "back to offers only"])
        #expect(restore.status == 201, "\(restore.text)")
        #expect(restore.json["restoredFrom"] as? Int == good && restore.json["actor"] as? String == "alice")
        let restored = try #require(restore.json["revision"] as? Int)
        #expect(restored > bad)
        #expect(restore.header("ETag") == (try live.get("/v1/sheets").header("ETag")))
        #expect(try live.get("/v1/sheets/offers").status == 200)
        #expect(try live.get("/v1/sheets/info").status == 404)
        #expect(try live.get("/v1/settings").json["globalCap"] is NSNull)
        #expect(try live.get("/v1/users/u1/decision?screen=home&tab=accounts&platform=ios").status == 200)

        // Undo the restore: back to the bad revision's catalog.
        #expect(try live.request("POST", "/v1/catalog/revisions/\(bad)/restore").status == 201)
        #expect(try live.get("/v1/sheets/offers").status == 404)
        #expect(try live.get("/v1/sheets/info").status == 200)
        #expect((try live.get("/v1/settings").json["globalCap"] as? [String: Any])?["max"] as? Int == 1)
        #expect(try Self.revisions(live).first?["restoredFrom"] as? Int == bad)

        #expect(try live.request("POST", "/v1/catalog/revisions/999999/restore").status == 404)
        #expect(try live.get("/v1/catalog/revisions/999999").status == 404)
        #expect(try live.get("/v1/catalog/revisions/zero").status == 400)
    }

    /// Only admin tokens read or restore revisions.
    @Test func usersMayNotReadOrRestoreRevisions() throws {
        let live = try LiveService()
        let user = live.userToken("u1")
        #expect(try live.get("/v1/catalog/revisions", token: user).status == 403)
        #expect(try live.get("/v1/catalog/revisions/1", token: user).status == 403)
        #expect(try live.request("POST", "/v1/catalog/revisions/1/restore", token: user).status == 403)
        #expect(try live.get("/v1/catalog/revisions", token: nil).status == 401)
    }

    /// Pages like `GET /v1/sheets`: `limit`, `after`, `next`; retention keeps the newest N.
    @Test(arguments: LiveService.backends)
    func pagesAndRetention(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres, adminTokens: [Self.alice], catalogRevisionsKept: 5)
        for i in 1...8 { #expect(try live.put("/v1/sheets/s\(i)", Self.info).status == 201) }
        let all = try Self.revisions(live)
        #expect(all.count == 5, "retention keeps 5: \(all.count)")
        var seen: [Int] = []
        var after: Int?
        repeat {
            let page = try live.get("/v1/catalog/revisions?limit=2" + (after.map { "&after=\($0)" } ?? ""), token: Self.alice.token)
            seen += (page.json["revisions"] as? [[String: Any]] ?? []).compactMap { $0["revision"] as? Int }
            after = page.json["next"] as? Int
        } while after != nil && seen.count < 20
        #expect(seen == all.compactMap { $0["revision"] as? Int })
        let oldest = try #require(seen.last)
        #expect(try live.get("/v1/catalog/revisions/\(oldest - 1)", token: Self.alice.token).status == 404)
        #expect(try live.get("/v1/catalog/revisions?limit=0", token: Self.alice.token).status == 400)
        #expect(try live.get("/v1/catalog/revisions?page=2", token: Self.alice.token).status == 400)
        // One rule everywhere: a repeated parameter is refused, as on the decision routes.
        let repeated = try live.get("/v1/catalog/revisions?limit=1&limit=2", token: Self.alice.token)
        #expect(repeated.status == 400 && repeated.text.contains("more than once"), "\(repeated.text)")
    }

    /// Restore honours If-Match: two admins holding the same ETag race to restore; exactly one wins,
    /// the other gets 412 and no revision of its own.
    @Test(arguments: LiveService.backends)
    func racingRestoresWithTheSameETagExactlyOneWins(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres, adminTokens: [Self.alice, Self.bob])
        #expect(try live.put("/v1/sheets/a", Self.info).status == 201)
        #expect(try live.put("/v1/sheets/b", Self.info).status == 201)
        let revisions = try Self.revisions(live).compactMap { $0["revision"] as? Int }
        let tag = try #require(try live.get("/v1/sheets").header("ETag"))
        let statuses = Locked<[Int]>([])
        let port = live.server.port
        let admins = [Self.alice, Self.bob, Self.alice, Self.bob]
        DispatchQueue.concurrentPerform(iterations: admins.count) { i in
            let headers = [("Authorization", "Bearer \(admins[i].token!)"), ("If-Match", tag)]
            let target = revisions[1 + i % 2]
            let status = (try? fetch(port, "POST", "/v1/catalog/revisions/\(target)/restore", headers: headers, body: []).status) ?? -1
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0 }.sorted() == [201, 412, 412, 412])
        #expect(try Self.revisions(live).count == revisions.count + 1)
        // A stale tag on an ordinary write after the restore is refused too.
        #expect(try live.request("PUT", "/v1/sheets/c", json: Self.info, headers: ["If-Match": tag]).status == 412)
    }
}
