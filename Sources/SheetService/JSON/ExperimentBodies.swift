import JSONKit
import MicroHTTP

/// `{"sheetId", "eventId"?, "goal"?}`.
struct ConversionReport {
    let sheetId: String
    let eventId: String?
    let goal: String?
    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        eventId = r.eventId()
        goal = r.identifier("goal")
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
    }
}

/// `{"arm"}`.
struct PinBody {
    let arm: String
    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let arm = r.identifier("arm", required: true)
        try r.finish()
        self.arm = try r.required(arm, "arm")
    }
}
