import Foundation
import MicroHTTP
import SheetService
import TestSupport
import Testing

/// openapi.yaml's problem examples say what the server answers: every example's type has the
/// server's one title and status, and the generic error responses match live answers.
struct OpenAPIExampleTests {
    struct Example { var slug: String; var title: String?; var status: Int?; var detail: String? }

    /// Every problem example (a `type: urn:sheetd:problem:` line and the `title`/`status`/`detail`
    /// lines beside it at the same indentation).
    static func examples(_ yaml: String) -> [Example] {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var found: [Example] = []
        for (i, line) in lines.enumerated() {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("type: urn:sheetd:problem:") else { continue }
            let indent = line.count - trimmed.count
            var example = Example(slug: String(trimmed.dropFirst("type: urn:sheetd:problem:".count)))
            for next in lines[(i + 1)...] {
                let t = next.drop { $0 == " " }
                guard next.count - t.count == indent else { break }
                func value(_ key: String) -> String? {
                    guard t.hasPrefix(key + ": ") else { return nil }
                    var v = String(t.dropFirst(key.count + 2))
                    if v.hasPrefix("'") && v.hasSuffix("'") { v = String(v.dropFirst().dropLast()) }
                    return v
                }
                if let v = value("title") { example.title = v }
                if let v = value("status") { example.status = Int(v) }
                if let v = value("detail") { example.detail = v }
            }
            found.append(example)
        }
        return found
    }

    /// Each example's title and status are the server's definition of its type.
    @Test func everyExampleHasTheServersTitleAndStatus() throws {
        let examples = Self.examples(LiveService.openAPIText)
        #expect(examples.count > 10)
        for example in examples {
            let type = try #require(ProblemType.all.first { $0.slug == example.slug }, "unknown type \(example.slug)")
            #expect(example.title == type.title, "\(example.slug): example title \(example.title ?? "nil")")
            #expect(example.status == type.status, "\(example.slug): example status \(example.status.map(String.init) ?? "nil")")
        }
    }

    /// The shared error responses, provoked live: type, title and status strictly, and the detail
    /// where the answer is deterministic.
    @Test func genericErrorExamplesMatchLiveAnswers() throws {
        let live = try LiveService()
        let byResponse = Dictionary(Self.examples(LiveService.openAPIText).map { ($0.slug, $0) }) { first, _ in first }
        func check(_ response: LiveService.Response, _ slug: String, detail: Bool) throws {
            let o = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
            let example = try #require(byResponse[slug])
            #expect(o["type"] as? String == "urn:sheetd:problem:" + slug)
            #expect(o["title"] as? String == example.title, "\(slug)")
            #expect(o["status"] as? Int == example.status, "\(slug)")
            #expect(response.status == example.status, "\(slug)")
            if detail { #expect(o["detail"] as? String == example.detail, "\(slug)") }
        }
        try check(try live.get("/v1/sheets", token: nil), "unauthorized", detail: true)
        try check(try live.request("POST", "/v1/sheets/home-offerz", json: "{}"), "method-not-allowed", detail: true)
        try check(try live.get("/v1/sheets/home-offerz"), "not-found", detail: true)
        // Only the head, announcing a body over the cap: the server answers at once and closes, so a
        // client still sending the body could see a broken pipe instead of the answer.
        let oversize = try RawConnection(port: live.server.port)
        try oversize.send(
            "PUT /v1/sheets/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(LiveService.adminToken)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 70000\r\n\r\n")
        let raw = try oversize.readResponse()
        var headers: [String: String] = [:]
        for (k, v) in raw.headers { headers[k] = v }
        try check(LiveService.Response(status: raw.status, headers: headers, body: Data(raw.body)), "payload-too-large", detail: true)
        try check(try live.request("PUT", "/v1/sheets/x", headers: ["Content-Type": "text/plain"]), "unsupported-media-type", detail: true)
        try check(try live.get("/v1/users/u/decision?screen=home&platform=ios&screen=home"), "invalid-params", detail: false)
    }
}
