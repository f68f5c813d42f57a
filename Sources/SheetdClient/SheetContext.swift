public import Foundation

/// The client's context for a decision: the query parameters of `GET /v1/users/{userId}/decision`
/// and of its stream.
///
/// A context is also the key of the client's ETag cache: equal contexts share one cached decision.
public struct SheetContext: Sendable, Hashable {
    /// The screen in front of the user.
    public var screen: String
    /// The screen's tab, when it has tabs.
    public var tab: String?
    /// The platform the decision's settings are for.
    public var platform: Platform
    /// Phone or pad (nil: the server's default, phone).
    public var idiom: Idiom?
    /// Portrait or landscape (nil: the server's default, portrait).
    public var orientation: Orientation?
    /// Whether the software keyboard is visible.
    public var keyboardVisible: Bool?
    /// Whether the presented sheet holds unsaved input.
    public var dirty: Bool?
    /// The usable height in points, when known.
    public var viewportHeight: Double?

    /// A context; only the screen and the platform are required.
    public init(
        screen: String, tab: String? = nil, platform: Platform = .ios, idiom: Idiom? = nil, orientation: Orientation? = nil,
        keyboardVisible: Bool? = nil, dirty: Bool? = nil, viewportHeight: Double? = nil
    ) {
        self.screen = screen
        self.tab = tab
        self.platform = platform
        self.idiom = idiom
        self.orientation = orientation
        self.keyboardVisible = keyboardVisible
        self.dirty = dirty
        self.viewportHeight = viewportHeight
    }

    /// The query items, in the API's order; nil members are left out.
    public var queryItems: [URLQueryItem] {
        var items = [URLQueryItem(name: "screen", value: screen)]
        if let tab { items.append(URLQueryItem(name: "tab", value: tab)) }
        items.append(URLQueryItem(name: "platform", value: platform.rawValue))
        if let idiom { items.append(URLQueryItem(name: "idiom", value: idiom.rawValue)) }
        if let orientation { items.append(URLQueryItem(name: "orientation", value: orientation.rawValue)) }
        if let keyboardVisible { items.append(URLQueryItem(name: "keyboard", value: keyboardVisible ? "true" : "false")) }
        if let dirty { items.append(URLQueryItem(name: "dirty", value: dirty ? "true" : "false")) }
        if let viewportHeight {
            let text = viewportHeight == viewportHeight.rounded() && abs(viewportHeight) < 1e15 ? String(Int(viewportHeight)) : String(viewportHeight)
            items.append(URLQueryItem(name: "viewportHeight", value: text))
        }
        return items
    }
}
