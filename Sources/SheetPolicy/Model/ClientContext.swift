public enum Idiom: String, Sendable, CaseIterable { case phone, pad }
public enum Orientation: String, Sendable, CaseIterable { case portrait, landscape }

/// Where and how the client would present: the screen in front of the user and the device around it.
public struct ClientContext: Sendable, Equatable {
    public var screen: String
    public var tab: String?
    public var platform: Platform
    public var idiom: Idiom
    public var orientation: Orientation
    public var keyboardVisible: Bool
    /// The presented sheet holds unsaved input.
    public var dirty: Bool
    /// The usable height in points, when the client knows it.
    public var viewportHeight: Double?
    /// The app's version as dotted numbers (`2.10.0`), for audiences with app versions; `nil` when not sent.
    public var appVersion: String?
    /// The user's BCP 47 language tag (`de-CH`), for audiences with locales; `nil` when not sent.
    public var locale: String?

    public init(
        screen: String, tab: String? = nil, platform: Platform, idiom: Idiom = .phone,
        orientation: Orientation = .portrait, keyboardVisible: Bool = false, dirty: Bool = false,
        viewportHeight: Double? = nil, appVersion: String? = nil, locale: String? = nil
    ) {
        self.screen = screen; self.tab = tab; self.platform = platform; self.idiom = idiom
        self.orientation = orientation; self.keyboardVisible = keyboardVisible; self.dirty = dirty
        self.viewportHeight = viewportHeight; self.appVersion = appVersion; self.locale = locale
    }
}
