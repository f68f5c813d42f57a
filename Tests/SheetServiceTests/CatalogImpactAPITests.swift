import Foundation
import Testing

/// `POST /v1/catalog/impact` over HTTP on both backends: stored users, a proposed catalog, and the
/// decisions that would change, against the cases worked out by hand in `CatalogImpactTests`.
@Suite struct CatalogImpactAPITests {
    static let offers = #"{"kind":"cards","size":"content","screen":"home","containerId":"c"}"#
    /// `offers` in large, and `promo` (priority 10, wins over offers) on container `p`.
    static let proposed = """
        {"sheets": [
          {"id": "offers", "kind": "cards", "size": "large", "screen": "home", "containerId": "c"},
          {"id": "promo", "kind": "cards", "size": "content", "screen": "home", "containerId": "p", "priority": 10}
        ]}
        """

    func count(_ live: LiveService, _ user: String, _ container: String, _ n: Int) throws {
        let r = try live.put("/v1/users/\(user)/containers/\(container)/count", #"{"count": \#(n)}"#)
        #expect(r.status == 200, "\(r.status) \(r.text)")
    }

    /// Stored: a (c=2), b (c=2, p=1), d (p=1), e (c=2, dismissed: latched). By hand, on iOS and
    /// Android: a variant-changed, b sheet-changed (offers to promo), d shown (promo), e unchanged.
    @Test(arguments: LiveService.backends)
    func theChangedDecisionsAreCountedByKind(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        #expect(try live.put("/v1/sheets/offers", Self.offers).status == 201)
        try count(live, "a", "c", 2)
        try count(live, "b", "c", 2)
        try count(live, "b", "p", 1)
        try count(live, "d", "p", 1)
        try count(live, "e", "c", 2)
        #expect(try live.post("/v1/users/e/dismissals", #"{"sheetId":"offers","method":"swipe"}"#).status == 200)
        let tag = try live.get("/v1/sheets").header("ETag")

        let r = try live.post("/v1/catalog/impact", Self.proposed)
        #expect(r.status == 200, "\(r.text)")
        let body = r.json
        let sample = try #require(body["sample"] as? [String: Any])
        #expect(sample["users"] as? Int == 4)
        #expect(sample["requestedUsers"] as? Int == 1000)
        #expect(sample["complete"] as? Bool == true)
        #expect(["a", "b", "d", "e"].contains(sample["from"] as? String ?? ""), "a random stored user starts the sample")
        #expect(body["decisions"] as? Int == 8)
        #expect(body["changed"] as? Int == 6)
        let sheets = try #require(body["sheets"] as? [String: [String]])
        #expect(sheets == ["added": ["promo"], "removed": [], "changed": ["offers"]])
        let contexts = try #require(body["contexts"] as? [[String: Any]])
        #expect(contexts.map { "\($0["screen"]!)/\($0["platform"]!)" } == ["home/android", "home/ios"])

        let changes = try #require(body["changes"] as? [[String: Any]])
        #expect(changes.map { $0["change"] as? String } == ["shown", "hidden", "sheet-changed", "variant-changed", "detents-changed"])
        let byKind = Dictionary(uniqueKeysWithValues: changes.map { ($0["change"] as! String, $0) })
        #expect(
            byKind.mapValues { $0["decisions"] as? Int } == ["shown": 2, "hidden": 0, "sheet-changed": 2, "variant-changed": 2, "detents-changed": 0])
        let shown = try #require(byKind["shown"]?["examples"] as? [[String: Any]])
        #expect(shown.count == 2 && shown.allSatisfy { $0["userId"] as? String == "d" })
        let before = try #require(shown.first?["before"] as? [String: Any])
        let after = try #require(shown.first?["after"] as? [String: Any])
        #expect(before["present"] as? Bool == false && before["sheetId"] is NSNull)
        #expect(after["present"] as? Bool == true && after["sheetId"] as? String == "promo" && after["variant"] as? String == "content")
        let variant = try #require((byKind["variant-changed"]?["examples"] as? [[String: Any]])?.first)
        #expect(variant["userId"] as? String == "a")
        #expect((variant["before"] as? [String: Any])?["variant"] as? String == "content")
        #expect((variant["after"] as? [String: Any])?["variant"] as? String == "large")

        let transitions = try #require(body["transitions"] as? [[String: Any]])
        #expect(transitions.count == 2)
        #expect(transitions.contains { $0["from"] as? String == "offers" && $0["to"] as? String == "promo" && $0["decisions"] as? Int == 2 })
        #expect(transitions.contains { $0["from"] is NSNull && $0["to"] as? String == "promo" && $0["decisions"] as? Int == 2 })

        // It never writes: the catalog and its tag are as before.
        let after2 = try live.get("/v1/sheets")
        #expect(after2.header("ETag") == tag)
        #expect((after2.json["sheets"] as? [[String: Any]])?.count == 1)
    }

    /// `from` and `users` choose the sample: the users in id order from `from`, wrapping to the first.
    @Test(arguments: LiveService.backends)
    func theSampleStartsAtFromAndWraps(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        #expect(try live.put("/v1/sheets/offers", Self.offers).status == 201)
        for user in ["u1", "u2", "u3"] { try count(live, user, "c", 2) }
        let r = try live.post("/v1/catalog/impact?from=u3&users=2", Self.proposed)
        #expect(r.status == 200, "\(r.text)")
        let sample = try #require(r.json["sample"] as? [String: Any])
        #expect(sample["users"] as? Int == 2)
        #expect(sample["from"] as? String == "u3")
        let changes = try #require(r.json["changes"] as? [[String: Any]])
        let examples = changes.flatMap { ($0["examples"] as? [[String: Any]]) ?? [] }.compactMap { $0["userId"] as? String }
        #expect(Set(examples) == ["u3", "u1"], "u3, then from the first id: u1")
        #expect(r.json["decisions"] as? Int == 4)
    }

    @Test func badRequestsAndNonAdminsAreRefused() throws {
        let live = try LiveService()
        let user = try live.post("/v1/catalog/impact", Self.proposed, token: live.userToken("a"))
        #expect(user.status == 403)
        let invalid = try live.post("/v1/catalog/impact", #"{"sheets": [{"id": "x", "kind": "cards"}], "extra": 1}"#)
        #expect(invalid.status == 400)
        let names = (invalid.json["invalid-params"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        #expect(names.contains("extra") && names.contains("sheets[0].screen") && names.contains("sheets[0].containerId"))
        for query in ["users=0", "users=10001", "users=x", "from=%20", "limit=3"] {
            let r = try live.post("/v1/catalog/impact?\(query)", Self.proposed)
            #expect(r.status == 400, "\(query): \(r.status)")
        }
        let notJSON = try live.request("POST", "/v1/catalog/impact", headers: ["Content-Type": "text/plain"])
        #expect(notJSON.status == 415)
        // No stored users: an empty sample, still an answer.
        let empty = try live.post("/v1/catalog/impact", Self.proposed)
        #expect(empty.status == 200)
        #expect((empty.json["sample"] as? [String: Any])?["users"] as? Int == 0)
        #expect(empty.json["decisions"] as? Int == 0)
    }
}
