import Foundation
import SheetdClient
import Testing

/// The client's models and openapi.yaml cannot drift: every JSON example of the spec decodes with the
/// model of its schema and encodes back to the same JSON (no member dropped), and every request model the client encodes validates against the spec's
/// schema (through scripts/client-spec-examples.py, PyYAML and jsonschema, as scripts/check-openapi.sh).
@Suite struct SpecConformanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let spec = root.appending(path: "openapi.yaml").path
    static let script = root.appending(path: "scripts/client-spec-examples.py").path

    struct Example: Decodable {
        var `where`: String
        var schema: String
        var value: JSONValue
    }

    /// Any JSON value, kept as it came (so an example can be re-encoded for the models to decode).
    enum JSONValue: Codable, Equatable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONValue])
        case object([String: JSONValue])
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .null
            } else if let b = try? c.decode(Bool.self) {
                self = .bool(b)
            } else if let n = try? c.decode(Double.self) {
                self = .number(n)
            } else if let s = try? c.decode(String.self) {
                self = .string(s)
            } else if let a = try? c.decode([JSONValue].self) {
                self = .array(a)
            } else {
                self = .object(try c.decode([String: JSONValue].self))
            }
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .null: try c.encodeNil()
            case .bool(let b): try c.encode(b)
            case .number(let n): if n == n.rounded() && abs(n) < 1e15 { try c.encode(Int(n)) } else { try c.encode(n) }
            case .string(let s): try c.encode(s)
            case .array(let a): try c.encode(a)
            case .object(let o): try c.encode(o)
            }
        }
    }

    /// Decodes with the model of each schema name and encodes the model again: what the model kept.
    static let models: [String: @Sendable (Data) throws -> Data] = [
        "Decision": { try JSONEncoder().encode(try JSONDecoder().decode(Decision.self, from: $0)) },
        "SheetDefinition": { try JSONEncoder().encode(try JSONDecoder().decode(SheetDefinition.self, from: $0)) },
        "Catalog": { try JSONEncoder().encode(try JSONDecoder().decode(Catalog.self, from: $0)) },
        "CountOutcome": { try JSONEncoder().encode(try JSONDecoder().decode(CountOutcome.self, from: $0)) },
        "DismissalOutcome": { try JSONEncoder().encode(try JSONDecoder().decode(DismissalOutcome.self, from: $0)) },
        "PresentationOutcome": { try JSONEncoder().encode(try JSONDecoder().decode(PresentationOutcome.self, from: $0)) },
        "ContentHeightOutcome": { try JSONEncoder().encode(try JSONDecoder().decode(ContentHeightOutcome.self, from: $0)) },
        "UserState": { try JSONEncoder().encode(try JSONDecoder().decode(UserState.self, from: $0)) },
        "Problem": { try JSONEncoder().encode(try JSONDecoder().decode(Problem.self, from: $0)) },
        "ProblemLimitExceeded": { try JSONEncoder().encode(try JSONDecoder().decode(Problem.self, from: $0)) },
        "ProblemBadRequest": { try JSONEncoder().encode(try JSONDecoder().decode(Problem.self, from: $0)) },
        "Health": { try JSONEncoder().encode(try JSONDecoder().decode(Health.self, from: $0)) },
        "Readiness": { try JSONEncoder().encode(try JSONDecoder().decode(Readiness.self, from: $0)) },
        "SwiftUIDetent": { try JSONEncoder().encode(try JSONDecoder().decode(SwiftUIDetent.self, from: $0)) },
        "SwiftUISheet": { try JSONEncoder().encode(try JSONDecoder().decode(SwiftUISheet.self, from: $0)) },
        "IosDismissal": { try JSONEncoder().encode(try JSONDecoder().decode(IosDismissal.self, from: $0)) },
        "IosSheet": { try JSONEncoder().encode(try JSONDecoder().decode(IosSheet.self, from: $0)) },
        "AndroidSheet": { try JSONEncoder().encode(try JSONDecoder().decode(AndroidSheet.self, from: $0)) },
        "SheetPresentation": { try JSONEncoder().encode(try JSONDecoder().decode(SheetPresentation.self, from: $0)) },
        "SheetDefinitionInput": { try JSONEncoder().encode(try JSONDecoder().decode(SheetDefinitionInput.self, from: $0)) },
        "CountReport": { try JSONEncoder().encode(try JSONDecoder().decode(CountReport.self, from: $0)) },
        "Dismissal": { try JSONEncoder().encode(try JSONDecoder().decode(Dismissal.self, from: $0)) },
        "Presentation": { try JSONEncoder().encode(try JSONDecoder().decode(Presentation.self, from: $0)) },
        "ContentHeight": { try JSONEncoder().encode(try JSONDecoder().decode(ContentHeight.self, from: $0)) },
        "Impression": { try JSONEncoder().encode(try JSONDecoder().decode(Impression.self, from: $0)) },
        "ImpressionOutcome": { try JSONEncoder().encode(try JSONDecoder().decode(ImpressionOutcome.self, from: $0)) },
        "Conversion": { try JSONEncoder().encode(try JSONDecoder().decode(Conversion.self, from: $0)) },
        "ConversionOutcome": { try JSONEncoder().encode(try JSONDecoder().decode(ConversionOutcome.self, from: $0)) },
        "ExperimentResults": { try JSONEncoder().encode(try JSONDecoder().decode(ExperimentResults.self, from: $0)) },
        "PinInput": { try JSONEncoder().encode(try JSONDecoder().decode(PinInput.self, from: $0)) },
        "Pin": { try JSONEncoder().encode(try JSONDecoder().decode(Pin.self, from: $0)) },
        "PresentedExperiment": { try JSONEncoder().encode(try JSONDecoder().decode(PresentedExperiment.self, from: $0)) },
        "ExperimentInput": { try JSONEncoder().encode(try JSONDecoder().decode(ExperimentDefinition.self, from: $0)) },
        "UserAttributesInput": { try JSONEncoder().encode(try JSONDecoder().decode(UserAttributesInput.self, from: $0)) },
        "UserAttributes": { try JSONEncoder().encode(try JSONDecoder().decode(UserAttributes.self, from: $0)) },
        "Settings": { try JSONEncoder().encode(try JSONDecoder().decode(GlobalSettings.self, from: $0)) },
        "SheetStats": { try JSONEncoder().encode(try JSONDecoder().decode(SheetStats.self, from: $0)) },
        "HeldSheet": { try JSONEncoder().encode(try JSONDecoder().decode(HeldSheet.self, from: $0)) },
        "Schedule": { try JSONEncoder().encode(try JSONDecoder().decode(Schedule.self, from: $0)) },
        "FrequencyCap": { try JSONEncoder().encode(try JSONDecoder().decode(FrequencyCap.self, from: $0)) },
        "Audience": { try JSONEncoder().encode(try JSONDecoder().decode(Audience.self, from: $0)) },
        "CatalogFile": { try JSONEncoder().encode(try JSONDecoder().decode(CatalogFile.self, from: $0)) },
        "CatalogImpact": { try JSONEncoder().encode(try JSONDecoder().decode(CatalogImpact.self, from: $0)) },
    ]
    /// Request bodies: their re-encodings are validated against the schema too.
    static let requestSchemas: Set<String> = [
        "SheetDefinitionInput", "CountReport", "Dismissal", "Presentation", "ContentHeight", "Impression", "UserAttributesInput", "Settings",
        "CatalogFile",
        "Conversion",
    ]

    /// A JSON value without its null members (a model leaves a nil member out; the spec writes null).
    static func withoutNulls(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): .object(members.filter { $0.value != .null }.mapValues(withoutNulls))
        case .array(let items): .array(items.map(withoutNulls))
        default: value
        }
    }

    /// Schemas whose examples are plain strings (ids, names, titles): no model.
    static let plainStrings: Set<String> = ["Id", "Name", "Filter", "EventId", "Title"]
    /// Schemas of operator routes the client library does not call (the catalog's history and its
    /// rollback are run with curl or scripts, docs/operations.md; the stats series is the console's):
    /// no model, checked by check-openapi.sh.
    static let operatorOnly: Set<String> = ["CatalogRevision", "CatalogRevisionSummary", "SheetStatsSeries"]

    /// Request models built by the client itself, every member set, as the client sends them.
    static func clientRequests() throws -> [(String, String, Data)] {
        let encoder = JSONEncoder()
        let id = SheetdUserClient.makeEventId()
        return [
            ("CountReport", "full", try encoder.encode(CountReport(count: 2, seq: 41, filter: "category:security", eventId: id))),
            ("CountReport", "minimal", try encoder.encode(CountReport(count: 0))),
            ("Dismissal", "full", try encoder.encode(Dismissal(sheetId: "home-offers", method: .cancelButton, eventId: id))),
            (
                "Presentation", "full",
                try encoder.encode(Presentation(sheetId: "offer-detail", mode: .replace, parentSheetId: "home-offers", eventId: id))
            ),
            ("ContentHeight", "full", try encoder.encode(ContentHeight(height: 298.5, platform: .android, eventId: id))),
            ("Impression", "full", try encoder.encode(Impression(sheetId: "home-offers", eventId: id))),
            ("Conversion", "full", try encoder.encode(Conversion(sheetId: "home-offers", goal: "signup", eventId: id))),
            ("UserAttributesInput", "full", try encoder.encode(UserAttributesInput(segments: ["beta", "staff"]))),
            (
                "Settings", "full",
                try encoder.encode(GlobalSettings(globalCap: .init(max: 3, periodSeconds: 86_400), minIntervalSeconds: 600))
            ),
            ("Settings", "off", try encoder.encode(GlobalSettings())),
            (
                "SheetDefinitionInput", "cards",
                try encoder.encode(
                    SheetDefinitionInput(
                        id: "home-offers", kind: .cards, size: .content, style: .flexible, screen: "home", tab: "accounts",
                        containerId: "offers-home",
                        containerFilter: "category:offers", priority: 100, inputCount: 1, confirmDismissWhenDirty: false, nonModalUpTo: .medium,
                        dismissAffordance: .closeIcon, swipeToDismiss: true, tapScrimToDismiss: false, expandsOnScrollToEdge: true, cornerRadius: 16))
            ),
            (
                "SheetDefinitionInput", "strict",
                try encoder.encode(
                    SheetDefinitionInput(
                        kind: .input, size: .large, style: .strict, title: "Filter", screen: "transactions", inputCount: 6,
                        primaryButton: PrimaryButton(label: "Apply")))
            ),
        ]
    }

    /// Runs the bridge script with a Python that has PyYAML, jsonschema and referencing: the venv of
    /// scripts/check-openapi.sh, else `python3` on the PATH; when neither has them, check-openapi.sh
    /// is run once to make the venv.
    static func python(_ mode: String, input: Data? = nil) throws -> Data {
        let venv = root.appending(path: ".build/venv-tools/bin/python").path
        if FileManager.default.isExecutableFile(atPath: venv), let output = try? run(venv, mode, input: input) { return output }
        if let output = try? run("python3", mode, input: input) { return output }
        _ = try? run(root.appending(path: "scripts/check-openapi.sh").path, nil, input: nil)
        return try run(venv, mode, input: input)
    }

    static func run(_ executable: String, _ mode: String?, input: Data?) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + (mode.map { [script, $0, spec] } ?? [])
        let output = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardInput = stdin
        process.standardError = FileHandle.nullDevice
        try process.run()
        let writer = stdin.fileHandleForWriting
        // The throwing write: an interpreter that exits at once must not crash the tests with EPIPE.
        let wrote = Result { try input.map { try writer.write(contentsOf: $0) } }
        try? writer.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, case .success = wrote else {
            throw CollectorTimeout(
                description: "\(executable) \(mode ?? "") exited \(process.terminationStatus) (needs PyYAML, jsonschema, referencing)")
        }
        return data
    }

    /// Every example of the spec decodes with its model; request examples re-encode to valid JSON.
    @Test func everyExampleDecodesAndEveryRequestValidates() throws {
        let examples = try JSONDecoder().decode([Example].self, from: try Self.python("examples"))
        #expect(examples.count > 50)
        var encoded: [[String: String]] = []
        var values: [Data] = []
        for example in examples where !Self.plainStrings.contains(example.schema) && !Self.operatorOnly.contains(example.schema) {
            guard let model = Self.models[example.schema] else {
                Issue.record("\(example.where): no client model for schema \(example.schema)")
                continue
            }
            do {
                let again = try model(try JSONEncoder().encode(example.value))
                // Every member of the example survives the model: none is silently dropped.
                let kept = try JSONDecoder().decode(JSONValue.self, from: again)
                #expect(
                    Self.withoutNulls(kept) == Self.withoutNulls(example.value),
                    "\(example.where): the \(example.schema) model drops or changes members")
                if Self.requestSchemas.contains(example.schema) {
                    encoded.append(["where": "re-encoded \(example.where)", "schema": example.schema])
                    values.append(again)
                }
            } catch {
                Issue.record("\(example.where): \(example.schema) does not decode: \(error)")
            }
        }
        for (schema, name, data) in try Self.clientRequests() {
            encoded.append(["where": "client \(schema) \(name)", "schema": schema])
            values.append(data)
        }
        // One JSON list of {where, schema, value} for the validator.
        var list = Data("[".utf8)
        for (i, (meta, value)) in zip(encoded, values).enumerated() {
            if i > 0 { list.append(Data(",".utf8)) }
            list.append(Data(#"{"where":"#.utf8) + (try JSONEncoder().encode(meta["where"]!)) + Data(#","schema":"#.utf8))
            list.append((try JSONEncoder().encode(meta["schema"]!)) + Data(#","value":"#.utf8) + value + Data("}".utf8))
        }
        list.append(Data("]".utf8))
        struct Report: Decodable {
            var checked: Int
            var failures: [String]
        }
        let report = try JSONDecoder().decode(Report.self, from: try Self.python("validate", input: list))
        #expect(report.checked == encoded.count)
        #expect(report.checked >= 15)
        for failure in report.failures { Issue.record("\(failure)") }
    }
}
