import JSONKit
import MicroHTTP
public import SheetPolicy

/// A catalog file validated offline, by the same parser, design rules and limits as
/// `PUT /v1/sheets/{sheetId}` and `--catalog` (so the same messages), plus the design documents'
/// warnings that the API only attaches to its answers. `POST /v1/catalog/impact` reads proposals
/// through it; `sheetd catalog check FILE [--json]` (the executable) prints its findings.
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
    public static func validate(_ data: [UInt8], limits: CatalogLimits) -> (findings: [Finding], definitions: [SheetDefinition]) {
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
}
