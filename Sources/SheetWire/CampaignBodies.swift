public import JSONKit
public import SheetPolicy

/// `POST .../impressions`: `{"sheetId", "eventId"?, "occurredAt"?}`.
public struct ImpressionReport: Equatable, Sendable {
    public let sheetId: String
    public let eventId: String?
    /// When it happened (`OccurredAtWindow`); nil: when the server processes it.
    public let occurredAt: Timestamp?

    public init(_ object: [String: JSONValue]) throws(WireError) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        eventId = r.eventId()
        occurredAt = r.occurredAt()
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
    }
}

/// `PUT .../attributes`: `{"segments": [...]}`, stored sorted (by UTF-8 bytes) without duplicates.
public struct UserAttributes: Equatable, Sendable {
    /// At most this many segments per user.
    public static let maxSegments = 64
    public let segments: [String]

    public init(_ object: [String: JSONValue]) throws(WireError) {
        // `segments` is read here; the reader checks the rest (unknown members).
        var r = BodyReader(object.filter { $0.key != "segments" })
        var segments: [String] = []
        switch object["segments"] {
        case nil, .null?:
            r.fail("segments", "is required")
        case .array(let items)?:
            if items.count > Self.maxSegments {
                r.fail("segments", "must have at most \(Self.maxSegments) items")
            } else {
                for (index, item) in items.enumerated() {
                    guard case .string(let s) = item, Identifier.isValid(s) else {
                        r.fail("segments[\(index)]", Identifier.rule)
                        continue
                    }
                    segments.append(s)
                }
            }
        default:
            r.fail("segments", "must be an array of strings")
        }
        try r.finish()
        self.segments = Set(segments).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

/// `PUT /v1/settings`: `{"globalCap": {"max", "periodSeconds"} | null, "minIntervalSeconds": n | null}`.
/// Absent and null are both "off"; every number is at least 1.
public struct SettingsBody: Equatable, Sendable {
    public static let maxSeconds = 10 * 365 * 86_400
    public static let maxCap = 1_000_000
    public let settings: CampaignSettings

    public init(_ object: [String: JSONValue]) throws(WireError) {
        var r = BodyReader(object)
        var globalCap: FrequencyCap?
        if var cap = r.object("globalCap") {
            let max = cap.integer("max", 1...Self.maxCap, required: true)
            let period = cap.integer("periodSeconds", 1...Self.maxSeconds, required: true)
            r.absorb(cap)
            if let max, let period { globalCap = FrequencyCap(max: max, periodSeconds: period) }
        }
        let minInterval = r.integer("minIntervalSeconds", 1...Self.maxSeconds)
        try r.finish()
        settings = CampaignSettings(globalCap: globalCap, minIntervalSeconds: minInterval)
    }
}
