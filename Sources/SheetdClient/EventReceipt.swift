/// The answer to a reported event: the server's outcome plus what the client knows about its delivery.
///
/// Members of the outcome read through the receipt (`receipt.count`, `receipt.stack`).
@dynamicMemberLookup
public struct EventReceipt<Outcome: Sendable & Equatable>: Sendable, Equatable {
    /// The server's outcome (the first one, when the event was a replay).
    public var outcome: Outcome
    /// The `eventId` sent: generated once for this logical event and reused by every retry.
    public var eventId: String
    /// Whether the server answered `Idempotent-Replayed: true`: it had already applied this event
    /// (an earlier attempt's answer was lost) and did not apply it again.
    public var replayed: Bool
    /// How many attempts it took (1: no retry).
    public var attempts: Int

    /// A receipt.
    public init(outcome: Outcome, eventId: String, replayed: Bool, attempts: Int) {
        self.outcome = outcome
        self.eventId = eventId
        self.replayed = replayed
        self.attempts = attempts
    }

    /// A member of the outcome.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Outcome, Value>) -> Value { outcome[keyPath: keyPath] }
}
