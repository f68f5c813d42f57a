import Concurrency
import MicroHTTP
import SheetPolicy
import SheetWire

/// The decision route's query string, turned into the policy's client context.
enum DecisionQuery {
    /// The known parameters.
    enum Parameter: CaseIterable {
        case screen, tab, platform, idiom, orientation, keyboard, dirty, viewportHeight, appVersion, locale

        var name: String {
            switch self {
            case .screen: "screen"
            case .tab: "tab"
            case .platform: "platform"
            case .idiom: "idiom"
            case .orientation: "orientation"
            case .keyboard: "keyboard"
            case .dirty: "dirty"
            case .viewportHeight: "viewportHeight"
            case .appVersion: "appVersion"
            case .locale: "locale"
            }
        }

        private static let byName: [(bytes: [UInt8], parameter: Parameter)] = allCases.map { (Array($0.name.utf8), $0) }

        /// The parameter a decoded query name names (exactly, case-sensitive), nil for an unknown name.
        init?(_ name: Span<UInt8>) {
            for (bytes, parameter) in Self.byName where name.equals(bytes) {
                self = parameter
                return
            }
            return nil
        }
    }

    /// The context of the request's query. Apps send the same few query strings again and again,
    /// and the same bytes always give the same context: each thread keeps the last few it parsed.
    static func context(from request: HTTPRequest) throws(Problem) -> ClientContext {
        let query = request.rawQueryBytes
        let recent = recentlyParsed.value
        if let known = recent.context(for: query) { return known }
        let context = try parse(request)
        recent.remember(context, for: query)
        return context
    }

    private static let recentlyParsed = ThreadLocal<RecentlyParsed, Never> { RecentlyParsed() }

    /// One thread's last parsed queries (valid ones only) and their contexts, replaced in turn.
    private final class RecentlyParsed {
        private var queries: [[UInt8]] = []
        private var contexts: [ClientContext] = []
        private var next = 0
        private static let capacity = 8

        func context(for query: [UInt8]) -> ClientContext? {
            for index in queries.indices where queries[index] == query { return contexts[index] }
            return nil
        }

        func remember(_ context: ClientContext, for query: [UInt8]) {
            if queries.count < Self.capacity {
                queries.append(query)
                contexts.append(context)
            } else {
                queries[next] = query
                contexts[next] = context
                next = (next + 1) % Self.capacity
            }
        }
    }

    private static func parse(_ request: HTTPRequest) throws(Problem) -> ClientContext {
        // One pass over the query: the value of each known parameter, every unknown name (in order,
        // duplicates included) and every known name given twice. Strings are built only for values.
        var screen: String?, tab: String?, platform: String?, idiom: String?, orientation: String?
        var keyboard: String?, dirty: String?, viewportHeight: String?, appVersion: String?, locale: String?
        var unknown: [String] = []
        var repeated: [String] = []
        request.forEachQueryItem { name, value in
            func keep(_ slot: inout String?) {
                if slot == nil {
                    slot = value.utf8String
                } else {
                    let n = name.utf8String
                    if !repeated.contains(n) { repeated.append(n) }
                }
            }
            switch Parameter(name) {
            case .screen: keep(&screen)
            case .tab: keep(&tab)
            case .platform: keep(&platform)
            case .idiom: keep(&idiom)
            case .orientation: keep(&orientation)
            case .keyboard: keep(&keyboard)
            case .dirty: keep(&dirty)
            case .viewportHeight: keep(&viewportHeight)
            case .appVersion: keep(&appVersion)
            case .locale: keep(&locale)
            case nil: unknown.append(name.utf8String)
            }
        }

        var invalid: [(name: String, reason: String)] = []
        for name in repeated {
            invalid.append((name, "is given more than once"))
        }
        for name in unknown {
            invalid.append(
                (name, "is not a known parameter (screen, tab, platform, idiom, orientation, keyboard, dirty, viewportHeight, appVersion, locale)"))
        }
        // An empty value is a value (and invalid) everywhere but `tab`, where it means "no tab".
        func enumeration<E: RawRepresentable & CaseIterable>(_ raw: String?, _ name: String, _: E.Type) -> E? where E.RawValue == String {
            guard let raw else { return nil }
            guard let v = E(rawValue: raw) else {
                invalid.append((name, "must be one of \(E.allCases.map(\.rawValue).joined(separator: ", "))"))
                return nil
            }
            return v
        }
        func flag(_ raw: String?, _ name: String) -> Bool {
            switch raw {
            case nil, "false", "0": return false
            case "true", "1": return true
            default:
                invalid.append((name, "must be true, false, 1 or 0"))
                return false
            }
        }
        func identifier(_ raw: String?, _ name: String) -> String? {
            guard let raw else { return nil }
            guard Identifier.isValid(raw) else { invalid.append((name, Identifier.rule)); return nil }
            return raw
        }

        let screenId = identifier(screen, "screen")
        if screen == nil { invalid.append(("screen", "is required")) }
        let tabId = identifier(tab?.isEmpty == true ? nil : tab, "tab")
        let platformValue = enumeration(platform, "platform", Platform.self)
        if platform == nil { invalid.append(("platform", "is required (ios or android)")) }
        let idiomValue = enumeration(idiom, "idiom", Idiom.self) ?? .phone
        let orientationValue = enumeration(orientation, "orientation", Orientation.self) ?? .portrait
        let keyboardVisible = flag(keyboard, "keyboard")
        let isDirty = flag(dirty, "dirty")
        var height: Double?
        if let raw = viewportHeight {
            if let d = Double(raw), d.isFinite, (1...10_000).contains(d) {
                height = d
            } else {
                invalid.append(("viewportHeight", "must be a number of points from 1 to 10000"))
            }
        }
        // Audiences compare these; part of the context, so of the decision cache's key.
        if let appVersion, !AppVersion.isValid(appVersion) { invalid.append(("appVersion", AppVersion.rule)) }
        if let locale, !LanguageTag.isValid(locale) { invalid.append(("locale", LanguageTag.rule)) }
        guard invalid.isEmpty, let screenId, let platformValue else { throw Problems.invalidParams(invalid) }
        return ClientContext(
            screen: screenId, tab: tabId, platform: platformValue, idiom: idiomValue, orientation: orientationValue,
            keyboardVisible: keyboardVisible, dirty: isDirty, viewportHeight: height, appVersion: appVersion, locale: locale)
    }
}
