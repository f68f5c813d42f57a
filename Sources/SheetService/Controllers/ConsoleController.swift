import MicroHTTP

/// GET /console: the operator console (Console/console.html with its stylesheet and script, and
/// Debian's Chart.js, all embedded at build time). The page holds no data and needs no token; it
/// asks the operator for the admin token and calls the admin API with it.
struct ConsoleController: RouteController {
    func register(on router: Router) {
        for (path, response) in Self.responses {
            router.add(.GET, path) { _ in response }
        }
    }

    /// A strict Content-Security-Policy: scripts and styles only from this origin's files (no inline
    /// script or style, no eval), requests to this origin only, and Trusted Types required with no
    /// policy allowed, so that no string can ever be parsed as markup (`innerHTML` throws).
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

    static let responses: [(String, HTTPResponse)] = [
        ("/console", asset(embeddedConsolePage, "text/html; charset=utf-8")),
        ("/console/console.css", asset(embeddedConsoleStyles, "text/css; charset=utf-8")),
        ("/console/console.js", asset(embeddedConsoleScript, "text/javascript; charset=utf-8")),
        ("/console/chart.min.js", asset(embeddedChartJS, "text/javascript; charset=utf-8")),
    ]

    private static func asset(_ body: [UInt8], _ contentType: String) -> HTTPResponse {
        var response = HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", contentType),
                // Revalidated on every load: a new binary serves its own files at once.
                ("Cache-Control", "no-cache"),
                ("Content-Security-Policy", contentSecurityPolicy),
                ("Referrer-Policy", "no-referrer"),
                ("X-Content-Type-Options", "nosniff"),
            ], body: body)
        response.compression = .gzipIfAccepted
        return response
    }
}
