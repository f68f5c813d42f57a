import Foundation
import SQLiteStore
import SheetPolicy
import SheetStore
import TestSupport
import Testing

@testable import SheetService

/// The impact analysis holds one batch of users' states at a time (`ImpactSample`), whatever `users`
/// asks for: many large users (256 containers each) are all analysed, each once, in the order the
/// store samples them, with at most a batch (and the one user it starts after) in memory at once.
@Suite struct ImpactMemoryTests {
    static let users = 450
    static let batch = 100

    static func withLargeUsers(_ body: (SQLiteSheetStore) throws -> Void) throws {
        let dir = try TemporaryDirectory(prefix: "impact-memory")
        defer { dir.remove() }
        let store = try SQLiteSheetStore.open(path: dir.file())
        defer { store.close() }
        var large = UserState()
        for c in 0..<256 { large.containers[ContainerKey(containerId: "container-\(c)")] = ContainerCount(count: c + 1, seq: nil) }
        for u in 0..<users {
            _ = try store.update(userId: String(format: "u%04d", u), eventId: nil) { state, _ in
                state = large
                return []
            }
        }
        try body(store)
    }

    @Test func manyLargeUsersAreAnalysedOneBatchAtATime() throws {
        try Self.withLargeUsers { store in
            // From the middle: the walk goes to the end, continues from the smallest id, stops at u0200.
            var sample = ImpactSample(store: store, from: "u0200", limit: 10_000, batch: Self.batch)
            var seen: [String] = []
            try sample.visit { userId, state in
                #expect(state.containers.count == 256)
                seen.append(userId)
                return true
            }
            let ids = (0..<Self.users).map { String(format: "u%04d", $0) }
            #expect(seen == Array(ids[200...] + ids[..<200]), "every user once, in the store's sample order")
            #expect(sample.firstUserId == "u0200")
            #expect(sample.mostHeld <= Self.batch + 1, "states held at once: \(sample.mostHeld)")
            #expect(sample.mostHeld > 0)

            // A limit stops the walk; the body can stop it too (the time budget).
            var limited = ImpactSample(store: store, from: nil, limit: 250, batch: Self.batch)
            var count = 0
            try limited.visit { _, _ in
                count += 1; return true
            }
            #expect(count == 250 && limited.mostHeld <= Self.batch + 1)
            var stopped = ImpactSample(store: store, from: "u0000", limit: 400, batch: Self.batch)
            count = 0
            try stopped.visit { _, _ in
                count += 1; return count < 130
            }
            #expect(count == 130)
        }
    }

    /// A random start and a batch that does not divide the users: still each user once.
    @Test func aSmallBatchVisitsEachUserOnce() throws {
        try Self.withLargeUsers { store in
            var sample = ImpactSample(store: store, from: nil, limit: Self.users, batch: 7)
            var seen = Set<String>()
            try sample.visit { userId, _ in seen.insert(userId).inserted }
            #expect(seen.count == Self.users)
            #expect(sample.mostHeld <= 8)
        }
    }
}
