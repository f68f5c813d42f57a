public import JSONKit
public import SheetPolicy

extension SheetDefinition {
    /// Validates one catalog definition (API body or catalog file entry), naming every bad field.
    /// `pathId` is the id from the URL; a body `id` that differs is an error.
    public static func decode(_ object: [String: JSONValue], pathId: String?) throws(WireError) -> SheetDefinition {
        var r = BodyReader(object)
        let bodyId = r.identifier("id", required: pathId == nil)
        if let pathId, let bodyId, bodyId != pathId { r.fail("id", "must equal the sheet id in the path ('\(pathId)')") }
        let kind = r.enumeration("kind", SheetKind.self, required: true)
        let size = r.enumeration("size", SheetSize.self)
        let style = r.enumeration("style", SheetStyle.self) ?? .flexible
        let title = r.string("title", maxLength: 200)
        if style == .strict && (title ?? "").isEmpty { r.fail("title", "is required for the strict style (its 56 pt header shows it)") }
        let screen = r.identifier("screen", required: true)
        let tab = r.identifier("tab")
        let containerId = r.identifier("containerId")
        let containerFilter = r.identifier("containerFilter")
        if kind == .cards && containerId == nil && !r.invalid.contains(where: { $0.name == "containerId" }) {
            r.fail("containerId", "is required for card sheets")
        }
        if let kind, kind != .cards {
            if containerId != nil { r.fail("containerId", "is only allowed on card sheets") }
            if containerFilter != nil { r.fail("containerFilter", "is only allowed on card sheets") }
        }
        let priority = r.integer("priority", -1_000_000...1_000_000) ?? 0
        let inputCount = r.integer("inputCount", 1...1000) ?? 1
        let confirm = r.boolean("confirmDismissWhenDirty") ?? false
        var primaryButton: PrimaryButton?
        if var button = r.object("primaryButton") {
            if let label = button.string("label", maxLength: 100, required: true) {
                if label.isEmpty { button.fail("label", "must not be empty") } else { primaryButton = PrimaryButton(label: label) }
            }
            r.absorb(button)
        }
        let nonModalUpTo = r.enumeration("nonModalUpTo", DetentID.self)
        if nonModalUpTo == .content { r.fail("nonModalUpTo", "must be one of medium, large") }
        let affordance = r.enumeration("dismissAffordance", DismissAffordance.self)
        let swipe = r.boolean("swipeToDismiss")
        let tapScrim = r.boolean("tapScrimToDismiss")
        let expands = r.boolean("expandsOnScrollToEdge")
        let radius = r.number("cornerRadius", 0...100)
        let campaign = CampaignRules.parse(&r, cardSheet: kind == .cards || kind == nil)
        let experiment = Experiment.parse(&r, definition: object, pathId: pathId)
        try r.finish()
        return SheetDefinition(
            id: try r.required(pathId ?? bodyId, "id"), kind: try r.required(kind, "kind"), size: size, style: style, title: title,
            screen: try r.required(screen, "screen"), tab: tab,
            containerId: containerId, containerFilter: containerFilter, priority: priority, inputCount: inputCount,
            confirmDismissWhenDirty: confirm, primaryButton: primaryButton, nonModalUpTo: nonModalUpTo,
            dismissAffordance: affordance, swipeToDismiss: swipe, tapScrimToDismiss: tapScrim,
            expandsOnScrollToEdge: expands, cornerRadius: radius, campaign: campaign, experiment: experiment)
    }

    /// Refuses what the design documents forbid (writes only: stored definitions keep loading).
    public func checkingDesignRules() throws(WireError) -> SheetDefinition {
        let violations = designViolations
        guard violations.isEmpty else { throw .invalid(violations.map { ($0.field, $0.reason) }) }
        return self
    }

    /// The catalog's answer for one definition: the canonical JSON plus `warnings` (never stored).
    public var responseJSON: [UInt8] {
        var w = JSONWriter()
        write(to: &w, withWarnings: true)
        return w.bytes
    }

    /// The canonical JSON of a definition: every member, defaults filled, `null` for absent options.
    public var canonicalJSON: [UInt8] {
        var w = JSONWriter()
        write(to: &w)
        return w.bytes
    }

    /// `withWarnings` adds `warnings` (the design documents' advice, see `designWarnings`) for answers.
    func write(to w: inout JSONWriter, withWarnings: Bool = false) {
        w.object { o in
            o.member("id", id)
            o.member("kind", kind.rawValue)
            o.member("size", size?.rawValue)
            o.member("style", style.rawValue)
            o.member("title", title)
            o.member("screen", screen)
            o.member("tab", tab)
            o.member("containerId", containerId)
            o.member("containerFilter", containerFilter)
            o.member("priority", priority)
            o.member("inputCount", inputCount)
            o.member("confirmDismissWhenDirty", confirmDismissWhenDirty)
            if let primaryButton {
                o.member("primaryButton") { $0.object { b in b.member("label", primaryButton.label) } }
            } else {
                o.member("primaryButton", nil as String?)
            }
            o.member("nonModalUpTo", nonModalUpTo?.rawValue)
            o.member("dismissAffordance", dismissAffordance?.rawValue)
            o.member("swipeToDismiss", swipeToDismiss)
            o.member("tapScrimToDismiss", tapScrimToDismiss)
            o.member("expandsOnScrollToEdge", expandsOnScrollToEdge)
            o.member("cornerRadius", cornerRadius)
            campaign.write(to: &o)
            if let experiment { o.member("experiment") { experiment.write(to: &$0) } } else { o.member("experiment", nil as String?) }
            if withWarnings {
                o.arrayMember("warnings") { items in
                    for warning in designWarnings {
                        items.object { item in
                            item.member("field", warning.field)
                            item.member("reason", warning.reason)
                        }
                    }
                }
            }
        }
    }
}

extension CampaignRules {
    /// The longest duration a rule takes: ten years, in seconds.
    static let longestSeconds = 315_360_000
    static let durationRange = 1...longestSeconds
    /// The campaign members a sheet definition may have (card sheets only).
    static let members = ["schedule", "cooldownSeconds", "frequency", "audience"]

    /// Reads `schedule`, `cooldownSeconds`, `frequency` and `audience`. Null or absent is
    /// "no rule"; so is a `schedule` or `audience` object with no member set. On a sheet that is not a
    /// card sheet, each one given is an error naming it.
    static func parse(_ r: inout BodyReader, cardSheet: Bool) -> CampaignRules {
        var rules = CampaignRules()
        if var s = r.object("schedule") {
            let startText = s.string("start", maxLength: 64), endText = s.string("end", maxLength: 64)
            let start = time(startText, "start", &s), end = time(endText, "end", &s)
            if let start, let end, end <= start { s.fail("end", "must be after schedule.start") }
            r.absorb(s)
            if start != nil || end != nil { rules.schedule = Schedule(start: start, end: end) }
        }
        rules.cooldownSeconds = r.integer("cooldownSeconds", durationRange)
        if var f = r.object("frequency") {
            let max = f.integer("max", 1...1_000_000, required: true)
            let period = f.integer("periodSeconds", durationRange, required: true)
            r.absorb(f)
            if let max, let period { rules.frequency = FrequencyCap(max: max, periodSeconds: period) }
        }
        if var a = r.object("audience") {
            let audience = Audience(
                platforms: enumerations("platforms", Platform.self, &a), idioms: enumerations("idioms", Idiom.self, &a),
                minAppVersion: version("minAppVersion", &a), maxAppVersion: version("maxAppVersion", &a),
                locales: strings("locales", &a, valid: LanguageTag.isValid, rule: LanguageTag.rule),
                segments: strings("segments", &a, valid: Identifier.isValid, rule: Identifier.rule))
            if let min = audience.minAppVersion, let max = audience.maxAppVersion, AppVersion.compare(max, min) < 0 {
                a.fail("maxAppVersion", "must not be below audience.minAppVersion (\(min))")
            }
            r.absorb(a)
            if audience != Audience() { rules.audience = audience }
        }
        if !cardSheet {
            for name in members where r.isGiven(name) {
                r.fail(name, "is only allowed on card sheets (campaign rules hold back sheets sheetd presents on its own)")
            }
            return .none
        }
        return rules
    }

    private static func time(_ text: String?, _ name: String, _ r: inout BodyReader) -> Timestamp? {
        guard let text else { return nil }
        guard let t = Timestamp(rfc3339: text) else {
            r.fail(name, "must be an RFC 3339 time such as 2026-12-01T09:00:00Z (offsets and fractions to the millisecond allowed)")
            return nil
        }
        return t
    }

    private static func version(_ name: String, _ r: inout BodyReader) -> String? {
        guard let text = r.string(name, maxLength: 80) else { return nil }
        guard AppVersion.isValid(text) else { r.fail(name, AppVersion.rule); return nil }
        return text
    }

    private static func enumerations<E: RawRepresentable & CaseIterable & Equatable>(
        _ name: String, _: E.Type, _ r: inout BodyReader
    ) -> [E]? where E.RawValue == String {
        guard let items = r.array(name, maxCount: E.allCases.count * 4) else { return nil }
        var values: [E] = []
        for item in items {
            guard case .string(let s) = item, let v = E(rawValue: s) else {
                r.fail(name, "must hold only \(E.allCases.map(\.rawValue).joined(separator: ", "))")
                return nil
            }
            if !values.contains(v) { values.append(v) }
        }
        return values
    }

    private static func strings(_ name: String, _ r: inout BodyReader, valid: (String) -> Bool, rule: String) -> [String]? {
        guard let items = r.array(name, maxCount: 100) else { return nil }
        var values: [String] = []
        for item in items {
            guard case .string(let s) = item, valid(s) else {
                r.fail(name, "must hold strings that each \(rule.hasPrefix("must ") ? String(rule.dropFirst(5)) : rule)")
                return nil
            }
            if !values.contains(s) { values.append(s) }
        }
        return values
    }

    /// The campaign members of the canonical JSON (`null` for each rule not set).
    func write(to o: inout JSONWriter) {
        if let schedule {
            o.member("schedule") { w in
                w.object { s in
                    s.member("start", schedule.start?.rfc3339)
                    s.member("end", schedule.end?.rfc3339)
                }
            }
        } else {
            o.member("schedule", nil as String?)
        }
        o.member("cooldownSeconds", cooldownSeconds)
        if let frequency {
            o.member("frequency") { w in
                w.object { f in
                    f.member("max", frequency.max)
                    f.member("periodSeconds", frequency.periodSeconds)
                }
            }
        } else {
            o.member("frequency", nil as String?)
        }
        if let audience {
            o.member("audience") { w in
                w.object { a in
                    a.member("platforms", audience.platforms?.map(\.rawValue))
                    a.member("idioms", audience.idioms?.map(\.rawValue))
                    a.member("minAppVersion", audience.minAppVersion)
                    a.member("maxAppVersion", audience.maxAppVersion)
                    a.member("locales", audience.locales)
                    a.member("segments", audience.segments)
                }
            }
        } else {
            o.member("audience", nil as String?)
        }
    }
}
