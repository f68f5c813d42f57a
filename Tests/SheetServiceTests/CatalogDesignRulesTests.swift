import Foundation
import Testing

/// The catalog refuses what the design documents forbid and warns about what they advise against.
struct CatalogDesignRulesTests {
    /// 003 strict: "no top-right close button"; 000 action sheets: "Don't use an explicit button for dismissal".
    @Test(arguments: [
        #"{"kind":"informational","style":"strict","title":"T","screen":"s","dismissAffordance":"closeIcon"}"#,
        #"{"kind":"action","screen":"s","dismissAffordance":"cancelButton"}"#,
        #"{"kind":"action","screen":"s","dismissAffordance":"closeIcon"}"#,
    ])
    func forbiddenCombinationsAre400NamingTheField(body: String) throws {
        let live = try LiveService()
        let r = try live.put("/v1/sheets/bad", body)
        #expect(r.status == 400)
        let params = r.json["invalid-params"] as? [[String: Any]] ?? []
        #expect(params.map { $0["name"] as? String } == ["dismissAffordance"], "\(r.text)")
        #expect(try live.get("/v1/sheets/bad").status == 404)
    }

    /// 003: "Don't use .flexible for forms / inputs" is accepted with a warning in every catalog answer, never stored.
    @Test func flexibleInputSheetIsAcceptedWithAWarning() throws {
        let live = try LiveService()
        let r = try live.put("/v1/sheets/otp", #"{"kind":"input","screen":"s"}"#)
        #expect(r.status == 201)
        let warnings = r.json["warnings"] as? [[String: Any]] ?? []
        #expect(warnings.map { $0["field"] as? String } == ["style"], "\(r.text)")
        #expect((warnings.first?["reason"] as? String)?.contains("003") == true)
        #expect((try live.get("/v1/sheets/otp").json["warnings"] as? [Any])?.count == 1)
        let listed = try live.get("/v1/sheets").json["sheets"] as? [[String: Any]] ?? []
        #expect((listed.first?["warnings"] as? [Any])?.count == 1)
        // A strict input sheet has none.
        let strict = try live.put("/v1/sheets/otp", #"{"kind":"input","style":"strict","title":"Code","screen":"s"}"#)
        #expect(strict.status == 200)
        #expect((strict.json["warnings"] as? [Any])?.isEmpty == true)
    }
}
