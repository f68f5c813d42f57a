import Crypto
import MicroHTTP

/// GET /preview: the live preview page (Preview/preview.html, embedded at build time). The page
/// holds no data and needs no token; it asks the person for one and calls the API with it.
struct PreviewController: RouteController {
    func register(on router: Router) {
        router.add(.GET, "/preview") { _ in HTTPResponse(status: 200, headers: Self.previewHeaders, body: embeddedPreviewPage) }
    }

    /// A strict Content-Security-Policy: the page's one inline script runs (allowed by its SHA-256,
    /// computed here from the embedded bytes so it can never drift from the page), and it may talk to
    /// this origin only. No other script, no frames, no forms, no network elsewhere.
    static let previewHeaders: [(String, String)] = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Cache-Control", "no-cache"),
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src \(inlineScriptSource(embeddedPreviewPage)); style-src 'unsafe-inline'; "
                + "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    /// `'sha256-<base64>'` of the text between the page's `<script>` and `</script>` (`'none'` without one).
    static func inlineScriptSource(_ page: [UInt8]) -> String {
        let open = Array("<script>".utf8), close = Array("</script>".utf8)
        guard let start = firstIndex(of: open, in: page, from: 0).map({ $0 + open.count }),
            let end = firstIndex(of: close, in: page, from: start)
        else { return "'none'" }
        // CSP wants standard base64 with padding; the Crypto module has the URL-safe alphabet.
        var text = Base64URL.encode(SHA256.hash(page[start..<end]))
        text = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while text.utf8.count % 4 != 0 { text += "=" }
        return "'sha256-\(text)'"
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var i = from
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle { return i }
            i += 1
        }
        return nil
    }
}
