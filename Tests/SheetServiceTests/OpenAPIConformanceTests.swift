import Foundation
import MicroHTTP
import SheetService
import Testing

/// openapi.yaml documents exactly the routes the router serves.
struct OpenAPIConformanceTests {
    /// Paths and methods under `paths:` (a line scan: the spec keeps the usual two-space layout).
    static func specRoutes(_ yaml: String) -> Set<String> {
        var routes = Set<String>()
        var inPaths = false
        var currentPath: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("paths:") { inPaths = true; continue }
            if inPaths, let first = line.first, first != " ", first != "#" { inPaths = false }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path = currentPath {
                let key = line.dropFirst(4).prefix { $0 != ":" }
                if ["get", "put", "post", "delete", "patch", "head", "options"].contains(String(key)) {
                    routes.insert("\(key.uppercased()) \(path)")
                }
            }
        }
        return routes
    }

    @Test func routerAndSpecHaveTheSameRoutes() throws {
        let live = try LiveService()
        let served = Set(live.service.makeRouter().routes.map { "\($0.method.rawValue) \($0.template)" })
        let documented = Self.specRoutes(LiveService.openAPIText)
        #expect(!documented.isEmpty)
        #expect(served.subtracting(documented).isEmpty, "served but not documented: \(served.subtracting(documented).sorted())")
        #expect(documented.subtracting(served).isEmpty, "documented but not served: \(documented.subtracting(served).sorted())")
    }

    /// The `/metrics` example lists exactly the metric families the server exposes (by `# TYPE` line).
    @Test func metricsExampleNamesTheServedFamilies() throws {
        func families(_ text: some StringProtocol) -> Set<String> {
            Set(
                text.split(separator: "\n").compactMap { line -> String? in
                    let trimmed = line.drop { $0 == " " }
                    return trimmed.hasPrefix("# TYPE ") ? String(trimmed.dropFirst(7)) : nil
                })
        }
        let yaml = LiveService.openAPIText
        let start = try #require(yaml.range(of: "operationId: getMetrics"))
        let end = try #require(yaml.range(of: "\n  /", range: start.upperBound..<yaml.endIndex))
        let documented = families(yaml[start.upperBound..<end.lowerBound])
        let live = try LiveService()
        let served = families(try live.get("/metrics", token: nil).text)
        #expect(!served.isEmpty)
        #expect(documented == served, "documented \(documented.sorted()), served \(served.sorted())")
    }
}
