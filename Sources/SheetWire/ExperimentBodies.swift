public import JSONKit
public import SheetPolicy

/// `POST .../conversions`: `{"sheetId", "eventId"?, "goal"?, "occurredAt"?}`.
public struct ConversionReport: Sendable {
    public let sheetId: String
    public let eventId: String?
    /// When it happened (`OccurredAtWindow`); nil: when the server processes it.
    public let occurredAt: Timestamp?
    public let goal: String?
    public init(_ object: [String: JSONValue]) throws(WireError) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        eventId = r.eventId()
        occurredAt = r.occurredAt()
        goal = r.identifier("goal")
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
    }
}

/// `{"arm"}`.
public struct PinBody: Sendable {
    public let arm: String
    public init(_ object: [String: JSONValue]) throws(WireError) {
        var r = BodyReader(object)
        let arm = r.identifier("arm", required: true)
        try r.finish()
        self.arm = try r.required(arm, "arm")
    }
}
