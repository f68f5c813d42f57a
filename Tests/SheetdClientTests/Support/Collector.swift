import Foundation
import SheetdClient

/// Follows an async sequence of decisions in a background task and lets the test wait for the next
/// ones with a deadline (an async iterator cannot be raced against a timeout directly).
final class DecisionCollector: @unchecked Sendable {
    // @unchecked Sendable: `items` and `failure` are only touched under `lock`.
    private let lock = NSLock()
    private var items: [SheetDecision] = []
    private var failure: (any Error)?
    private var task: Task<Void, Never>?

    init(_ stream: AsyncThrowingStream<SheetDecision, any Error>) {
        task = Task { [weak self] in
            do {
                for try await decision in stream { self?.append(decision) }
            } catch { self?.fail(error) }
        }
    }

    deinit { task?.cancel() }

    func cancel() { task?.cancel() }

    private func append(_ decision: SheetDecision) {
        lock.lock()
        items.append(decision)
        lock.unlock()
    }

    private func fail(_ error: any Error) {
        lock.lock()
        failure = error
        lock.unlock()
    }

    private func snapshot() -> ([SheetDecision], (any Error)?) {
        lock.lock()
        defer { lock.unlock() }
        return (items, failure)
    }

    var received: [SheetDecision] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    /// Waits until `count` decisions were received in all (or the deadline passes) and returns them.
    /// The default deadline leaves room for a whole suite running in parallel on two cores (a passing
    /// wait returns as soon as they are there).
    func waitFor(count: Int, seconds: Double = 30) async throws -> [SheetDecision] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let (now, error) = snapshot()
            if let error { throw error }
            if now.count >= count { return now }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        throw CollectorTimeout(description: "waited \(seconds) s for \(count) decisions, got \(received.count)")
    }
}

struct CollectorTimeout: Error, CustomStringConvertible {
    var description: String
}
