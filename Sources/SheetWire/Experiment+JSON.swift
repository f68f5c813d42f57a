import JSONKit
import SheetPolicy

extension Experiment {
    /// Arms an experiment has at most.
    static let maximumArms = 20
    /// The largest payload, as canonical JSON.
    static let maximumPayloadBytes = 4096
    /// Definition members an arm's overrides may not set: what places the sheet (id, screen, tab,
    /// container), what makes it a card sheet (kind), the campaign rules and the experiment itself.
    static let fixedMembers = Set(["id", "kind", "screen", "tab", "containerId", "containerFilter", "experiment"] + CampaignRules.members)

    /// Reads a definition's `experiment` (nil when absent or null). `definition` is the whole body:
    /// each arm's overrides are merged into it and read with the definition's own parser and design
    /// rules, their problems named under `experiment.arms[i].overrides`.
    static func parse(_ r: inout BodyReader, definition: [String: JSONValue], pathId: String?) -> Experiment? {
        guard var e = r.object("experiment") else { return nil }
        let id = e.identifier("id", required: true)
        let status = e.enumeration("status", ExperimentStatus.self, required: true)
        let window = e.integer("conversionWindowSeconds", CampaignRules.durationRange, required: true)
        let winner = e.identifier("winner")
        var arms: [ExperimentArm] = []
        if let items = e.array("arms", maxCount: maximumArms) {
            if items.count < 2 { e.fail("arms", "must have at least 2 arms") }
            var base = definition
            base["experiment"] = nil
            for (index, item) in items.enumerated() {
                guard case .object(let members) = item else {
                    e.fail("arms[\(index)]", "must be an object")
                    continue
                }
                var a = BodyReader(members, prefix: "experiment.arms[\(index)].")
                if let arm = parseArm(&a, base: base, pathId: pathId) {
                    if arms.contains(where: { $0.id == arm.id }) { a.fail("id", "must be unique among the arms ('\(arm.id)' repeats)") }
                    arms.append(arm)
                }
                e.absorb(a)
            }
            if arms.filter(\.holdout).count > 1 { e.fail("arms", "must have at most one holdout arm") }
        } else if !e.invalid.contains(where: { $0.name.hasSuffix("arms") }) {
            e.fail("arms", "is required")
        }
        if let winner {
            if status != .stopped { e.fail("winner", "is only allowed when status is stopped") }
            if !arms.isEmpty, !arms.contains(where: { $0.id == winner }) { e.fail("winner", "must be one of the arms' ids") }
        }
        r.absorb(e)
        guard let id, let status, let window, arms.count >= 2 else { return nil }
        return Experiment(id: id, status: status, arms: arms, conversionWindowSeconds: window, winner: winner)
    }

    private static func parseArm(_ a: inout BodyReader, base: [String: JSONValue], pathId: String?) -> ExperimentArm? {
        let id = a.identifier("id", required: true)
        let weight = a.integer("weight", 1...1_000_000, required: true)
        let holdout = a.boolean("holdout") ?? false
        var payloadJSON: [UInt8]? = nil
        if let payload = a.rawObject("payload") {
            if let bad = payload.nonFiniteNumberPath { a.fail("payload", "must hold finite numbers only (\(bad))") }
            let bytes = JSONValue.object(payload).canonicalJSON
            if bytes.count > maximumPayloadBytes {
                a.fail("payload", "must be at most \(maximumPayloadBytes) bytes as JSON (it is \(bytes.count))")
            } else {
                payloadJSON = bytes
            }
        }
        var overridesJSON: [UInt8]? = nil
        var definition: SheetDefinition? = nil
        if let overrides = a.rawObject("overrides") {
            let fixed = overrides.keys.filter { fixedMembers.contains($0) }.sorted()
            for name in fixed { a.fail("overrides.\(name)", "cannot be overridden by an arm (it places the sheet or is not a presentation member)") }
            if fixed.isEmpty && !overrides.isEmpty {
                var merged = base
                for (name, value) in overrides { merged[name] = value }
                do {
                    definition = try SheetDefinition.decode(merged, pathId: pathId).checkingDesignRules()
                    overridesJSON = JSONValue.object(overrides).canonicalJSON
                } catch {
                    // Only what the overrides bring: problems of the definition itself are reported once,
                    // at the top. A rule the merged sheet breaks on a member the arm did not set (a strict
                    // style without a title) is the override's doing too: named under `overrides`.
                    let own = Self.problems(of: base, pathId: pathId)
                    let introduced = error.invalidParams.filter { !own.contains($0.name + "\u{0}" + $0.reason) }
                    for p in introduced {
                        if overrides[String(p.name.split(separator: ".").first ?? "")] != nil {
                            a.fail("overrides.\(p.name)", p.reason)
                        } else {
                            a.fail("overrides", "makes the sheet break a rule: \(p.name) \(p.reason)")
                        }
                    }
                    if error.invalidParams.isEmpty { a.fail("overrides", error.detail) }
                }
            }
        }
        guard let id, let weight else { return nil }
        return ExperimentArm(
            id: id, weight: weight, holdout: holdout, payloadJSON: payloadJSON, overridesJSON: overridesJSON, definition: definition)
    }

    /// The problems (`name\0reason`) of the definition itself, without any arm's overrides.
    private static func problems(of definition: [String: JSONValue], pathId: String?) -> Set<String> {
        do {
            _ = try SheetDefinition.decode(definition, pathId: pathId).checkingDesignRules()
            return []
        } catch {
            return Set(error.invalidParams.map { $0.name + "\u{0}" + $0.reason })
        }
    }

    /// The experiment as the canonical definition writes it.
    func write(to w: inout JSONWriter) {
        w.object { o in
            o.member("id", id)
            o.member("status", status.rawValue)
            o.arrayMember("arms") { items in
                for arm in arms {
                    items.object { a in
                        a.member("id", arm.id)
                        a.member("weight", arm.weight)
                        a.member("holdout", arm.holdout)
                        a.key("overrides")
                        if let json = arm.overridesJSON { a.json(json) } else { a.null() }
                        a.key("payload")
                        if let json = arm.payloadJSON { a.json(json) } else { a.null() }
                    }
                }
            }
            o.member("conversionWindowSeconds", conversionWindowSeconds)
            o.member("winner", winner)
        }
    }
}

extension JSONValue {
    /// Compact JSON with object members in byte order of their names: the same value always gives
    /// the same bytes (catalog tags, decision tags).
    var canonicalJSON: [UInt8] {
        var w = JSONWriter()
        writeCanonical(to: &w)
        return w.bytes
    }

    func writeCanonical(to w: inout JSONWriter) {
        switch self {
        case .null: w.null()
        case .bool(let b): w.bool(b)
        case .integer(let i): w.int(Int(i))
        case .largeInteger(let d), .number(let d): w.double(d)
        case .string(let s): w.string(s)
        case .array(let items): w.array { inner in for item in items { item.writeCanonical(to: &inner) } }
        case .object(let members):
            w.object { o in
                for name in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                    o.key(name)
                    members[name]!.writeCanonical(to: &o)
                }
            }
        }
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// The path of a number that does not fit a double (JSON has no infinity), or nil.
    fileprivate var nonFiniteNumberPath: String? {
        func find(_ value: JSONValue, _ path: String) -> String? {
            switch value {
            case .largeInteger(let d), .number(let d): return d.isFinite ? nil : path
            case .array(let items):
                for (i, item) in items.enumerated() { if let p = find(item, "\(path)[\(i)]") { return p } }
                return nil
            case .object(let members):
                for (k, v) in members { if let p = find(v, path.isEmpty ? k : "\(path).\(k)") { return p } }
                return nil
            default: return nil
            }
        }
        return find(.object(self), "")
    }
}
