import Foundation
import SheetService
import Testing

/// End-to-end over real HTTP: a live server on port 0, a temporary SQLite file.
@Suite(.serialized) struct APITests {
    /// The card-count lifecycle of the seed document: cards arrive, present, dismiss, same count stays
    /// closed, count changes, present again, count 0 closes.
    @Test func cardCountLifecycle() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let token = live.userToken("alice")
        let decision = "/v1/users/alice/decision?\(Fixtures.homeAccountsIOS)"

        var r = try live.get(decision, token: token)
        #expect(r.status == 200)
        #expect(r.json["present"] as? Bool == false)
        #expect(r.json["reason"] as? String == "no-cards")

        r = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#, token: token)
        #expect(r.status == 200)
        #expect(r.json["changed"] as? Bool == true)
        #expect(r.json["applied"] as? Bool == true)
        #expect(r.json["filter"] as? String == "")

        r = try live.get(decision, token: token)
        #expect(r.json["present"] as? Bool == true)
        #expect(r.json["reason"] as? String == "cards-available")
        #expect((r.json["sheet"] as? [String: Any])?["id"] as? String == "offers")
        #expect(r.json["yielded"] as? [String] == [])

        r = try live.post("/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"swipe"}"#, token: token)
        #expect(r.status == 200)
        #expect(r.json["latched"] as? Bool == true)

        r = try live.get(decision, token: token)
        #expect(r.json["present"] as? Bool == false)
        #expect(r.json["reason"] as? String == "latched")

        r = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#, token: token)
        #expect(r.json["changed"] as? Bool == false)
        #expect(try live.get(decision, token: token).json["reason"] as? String == "latched")

        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":3}"#, token: token)
        r = try live.get(decision, token: token)
        #expect(r.json["present"] as? Bool == true)
        #expect(r.json["reason"] as? String == "cards-available")

        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":0}"#, token: token)
        r = try live.get(decision, token: token)
        #expect(r.json["present"] as? Bool == false)
        #expect(r.json["reason"] as? String == "no-cards")
    }

    /// A higher-priority card sheet wins; the other yields and is listed.
    @Test func priorityYields() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        _ = try live.put("/v1/users/bob/containers/offers-home/count", #"{"count":1}"#)
        _ = try live.put("/v1/users/bob/containers/reminders/count", #"{"count":4}"#)
        let r = try live.get("/v1/users/bob/decision?\(Fixtures.homeAccountsIOS)")
        #expect((r.json["sheet"] as? [String: Any])?["id"] as? String == "offers")
        #expect(r.json["yielded"] as? [String] == ["reminders"])
        // A sheet that names a tab is not presented when the context gives none.
        let noTab = try live.get("/v1/users/bob/decision?screen=home&platform=ios")
        #expect(noTab.json["present"] as? Bool == false)
    }

    /// A nested sheet pushed over the card sheet is presented on top; dismissing it returns to the card sheet.
    @Test func nestedSheetOverCards() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        _ = try live.put("/v1/users/carol/containers/offers-home/count", #"{"count":1}"#)
        var r = try live.post("/v1/users/carol/presentations", #"{"sheetId":"offer-detail","mode":"push","parentSheetId":"offers"}"#)
        #expect(r.status == 200)
        #expect(r.json["stack"] as? [String] == ["offers", "offer-detail"])
        r = try live.get("/v1/users/carol/decision?\(Fixtures.homeAccountsIOS)")
        #expect(r.json["reason"] as? String == "stack")
        #expect((r.json["sheet"] as? [String: Any])?["id"] as? String == "offer-detail")
        #expect((r.json["stack"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["offers", "offer-detail"])
        r = try live.post("/v1/users/carol/dismissals", #"{"sheetId":"offer-detail","method":"closeButton"}"#)
        #expect(r.json["latched"] as? Bool == false)
        r = try live.get("/v1/users/carol/decision?\(Fixtures.homeAccountsIOS)")
        #expect((r.json["sheet"] as? [String: Any])?["id"] as? String == "offers")
    }

    /// A late report (seq at or below the last applied) never undoes a newer one.
    @Test func staleSequenceIsNotApplied() throws {
        let live = try LiveService()
        var r = try live.put("/v1/users/dan/containers/c1/count", #"{"count":5,"seq":10}"#)
        #expect(r.json["applied"] as? Bool == true)
        r = try live.put("/v1/users/dan/containers/c1/count", #"{"count":1,"seq":9}"#)
        #expect(r.json["applied"] as? Bool == false)
        #expect(r.json["count"] as? Int == 5)
        r = try live.put("/v1/users/dan/containers/c1/count", #"{"count":1,"seq":10}"#)
        #expect(r.json["applied"] as? Bool == false)
        r = try live.put("/v1/users/dan/containers/c1/count", #"{"count":7,"seq":11,"filter":"vip"}"#)
        #expect(r.json["applied"] as? Bool == true)
        #expect(r.json["filter"] as? String == "vip")
        let state = try live.get("/v1/users/dan/state").json
        let containers = state["containers"] as? [[String: Any]] ?? []
        #expect(containers.count == 2)
        #expect(containers.first?["count"] as? Int == 5)
        #expect(containers.first?["seq"] as? Int == 10)
    }

    /// An event id already processed is answered with the first outcome and not applied again.
    @Test func eventIdsAreIdempotent() throws {
        let live = try LiveService()
        let first = try live.put("/v1/users/erin/containers/c1/count", #"{"count":3,"eventId":"e-1"}"#)
        #expect(first.json["changed"] as? Bool == true)
        let retry = try live.put("/v1/users/erin/containers/c1/count", #"{"count":9,"eventId":"e-1"}"#)
        #expect(retry.status == 200)
        #expect(retry.body == first.body)
        let state = try live.get("/v1/users/erin/state").json
        #expect((state["containers"] as? [[String: Any]])?.first?["count"] as? Int == 3)
    }

    /// The ETag is strong and derived from the bytes: If-None-Match gives 304; an event that leaves
    /// the decision unchanged leaves the tag; one that changes it changes the tag.
    @Test func etagAndNotModified() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let path = "/v1/users/fay/decision?\(Fixtures.homeAccountsIOS)"
        _ = try live.put("/v1/users/fay/containers/offers-home/count", #"{"count":1}"#)
        let first = try live.get(path)
        let tag = try #require(first.header("ETag"))
        #expect(tag.hasPrefix("\"") && !tag.hasPrefix("W/"))
        let notModified = try live.get(path, headers: ["If-None-Match": tag])
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
        _ = try live.put("/v1/users/fay/containers/unrelated/count", #"{"count":4}"#)
        #expect(try live.get(path).header("ETag") == tag)
        _ = try live.put("/v1/users/fay/containers/offers-home/count", #"{"count":0}"#)
        let changed = try live.get(path, headers: ["If-None-Match": tag])
        #expect(changed.status == 200)
        #expect(changed.header("ETag") != tag)
    }

    /// Content heights are stored per sheet and platform and shape the content variant.
    @Test func contentHeightRoundTrip() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        var r = try live.put("/v1/users/gus/sheets/offers/content-height", #"{"height":312.5,"platform":"ios"}"#)
        #expect(r.status == 200)
        #expect(r.json["height"] as? Double == 312.5)
        r = try live.put("/v1/users/gus/sheets/nope/content-height", #"{"height":312.5,"platform":"ios"}"#)
        #expect(r.status == 404)
        let state = try live.get("/v1/users/gus/state").json
        #expect((state["contentHeights"] as? [[String: Any]])?.first?["platform"] as? String == "ios")
    }

    /// The catalog: create 201, replace 200, list by id, read, delete 204, then 404.
    @Test func catalogCRUD() throws {
        let live = try LiveService()
        var r = try live.put("/v1/sheets/zeta", Fixtures.offers)
        #expect(r.status == 201)
        #expect(r.json["priority"] as? Int == 10)
        #expect(r.json["size"] is NSNull)
        r = try live.put("/v1/sheets/zeta", Fixtures.reminders)
        #expect(r.status == 200)
        _ = try live.put("/v1/sheets/alpha", Fixtures.offerDetail)
        r = try live.get("/v1/sheets", token: live.userToken("anyone"))
        #expect(r.status == 200)
        #expect((r.json["sheets"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["alpha", "zeta"])
        #expect(try live.get("/v1/sheets/zeta").json["containerId"] as? String == "reminders")
        #expect(try live.request("DELETE", "/v1/sheets/zeta").status == 204)
        #expect(try live.get("/v1/sheets/zeta").status == 404)
        #expect(try live.request("DELETE", "/v1/sheets/zeta").status == 404)
    }

    /// Validation names the field in invalid-params.
    @Test(arguments: [
        (#"{"kind":"cards","screen":"home"}"#, "containerId"),
        (#"{"kind":"sheet","screen":"home"}"#, "kind"),
        (#"{"kind":"input","style":"strict","screen":"s"}"#, "title"),
        (#"{"kind":"input","screen":"s","colour":"red"}"#, "colour"),
        (#"{"id":"other","kind":"input","screen":"s"}"#, "id"),
        (#"{"kind":"input","screen":"s","priority":1.5}"#, "priority"),
        (#"{"kind":"input","screen":"s","cornerRadius":1e300}"#, "cornerRadius"),
        (#"{"kind":"input","screen":"s","priority":1,"priority":2}"#, "priority"),
        (#"{"kind":"input","screen":"s","primaryButton":{"label":""}}"#, "primaryButton.label"),
    ])
    func catalogValidationNamesTheField(body: String, field: String) throws {
        let live = try LiveService()
        let r = try live.put("/v1/sheets/bad", body)
        #expect(r.status == 400)
        #expect(r.header("Content-Type")?.hasPrefix("application/problem+json") == true)
        let params = r.json["invalid-params"] as? [[String: Any]] ?? []
        #expect(params.contains { $0["name"] as? String == field }, "\(r.text)")
    }

    /// Error statuses of the event and decision routes.
    @Test func errorStatuses() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        // 400: malformed JSON, wrong type, unknown member, invalid id, missing and invalid query parameters
        #expect(try live.put("/v1/users/u/containers/c/count", #"{"count":"#).status == 400)
        #expect(try live.put("/v1/users/u/containers/c/count", #"{"count":"two"}"#).status == 400)
        #expect(try live.put("/v1/users/u/containers/c/count", #"{"count":1,"extra":true}"#).status == 400)
        #expect(try live.put("/v1/users/u/containers/c/count", #"{"count":-1}"#).status == 400)
        #expect(try live.put("/v1/users/u%20x/containers/c/count", #"{"count":1}"#).status == 400)
        let missing = try live.get("/v1/users/u/decision?screen=home")
        #expect(missing.status == 400)
        #expect((missing.json["invalid-params"] as? [[String: Any]])?.first?["name"] as? String == "platform")
        #expect(try live.get("/v1/users/u/decision?screen=home&platform=web").status == 400)
        #expect(try live.get("/v1/users/u/decision?screen=home&platform=ios&keyboard=yes").status == 400)
        #expect(try live.get("/v1/users/u/decision?screen=home&platform=ios&viewportHeight=nan").status == 400)
        // 404: unknown sheet in a dismissal / presentation; unknown route
        #expect(try live.post("/v1/users/u/dismissals", #"{"sheetId":"ghost","method":"swipe"}"#).status == 404)
        #expect(try live.post("/v1/users/u/presentations", #"{"sheetId":"offers","mode":"push","parentSheetId":"ghost"}"#).status == 404)
        #expect(try live.get("/v1/nothing").status == 404)
        // 405 with Allow
        let wrongMethod = try live.request("POST", "/v1/users/u/decision")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow")?.contains("GET") == true)
        // 415: no JSON content type
        let plain = try live.request("PUT", "/v1/users/u/containers/c/count", json: nil, headers: ["Content-Type": "text/plain"])
        #expect(plain.status == 415)
        // 400: enum value unknown
        #expect(try live.post("/v1/users/u/dismissals", #"{"sheetId":"offers","method":"shake"}"#).status == 400)
    }

    /// Each auth failure: none, malformed, expired, not yet valid, wrong signature, alg none,
    /// another user's path, a user token writing the catalog.
    @Test func authFailures() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let path = "/v1/users/alice/decision?\(Fixtures.homeAccountsIOS)"
        let none = try live.get(path, token: nil)
        #expect(none.status == 401)
        #expect(none.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        #expect(try live.get(path, token: "not-a-jwt").status == 401)
        #expect(try live.get(path, token: live.userToken("alice", ttl: -3600)).status == 401)

        let valid = live.userToken("alice")
        let parts = valid.split(separator: ".").map(String.init)
        let forged = parts[0] + "." + parts[1] + "." + String(parts[2].reversed())
        #expect(try live.get(path, token: forged).status == 401)
        let algNone = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + "."
        #expect(try live.get(path, token: algNone).status == 401)
        let otherSecret = TokenVerifierFactory.token(sub: "alice", secret: "another-secret")
        #expect(try live.get(path, token: otherSecret).status == 401)
        let future = TokenVerifierFactory.token(sub: "alice", secret: LiveService.jwtSecret, nbfOffset: 3600)
        #expect(try live.get(path, token: future).status == 401)

        #expect(try live.get(path, token: valid).status == 200)
        #expect(try live.get("/v1/users/bob/decision?\(Fixtures.homeAccountsIOS)", token: valid).status == 403)
        #expect(try live.get("/v1/users/bob/state", token: valid).status == 403)
        #expect(try live.request("DELETE", "/v1/users/bob", token: valid).status == 403)
        #expect(try live.request("DELETE", "/v1/users/alice", token: valid).status == 204)
        #expect(try live.put("/v1/sheets/x", Fixtures.offers, token: valid).status == 403)
        #expect(try live.request("DELETE", "/v1/sheets/offers", token: valid).status == 403)
        #expect(try live.get("/v1/sheets/offers", token: valid).status == 200)
        // Ops endpoints need no token.
        for ops in ["/healthz", "/readyz", "/metrics", "/openapi.yaml"] {
            #expect(try live.get(ops, token: nil).status == 200, "\(ops)")
        }
    }

    /// Erasing a user removes everything stored for them; erasing an unknown user is fine.
    @Test func deleteUserErasesState() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        _ = try live.put("/v1/users/hal/containers/offers-home/count", #"{"count":1}"#)
        _ = try live.post("/v1/users/hal/dismissals", #"{"sheetId":"offers","method":"swipe"}"#)
        #expect(try live.request("DELETE", "/v1/users/hal").status == 204)
        let state = try live.get("/v1/users/hal/state").json
        #expect((state["containers"] as? [Any])?.isEmpty == true)
        #expect((state["latches"] as? [Any])?.isEmpty == true)
        #expect(try live.request("DELETE", "/v1/users/never-seen").status == 204)
    }

    /// Ops endpoints: health, readiness, Prometheus metrics, the spec.
    @Test func opsEndpoints() throws {
        let live = try LiveService()
        #expect(try live.get("/healthz").json["status"] as? String == "ok")
        #expect(try live.get("/readyz").json["status"] as? String == "ready")
        let spec = try live.get("/openapi.yaml")
        #expect(spec.header("Content-Type")?.hasPrefix("application/yaml") == true)
        #expect(spec.text.contains("openapi: 3.1"))
        _ = try live.get("/v1/sheets")
        let metrics = try live.get("/metrics").text
        #expect(metrics.contains("sheetd_build_info"))
        #expect(metrics.contains("sheetd_database_errors_total 0"))
        live.service.beginDraining()
        #expect(try live.get("/readyz").status == 503)
    }

    /// The decision cache's hits and misses in /metrics: the first decision and the first after a
    /// write are computed, a repeat is a hit.
    @Test func metricsCountDecisionCacheHitsAndMisses() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let token = live.userToken("alice")
        let decision = "/v1/users/alice/decision?\(Fixtures.homeAccountsIOS)"
        func counts() throws -> (hits: Int, misses: Int) {
            let lines = try live.get("/metrics").text.split(separator: "\n")
            func value(_ name: String) -> Int? {
                lines.first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
            }
            return (try #require(value("sheetd_decision_cache_hits_total")), try #require(value("sheetd_decision_cache_misses_total")))
        }
        let before = try counts()
        _ = try live.get(decision, token: token)  // computed
        _ = try live.get(decision, token: token)  // cached
        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#, token: token)
        _ = try live.get(decision, token: token)  // computed again after the write
        let after = try counts()
        #expect(after.hits - before.hits == 1)
        #expect(after.misses - before.misses == 2)
    }
}

/// Builds tokens the server did not issue (other secrets, nbf in the future).
enum TokenVerifierFactory {
    static func token(sub: String, secret: String, nbfOffset: Int = 0) -> String {
        let now = Int(time(nil))
        let header = b64(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = b64(Array(#"{"sub":"\#(sub)","exp":\#(now + 7200),"nbf":\#(now + nbfOffset)}"#.utf8))
        let mac = HMACSHA256Helper.mac(Array("\(header).\(payload)".utf8), key: Array(secret.utf8))
        return "\(header).\(payload).\(b64(mac))"
    }

    static func b64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=", with: "")
    }
}
