import Synchronization

/// A weak reference that may be shared across threads: for a callback handed to something its
/// owner holds (a queue's writer), which must not keep the owner alive.
public final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private struct Box {
        weak var object: Object?
    }
    private let box = Mutex(Box())

    public init(_ object: Object? = nil) {
        box.withLock { $0.object = object }
    }

    /// The object while something else keeps it alive, else nil.
    public var value: Object? {
        get { box.withLock { $0.object } }
        set { box.withLock { $0.object = newValue } }
    }
}
