public import JSONKit
public import SheetPolicy

/// `PUT .../containers/{containerId}/count`: `{"count", "seq"?, "filter"?, "eventId"?, "occurredAt"?}`.
public struct CountReport: Equatable, Sendable {
    public let count: Int
    public let seq: Int?
    public let filter: String
    public let eventId: String?
    /// When it happened (`OccurredAtWindow`); nil: when the server processes it.
    public let occurredAt: Timestamp?

    public init(_ object: [String: JSONValue]) throws(WireError) {
        var r = BodyReader(object)
        let count = r.integer("count", 0...1_000_000, required: true)
        seq = r.integer("seq", 0...9_007_199_254_740_991)
        filter = r.identifier("filter", allowEmpty: true) ?? ""
        eventId = r.eventId()
        occurredAt = r.occurredAt()
        try r.finish()
        self.count = try r.required(count, "count")
    }
}

/// `POST .../dismissals`: `{"sheetId", "method", "eventId"?, "occurredAt"?}`.
public struct Dismissal: Equatable, Sendable {
    public let sheetId: String
    public let method: DismissMethod
    public let eventId: String?
    /// When it happened (`OccurredAtWindow`); nil: when the server processes it.
    public let occurredAt: Timestamp?

    public init(_ object: [String: JSONValue]) throws(WireError) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        let method = r.enumeration("method", DismissMethod.self, required: true)
        eventId = r.eventId()
        occurredAt = r.occurredAt()
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
        self.method = try r.required(method, "method")
    }
}

/// `POST .../presentations`: `{"sheetId", "mode", "parentSheetId"?, "eventId"?, "occurredAt"?}`.
public struct PresentationReport: Equatable, Sendable {
    public let sheetId: String
    public let mode: OpenMode
    public let parentSheetId: String?
    public let eventId: String?
    /// When it happened (`OccurredAtWindow`); nil: when the server processes it.
    public let occurredAt: Timestamp?

    public init(_ object: [String: JSONValue]) throws(WireError) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        let mode = r.enumeration("mode", OpenMode.self, required: true)
        parentSheetId = r.identifier("parentSheetId")
        eventId = r.eventId()
        occurredAt = r.occurredAt()
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
        self.mode = try r.required(mode, "mode")
    }
}

/// `PUT .../sheets/{sheetId}/content-height`: `{"height", "platform", "eventId"?, "occurredAt"?}`.
public struct ContentHeightReport: Equatable, Sendable {
    public let height: Double
    public let platform: Platform
    public let eventId: String?
    /// When it happened (`OccurredAtWindow`); nil: when the server processes it.
    public let occurredAt: Timestamp?

    public init(_ object: [String: JSONValue]) throws(WireError) {
        var r = BodyReader(object)
        let height = r.number("height", 1...10_000, required: true)
        let platform = r.enumeration("platform", Platform.self, required: true)
        eventId = r.eventId()
        occurredAt = r.occurredAt()
        try r.finish()
        self.height = try r.required(height, "height")
        self.platform = try r.required(platform, "platform")
    }
}
