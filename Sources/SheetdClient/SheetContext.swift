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
    /// The app's version as dotted numbers (`2.10.0`): audiences with `minAppVersion` or
    /// `maxAppVersion` hold a sheet as `not-in-audience` for a context without it. See
    /// ``mainBundleAppVersion``.
    public var appVersion: String?
    /// The user's language as a BCP 47 tag (`de-CH`): audiences with `locales` hold a sheet as
    /// `not-in-audience` for a context without it. See ``preferredLocale``.
    public var locale: String?

    /// A context; only the screen and the platform are required. Pass `appVersion` and `locale`
    /// (``mainBundleAppVersion`` and ``preferredLocale`` read them from the app) or sheets whose
    /// audience names either never show.
    public init(
        screen: String, tab: String? = nil, platform: Platform = .ios, idiom: Idiom? = nil, orientation: Orientation? = nil,
        keyboardVisible: Bool? = nil, dirty: Bool? = nil, viewportHeight: Double? = nil, appVersion: String? = nil, locale: String? = nil
    ) {
        self.screen = screen
        self.tab = tab
        self.platform = platform
        self.idiom = idiom
        self.orientation = orientation
        self.keyboardVisible = keyboardVisible
        self.dirty = dirty
        self.viewportHeight = viewportHeight
        self.appVersion = appVersion
        self.locale = locale
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
        if let appVersion { items.append(URLQueryItem(name: "appVersion", value: appVersion)) }
        if let locale { items.append(URLQueryItem(name: "locale", value: locale)) }
        return items
    }
}

extension SheetContext {
    /// The main bundle's `CFBundleShortVersionString` when it is what the server compares (1 to 8
    /// dotted numbers of at most 9 digits, `2.10.0`); nil otherwise, because the server answers a
    /// malformed `appVersion` with a 400 and a live decision would end on it.
    public static var mainBundleAppVersion: String? {
        appVersion(Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String)
    }

    /// The user's first preferred language (`Locale.preferredLanguages`, e.g. `de-CH`) when it is a
    /// tag the server accepts; nil otherwise (a 400 would end a live decision).
    public static var preferredLocale: String? { locale(Locale.preferredLanguages.first) }

    /// `text` when it is a valid `appVersion` (the server's rule: 1 to 8 numbers of 1 to 9 digits
    /// joined by single dots), else nil.
    public static func appVersion(_ text: String?) -> String? {
        guard let text else { return nil }
        let numbers = text.split(separator: ".", omittingEmptySubsequences: false)
        let valid = (1...8).contains(numbers.count) && numbers.allSatisfy { (1...9).contains($0.count) && $0.allSatisfy(\.isASCIIDigit) }
        return valid ? text : nil
    }

    /// `text` when it is a valid `locale` (the server's rule: at most 64 characters, subtags of 1 to
    /// 8 ASCII letters or digits joined by `-`, the first of 2 to 8 letters), else nil. An underscore
    /// (`de_CH`, as `Locale.identifier` writes it) is read as a hyphen.
    public static func locale(_ text: String?) -> String? {
        guard let text = text?.replacingOccurrences(of: "_", with: "-"), text.utf8.count <= 64 else { return nil }
        let subtags = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = subtags.first, (2...8).contains(first.count), first.allSatisfy(\.isASCIILetter) else { return nil }
        return subtags.allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit } } ? text : nil
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
    fileprivate var isASCIILetter: Bool { isASCII && isLetter }
}
