import JSONKit
public import SheetPolicy

/// The answer to an event a client or operator reported, as stored with the event and replayed to
/// every retry of its id: one shape per route.
public enum EventOutcome: Sendable, Equatable {
    /// `PUT .../containers/{containerId}/count`.
    case count(containerId: String, filter: String, effect: EventEffect)
    /// `POST .../dismissals`: the stack after it and whether the sheet latched.
    case dismissal(EventEffect)
    /// `POST .../presentations`: the stack after it.
    case presentation(EventEffect)
    /// `PUT .../sheets/{sheetId}/content-height`.
    case contentHeight(sheetId: String, platform: Platform, height: Double)
    /// `POST .../impressions`: the user's total for the sheet.
    case impression(sheetId: String, impressions: Int)
    /// `POST .../conversions`: whether it counted, for which arm, and whether the per-user cap stopped it.
    case conversion(sheetId: String, experimentId: String?, goal: String?, counted: Bool, arm: String?, capped: Bool)
    /// `PUT`/`DELETE /v1/experiments/{experimentId}/pins/{userId}`.
    case pin(experimentId: String, userId: String, arm: String?)
    /// `PUT`/`GET .../attributes`: the user's segments.
    case attributes(userId: String, segments: [String])

    /// The body.
    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            switch self {
            case .count(let containerId, let filter, let effect):
                o.member("containerId", containerId)
                o.member("filter", filter)
                o.member("count", effect.count)
                o.member("changed", effect.changed)
                o.member("applied", effect.applied)
            case .dismissal(let effect):
                o.member("stack", effect.stack)
                o.member("latched", effect.latched)
            case .presentation(let effect):
                o.member("stack", effect.stack)
            case .contentHeight(let sheetId, let platform, let height):
                o.member("sheetId", sheetId)
                o.member("platform", platform.rawValue)
                o.member("height", height)
            case .impression(let sheetId, let impressions):
                o.member("sheetId", sheetId)
                o.member("impressions", impressions)
            case .conversion(let sheetId, let experimentId, let goal, let counted, let arm, let capped):
                o.member("sheetId", sheetId)
                o.member("experimentId", experimentId)
                o.member("goal", goal)
                o.member("counted", counted)
                o.member("arm", arm)
                o.member("capped", capped)
            case .pin(let experimentId, let userId, let arm):
                o.member("experimentId", experimentId)
                o.member("userId", userId)
                o.member("arm", arm)
            case .attributes(let userId, let segments):
                o.member("userId", userId)
                o.arrayMember("segments") { items in for segment in segments { items.element(segment) } }
            }
        }
        return w.bytes
    }
}
