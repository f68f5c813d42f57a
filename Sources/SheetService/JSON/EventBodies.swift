import JSONKit
import MicroHTTP
import SheetPolicy

/// `PUT .../containers/{containerId}/count`: `{"count", "seq"?, "filter"?, "eventId"?}`.
struct CountReport: Equatable {
    let count: Int
    let seq: Int?
    let filter: String
    let eventId: String?

    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let count = r.integer("count", 0...1_000_000, required: true)
        seq = r.integer("seq", 0...9_007_199_254_740_991)
        filter = r.identifier("filter", allowEmpty: true) ?? ""
        eventId = r.eventId()
        try r.finish()
        self.count = try r.required(count, "count")
    }
}

/// `POST .../dismissals`: `{"sheetId", "method", "eventId"?}`.
struct Dismissal: Equatable {
    let sheetId: String
    let method: DismissMethod
    let eventId: String?

    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        let method = r.enumeration("method", DismissMethod.self, required: true)
        eventId = r.eventId()
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
        self.method = try r.required(method, "method")
    }
}

/// `POST .../presentations`: `{"sheetId", "mode", "parentSheetId"?, "eventId"?}`.
struct Presentation: Equatable {
    let sheetId: String
    let mode: OpenMode
    let parentSheetId: String?
    let eventId: String?

    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        let mode = r.enumeration("mode", OpenMode.self, required: true)
        parentSheetId = r.identifier("parentSheetId")
        eventId = r.eventId()
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
        self.mode = try r.required(mode, "mode")
    }
}

/// `PUT .../sheets/{sheetId}/content-height`: `{"height", "platform", "eventId"?}`.
struct ContentHeightReport: Equatable {
    let height: Double
    let platform: Platform
    let eventId: String?

    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let height = r.number("height", 1...10_000, required: true)
        let platform = r.enumeration("platform", Platform.self, required: true)
        eventId = r.eventId()
        try r.finish()
        self.height = try r.required(height, "height")
        self.platform = try r.required(platform, "platform")
    }
}
