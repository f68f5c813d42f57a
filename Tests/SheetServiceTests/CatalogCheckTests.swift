import Foundation
import SheetService
import Testing

/// `sheetd catalog check`: a catalog file validated offline with the API's own rules and messages.
@Suite struct CatalogCheckTests {
    /// Invalid definitions, each as the API receives it (without the id, which the path carries).
    static let invalidBodies = [
        #"{"kind":"cards","screen":"home"}"#,
        #"{"kind":"sofa","screen":"home"}"#,
        #"{"kind":"informational"}"#,
        #"{"kind":"informational","screen":"home","size":"huge"}"#,
        #"{"kind":"input","style":"strict","screen":"home"}"#,
        #"{"kind":"informational","screen":"home","containerId":"c"}"#,
        #"{"kind":"informational","screen":"home","primaryButton":{"label":""}}"#,
        #"{"kind":"informational","screen":"home","priority":1.5}"#,
        #"{"kind":"informational","screen":"home","cornerRadius":500}"#,
        #"{"kind":"informational","screen":"home","nonModalUpTo":"content"}"#,
        #"{"kind":"informational","screen":"home","schedule":{"start":"2026-12-01T00:00:00Z"}}"#,
        #"{"kind":"cards","screen":"home","containerId":"c","frequency":{"max":0,"periodSeconds":60}}"#,
        #"{"kind":"cards","screen":"home","containerId":"c","audience":{"platforms":["web"]}}"#,
        #"{"kind":"action","screen":"home","dismissAffordance":"closeIcon"}"#,
        #"{"kind":"input","style":"strict","title":"T","screen":"home","dismissAffordance":"closeIcon"}"#,
        #"{"kind":"informational","screen":"home","bogus":true}"#,
    ]

    private func file(_ entries: [String]) -> [UInt8] { Array(#"{"sheets": [\#(entries.joined(separator: ","))]}"#.utf8) }

    /// Every shape the API refuses is an error of the check, with the API's member names and reasons.
    @Test func refusesWhatTheAPIRefusesWithItsMessages() throws {
        let live = try LiveService()
        for (index, body) in Self.invalidBodies.enumerated() {
            let answer = try live.put("/v1/sheets/bad\(index)", body)
            #expect(answer.status == 400, "\(body): \(answer.status)")
            let params = try #require(answer.json["invalid-params"] as? [[String: String]], "\(body): \(answer.text)")
            let entry = "{\"id\":\"bad\(index)\"," + body.dropFirst()
            let found = CatalogCheck.findings(in: file([entry]))
            let errors = found.filter { $0.severity == .error }
            #expect(errors.count == params.count, "\(body): \(found)")
            for param in params {
                let path = "sheets[0].\(param["name"]!)"
                #expect(
                    errors.contains { $0.path == path && $0.reason == param["reason"] && $0.sheetId == "bad\(index)" },
                    "\(body): no \(path): \(param["reason"]!) in \(errors)")
            }
        }
    }

    /// A valid catalog passes; the design documents' warnings are listed but are not errors.
    @Test func warningsAreNotErrors() throws {
        let found = CatalogCheck.findings(
            in: file([
                #"{"id":"form","kind":"input","screen":"home","inputCount":3,"size":"medium"}"#,
                #"{"id":"offers","kind":"cards","screen":"home","containerId":"offers"}"#,
            ]))
        #expect(!found.isEmpty)
        #expect(found.allSatisfy { $0.severity == .warning && $0.sheetId == "form" })
        #expect(Set(found.map(\.path)) == ["sheets[0].style", "sheets[0].size"])
        #expect(CatalogCheck.findings(in: file([#"{"id":"offers","kind":"cards","screen":"home","containerId":"offers"}"#])).isEmpty)
    }

    /// What only a whole file can get wrong: duplicate ids, entries that are not objects, the catalog limits, bad JSON.
    @Test func wholeFileProblems() throws {
        let info = #"{"id":"a","kind":"informational","screen":"home"}"#
        let duplicate = CatalogCheck.findings(in: file([info, "7", info]))
        #expect(duplicate.map(\.path) == ["sheets[1]", "sheets[2].id"])
        #expect(duplicate[1].reason == "appears twice (first at sheets[0])")
        let many = (0..<4).map { #"{"id":"s\#($0)","kind":"informational","screen":"home"}"# }
        let overLimit = CatalogCheck.findings(in: file(many), limits: CatalogLimits(sheets: 10, sheetsPerScreen: 3))
        #expect(overLimit.count == 1)
        #expect(overLimit.first?.path == "sheets")
        #expect(overLimit.first?.reason.contains("SHEETD_MAX_SHEETS_PER_SCREEN") == true)
        #expect(CatalogCheck.findings(in: Array("{\"sheets\": [".utf8)).first?.reason.contains("not valid JSON") == true)
        #expect(CatalogCheck.findings(in: Array("{\"sheet\": []}".utf8)).first?.path == "sheets")
    }
}
