/// What a reported event is. Its raw value prefixes the client's event id as stored
/// (`count/<eventId>`): one id reused on two routes is two events, and a replay answers with its own
/// route's outcome. The raw values are stored: never rename one.
enum EventKind: String, CaseIterable, Sendable {
    case count
    case dismissal
    case presentation
    case contentHeight = "content-height"
    case impression
    case conversion
    /// The operator's segments (`PUT .../attributes`; no client event id).
    case attributes
    /// A QA pin set or removed (no client event id).
    case pin

    /// The event id as the store records it.
    func storedEventId(_ eventId: String) -> String { "\(rawValue)/\(eventId)" }
}
