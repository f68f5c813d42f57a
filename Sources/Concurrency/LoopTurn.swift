/// One turn of an event loop on the current thread: everything it found ready, handled, before it
/// waits again. Work that costs less done once per turn than once per request (a group commit: one
/// transaction for all the events a turn received) asks to run at the turn's end, on the loop's own
/// thread, instead of waking another thread for each request.
///
/// The loop (`run`) and the work (`atEnd`) need not know each other: a queue that finds itself
/// called inside a turn defers, anywhere else it does its work as before.
public enum LoopTurn {
    private final class Turn {
        var open = false
        /// Owners and their end-of-turn work, each owner once, in the order they asked.
        var atEnd: [(owner: ObjectIdentifier, action: () -> Void)] = []
    }

    private static let turns = ThreadLocal<Turn, Never> { Turn() }

    /// Runs `body` as one turn of this thread's loop, then the work asked for during it (outside the
    /// turn: what that work asks for in turn is done its usual way).
    public static func run(_ body: () -> Void) {
        let turn = turns.value
        precondition(!turn.open, "a loop turn cannot run inside another")
        turn.open = true
        body()
        turn.open = false
        let pending = turn.atEnd
        turn.atEnd.removeAll(keepingCapacity: true)
        for entry in pending { entry.action() }
    }

    /// Whether the current thread is inside a turn of its loop.
    public static var isOpen: Bool { turns.current?.open == true }

    /// Asks for `action` to run when the current turn of this thread's loop ends, at most once per
    /// turn for one `owner` (a later ask of the same owner is dropped). False when this thread is not
    /// in a turn: nothing was registered, and the caller does its work its usual way.
    public static func atEnd(of owner: AnyObject, _ action: @escaping () -> Void) -> Bool {
        guard let turn = turns.current, turn.open else { return false }
        let id = ObjectIdentifier(owner)
        if !turn.atEnd.contains(where: { $0.owner == id }) { turn.atEnd.append((id, action)) }
        return true
    }
}
