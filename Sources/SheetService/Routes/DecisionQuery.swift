import MicroHTTP
import SheetPolicy

/// The decision route's query string, turned into the policy's client context.
enum DecisionQuery {
    static let parameters: Set<String> = ["screen", "tab", "platform", "idiom", "orientation", "keyboard", "dirty", "viewportHeight"]

    static func context(from request: HTTPRequest) throws(Problem) -> ClientContext {
        var invalid: [(name: String, reason: String)] = []
        for name in request.queryNames() where !parameters.contains(name) {
            invalid.append((name, "is not a known parameter (screen, tab, platform, idiom, orientation, keyboard, dirty, viewportHeight)"))
        }
        // An empty value is a value (and invalid) everywhere but `tab`, where it means "no tab".
        func value(_ name: String) -> String? {
            guard let v = request.query(name), !(v.isEmpty && name == "tab") else { return nil }
            return v
        }
        func enumeration<E: RawRepresentable & CaseIterable>(_ name: String, _: E.Type) -> E? where E.RawValue == String {
            guard let raw = value(name) else { return nil }
            guard let v = E(rawValue: raw) else {
                invalid.append((name, "must be one of \(E.allCases.map(\.rawValue).joined(separator: ", "))"))
                return nil
            }
            return v
        }
        func flag(_ name: String) -> Bool {
            switch value(name) {
            case nil, "false", "0": return false
            case "true", "1": return true
            default:
                invalid.append((name, "must be true, false, 1 or 0"))
                return false
            }
        }
        func identifier(_ name: String) -> String? {
            guard let v = value(name) else { return nil }
            guard Identifier.isValid(v) else { invalid.append((name, Identifier.rule)); return nil }
            return v
        }

        let screen = identifier("screen")
        if request.query("screen") == nil { invalid.append(("screen", "is required")) }
        let tab = identifier("tab")
        let platform = enumeration("platform", Platform.self)
        if request.query("platform") == nil { invalid.append(("platform", "is required (ios or android)")) }
        let idiom = enumeration("idiom", Idiom.self) ?? .phone
        let orientation = enumeration("orientation", Orientation.self) ?? .portrait
        let keyboard = flag("keyboard")
        let dirty = flag("dirty")
        var viewportHeight: Double?
        if let raw = value("viewportHeight") {
            if let d = Double(raw), d.isFinite, (1...10_000).contains(d) {
                viewportHeight = d
            } else {
                invalid.append(("viewportHeight", "must be a number of points from 1 to 10000"))
            }
        }
        guard invalid.isEmpty, let screen, let platform else { throw Problems.invalidParams(invalid) }
        return ClientContext(
            screen: screen, tab: tab, platform: platform, idiom: idiom, orientation: orientation,
            keyboardVisible: keyboard, dirty: dirty, viewportHeight: viewportHeight)
    }
}
