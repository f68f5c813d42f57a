import FoundationEssentials
import JSONKit
import MicroHTTP
import SheetPolicy

/// `sheetd catalog check FILE [--json]`: the catalog file validated offline, by the same parser, design
/// rules and limits as `PUT /v1/sheets/{sheetId}` and `--catalog` (so the same messages), plus the
/// design documents' warnings that the API only attaches to its answers. Every problem is one line
/// naming the member path, so an editor or a CI log can point at it; `--json` prints one object.
/// Exit status: 0 without errors (warnings allowed), 1 with errors, 2 for a usage error.
public enum CatalogCheck {
    /// One finding: `error` (the API would refuse it) or `warning` (the design documents advise against it).
    public struct Finding: Sendable, Equatable {
        public enum Severity: String, Sendable { case error, warning }
        public var severity: Severity
        /// The member path in the file, e.g. `sheets[2].primaryButton.label` (`sheets` for the whole list).
        public var path: String
        /// The sheet's id when the entry has one.
        public var sheetId: String?
        public var reason: String
    }

    /// Every finding for the catalog file's bytes; `limits` are the server's catalog limits.
    public static func findings(in data: [UInt8], limits: CatalogLimits = CatalogLimits()) -> [Finding] {
        validate(data, limits: limits).findings
    }

    /// The findings, and the definitions that passed (all of them when no finding is an error).
    static func validate(_ data: [UInt8], limits: CatalogLimits) -> (findings: [Finding], definitions: [SheetDefinition]) {
        let root: [String: JSONValue]
        do {
            root = try RequestBody.object(data, subject: "the file")
        } catch {
            return ([Finding(severity: .error, path: "", sheetId: nil, reason: error.detail)], [])
        }
        guard case .array(let entries)? = root["sheets"] else {
            return ([Finding(severity: .error, path: "sheets", sheetId: nil, reason: "is required: the file is {\"sheets\": [definition, ...]}")], [])
        }
        var found: [Finding] = []
        for name in root.keys.sorted() where name != "sheets" {
            found.append(Finding(severity: .error, path: name, sheetId: nil, reason: "is not a member of a catalog file (only sheets)"))
        }
        var definitions: [SheetDefinition] = []
        var firstIndex: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let path = "sheets[\(index)]"
            guard let object = entry.objectMembers else {
                found.append(Finding(severity: .error, path: path, sheetId: nil, reason: "is not an object"))
                continue
            }
            var sheetId: String?
            if case .string(let id)? = object["id"] { sheetId = id }
            do {
                let definition = try SheetDefinition.parse(object, pathId: nil)
                let violations = definition.designViolations
                for v in violations { found.append(Finding(severity: .error, path: "\(path).\(v.field)", sheetId: sheetId, reason: v.reason)) }
                for w in definition.designWarnings {
                    found.append(Finding(severity: .warning, path: "\(path).\(w.field)", sheetId: sheetId, reason: w.reason))
                }
                if let first = firstIndex[definition.id] {
                    found.append(Finding(severity: .error, path: "\(path).id", sheetId: sheetId, reason: "appears twice (first at sheets[\(first)])"))
                } else if violations.isEmpty {
                    firstIndex[definition.id] = index
                    definitions.append(definition)
                }
            } catch {
                if error.invalidParams.isEmpty {
                    found.append(Finding(severity: .error, path: path, sheetId: sheetId, reason: error.detail))
                }
                for param in error.invalidParams {
                    found.append(Finding(severity: .error, path: "\(path).\(param.name)", sheetId: sheetId, reason: param.reason))
                }
            }
        }
        if let violation = limits.violation(upserting: definitions, into: Catalog()) {
            found.append(Finding(severity: .error, path: "sheets", sheetId: nil, reason: violation.description))
        }
        return (found, definitions)
    }

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
