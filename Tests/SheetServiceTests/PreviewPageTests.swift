import Crypto
import Foundation
import Testing

/// GET /preview: the embedded page, served without a token, under a CSP that allows its own script.
/// (The page's behaviour is tested in a real browser by `make browser-test`.)
struct PreviewPageTests {
    @Test func servesTheEmbeddedPageWithoutAToken() throws {
        let live = try LiveService()
        let page = try live.get("/preview", token: nil)
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.header("Cache-Control") == "no-cache")
        #expect(page.header("X-Content-Type-Options") == "nosniff")
        #expect(page.text.hasPrefix("<!doctype html>"))
        // The page in the binary is the file in the repository (embedded at build time).
        let source = try Data(contentsOf: LiveService.repositoryRoot.appending(path: "Sources/SheetService/Preview/preview.html"))
        #expect(page.body == source)
        // Offline: nothing is loaded from anywhere but this server.
        for external in ["http://", "https://", "//cdn", "src=\"/", "<link"] {
            #expect(!page.text.contains(external), "\(external)")
        }
        #expect(try live.request("HEAD", "/preview", token: nil).status == 200)
    }

    /// The CSP names the SHA-256 of the page's one inline script, so the browser runs it and nothing else.
    @Test func contentSecurityPolicyAllowsExactlyThePageScript() throws {
        let live = try LiveService()
        let page = try live.get("/preview", token: nil)
        let csp = try #require(page.header("Content-Security-Policy"))
        #expect(csp.contains("default-src 'none'"))
        #expect(csp.contains("connect-src 'self'"))
        #expect(csp.contains("frame-ancestors 'none'"))
        let scripts = page.text.components(separatedBy: "<script>")
        #expect(scripts.count == 2, "exactly one script start tag")
        let script = try #require(scripts.last?.components(separatedBy: "</script>").first)
        let hash = Data(SHA256.hash(Array(script.utf8))).base64EncodedString()
        #expect(csp.contains("script-src 'sha256-\(hash)'"), "\(csp)")
    }
}
