public import SheetPolicy

/// When a reported event happened, for an event sent late (an app's outbox, offline for a while):
/// the optional `occurredAt` of every event body. It is what cooldowns, caps, conversion windows and
/// the stats' hour buckets count from; without it, the server's clock when the event is processed.
///
/// Accepted from `maximumAgeSeconds` before the server's clock to `futureSeconds` after it (the
/// token leeway: device clocks differ a little). Outside the window the event is refused, 400 naming
/// the member and the window, rather than clamped: an event is never counted at a time it did not
/// happen, and the client learns that its clock or its outbox is off.
public struct OccurredAtWindow: Sendable, Equatable {
    /// How late an event may be reported: a day.
    public static let maximumAgeSeconds = 86_400
    public static let formatRule = "must be an RFC 3339 date-time with an offset, such as 2026-12-01T09:00:00Z (at most millisecond precision)"

    /// How far ahead of the server's clock `occurredAt` may be.
    public let futureSeconds: Int

    public init(futureSeconds: Int) { self.futureSeconds = futureSeconds }

    /// When the event happened: `occurredAt` when it is within the window around `now`, `now`
    /// without one; a time outside the window is an invalid `occurredAt`.
    public func time(of occurredAt: Timestamp?, now: Timestamp) throws(WireError) -> Timestamp {
        guard let occurredAt else { return now }
        let earliest = now.adding(seconds: -Self.maximumAgeSeconds), latest = now.adding(seconds: futureSeconds)
        guard earliest <= occurredAt, occurredAt <= latest else {
            throw .invalid([
                (
                    "occurredAt",
                    "must be within \(Self.maximumAgeSeconds / 3600) h before the server's time and \(futureSeconds) s after it "
                        + "(now from \(earliest.rfc3339) to \(latest.rfc3339)); \(occurredAt.rfc3339) is "
                        + (occurredAt < earliest ? "too old" : "in the future")
                )
            ])
        }
        return occurredAt
    }
}

extension BodyReader {
    /// An event's `occurredAt` (the window is checked where the clock is: `OccurredAtWindow`).
    mutating func occurredAt() -> Timestamp? {
        guard let text = string("occurredAt", maxLength: 64) else { return nil }
        guard let time = Timestamp(rfc3339: text) else { fail("occurredAt", OccurredAtWindow.formatRule); return nil }
        return time
    }
}
