import Foundation
import Testing

/// GET /console and its assets (issue 46): the embedded files, served without a token, under a CSP
/// that allows this origin's files only. (The console's behaviour is tested in a real browser by
/// `make browser-test`, scripts/console-test.py.)
struct ConsolePageTests {
    static let files: [(path: String, source: String, contentType: String)] = [
        ("/console", "Sources/SheetService/Console/console.html", "text/html; charset=utf-8"),
        ("/console/console.css", "Sources/SheetService/Console/console.css", "text/css; charset=utf-8"),
        ("/console/console.js", "Sources/SheetService/Console/console.js", "text/javascript; charset=utf-8"),
        ("/console/chart.min.js", "/usr/share/javascript/chart.js/chart.min.js", "text/javascript; charset=utf-8"),
    ]

    @Test func servesTheEmbeddedFilesWithoutAToken() throws {
        let live = try LiveService()
        for file in Self.files {
            let answer = try live.get(file.path, token: nil)
            #expect(answer.status == 200, "\(file.path)")
            #expect(answer.header("Content-Type") == file.contentType, "\(file.path)")
            #expect(answer.header("Cache-Control") == "no-cache", "\(file.path)")
            #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(file.path)")
            // What the binary serves is the file it was built with.
            let url = file.source.hasPrefix("/") ? URL(fileURLWithPath: file.source) : LiveService.repositoryRoot.appending(path: file.source)
            #expect(answer.body == (try Data(contentsOf: url)), "\(file.path)")
            #expect(try live.request("HEAD", file.path, token: nil).status == 200, "\(file.path)")
        }
    }

    /// Scripts and styles from this origin's files only, no inline code, no eval, Trusted Types.
    @Test func contentSecurityPolicyIsStrictAndThePageHasNoInlineCode() throws {
        let live = try LiveService()
        let page = try live.get("/console", token: nil)
        let csp = try #require(page.header("Content-Security-Policy"))
        for directive in [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'",
            "require-trusted-types-for 'script'", "trusted-types 'none'",
        ] {
            #expect(csp.contains(directive), "\(directive)")
        }
        #expect(!csp.contains("unsafe"))
        #expect(!page.text.contains("<script>") && !page.text.contains("<style") && !page.text.contains(" style="))
        #expect(!page.text.contains("http://") && !page.text.contains("https://"))
        let script = try live.get("/console/console.js", token: nil).text
        #expect(!script.contains("innerHTML") && !script.contains("insertAdjacentHTML") && !script.contains("eval("))
    }
}
