import FoundationEssentials
import JSONKit
import SheetService

/// `sheetd catalog check FILE [--json]`: every finding of ``CatalogCheck`` as one line naming the
/// member path, so an editor or a CI log can point at it; `--json` prints one object.
/// Exit status: 0 without errors (warnings allowed), 1 with errors, 2 for a usage error.
extension CatalogCheck {
    /// Runs the command: `arguments` after `catalog check`.
    static func run(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Int32 {
        var json = false
        var files: [String] = []
        var options: [String] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "--json" {
                json = true
            } else if argument.hasPrefix("--") {
                // Server options that change the check (the catalog limits), with their variables.
                options.append(argument)
                if !argument.contains("="), i + 1 < arguments.count {
                    options.append(arguments[i + 1])
                    i += 1
                }
            } else {
                files.append(argument)
            }
            i += 1
        }
        guard files.count == 1, let path = files.first else { throw ConfigurationError("usage: sheetd catalog check FILE [--json]") }
        let limits = try Configuration.parse(arguments: options, environment: environment).catalogLimits
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("catalog check: cannot read \(path)") }
        let found = findings(in: Array(data), limits: limits)
        let errors = found.filter { $0.severity == .error }.count
        print(json ? jsonReport(found, file: path) : textReport(found, file: path))
        return errors > 0 ? 1 : 0
    }

    /// `FILE: error: sheets[2].size: must be one of content, large, medium (sheet 'x')` lines, then a summary.
    static func textReport(_ found: [Finding], file: String) -> String {
        var lines = found.map { f in
            "\(file): \(f.severity.rawValue): \(f.path.isEmpty ? "(file)" : f.path): \(f.reason)" + (f.sheetId.map { " (sheet '\($0)')" } ?? "")
        }
        let errors = found.filter { $0.severity == .error }.count
        lines.append("\(file): \(errors) error\(errors == 1 ? "" : "s"), \(found.count - errors) warning\(found.count - errors == 1 ? "" : "s")")
        return lines.joined(separator: "\n")
    }

    /// `{"file", "errors", "warnings", "problems": [{"severity", "path", "sheetId", "reason"}]}`.
    static func jsonReport(_ found: [Finding], file: String) -> String {
        let errors = found.filter { $0.severity == .error }.count
        var w = JSONWriter()
        w.object { o in
            o.member("file", file)
            o.member("errors", errors)
            o.member("warnings", found.count - errors)
            o.arrayMember("problems") { items in
                for f in found {
                    items.object { p in
                        p.member("severity", f.severity.rawValue)
                        p.member("path", f.path)
                        p.member("sheetId", f.sheetId)
                        p.member("reason", f.reason)
                    }
                }
            }
        }
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
