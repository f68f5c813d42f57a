import SQLiteKit
import SheetPolicy
import TestSupport
import Testing

@testable import SQLiteStore
@testable import SheetStore

@Suite struct UserStateLimitsTests {
    static let limits = UserStateLimits(containers: 3, stackDepth: 2, contentHeights: 2, impressions: 3)

    static func addContainer(_ id: String) -> @Sendable (inout UserState) throws -> [UInt8] {
        { state in
            state.containers[ContainerKey(containerId: id)] = ContainerCount(count: 1)
            return Array(id.utf8)
        }
    }

    /// An event that would keep one container too many is refused; the stored row stays byte for
    /// byte what it was, the event id is not recorded, and sending it again is refused the same way.
    @Test func growthBeyondALimitIsRefusedAndChangesNothing() throws {
        try withStore { store, dir throws in
            for id in ["a", "b", "c"] { _ = try store.update(userId: "u", eventId: id, Self.limits.enforcing(Self.addContainer(id))) }
            let db = try Connection(path: dir.file(), flags: [.readOnly])
            defer { db.close() }
            let row = try db.scalar("SELECT state FROM user_states WHERE user_id = 'u'")
            for _ in 0..<2 {
                #expect(throws: StateLimitExceeded(limit: .containers, maximum: 3)) {
                    _ = try store.update(userId: "u", eventId: "d", Self.limits.enforcing(Self.addContainer("d")))
                }
            }
            #expect(try db.scalar("SELECT state FROM user_states WHERE user_id = 'u'") == row)
            #expect(try db.scalar("SELECT count(*) FROM processed_events WHERE event_id = 'd'") == .integer(0))
            // Changing what is kept is no growth.
            _ = try store.update(
                userId: "u", eventId: nil,
                Self.limits.enforcing { state in
                    state.containers[ContainerKey(containerId: "a")] = ContainerCount(count: 9)
                    return []
                })
            #expect(try store.userState(userId: "u").count(for: ContainerKey(containerId: "a")) == 9)
        }
    }

    /// A user above a lowered limit can still change and shrink the state, but not grow it.
    @Test func aUserAboveALoweredLimitMayShrink() throws {
        try withStore { store, _ throws in
            let generous = UserStateLimits(containers: 10)
            for id in ["a", "b", "c", "d", "e"] { _ = try store.update(userId: "u", eventId: nil, generous.enforcing(Self.addContainer(id))) }
            _ = try store.update(userId: "u", eventId: nil, Self.limits.enforcing(Self.addContainer("a")))
            _ = try store.update(
                userId: "u", eventId: nil,
                Self.limits.enforcing { state in
                    state.containers[ContainerKey(containerId: "e")] = nil
                    return []
                })
            #expect(try store.userState(userId: "u").containers.count == 4)
            #expect(throws: StateLimitExceeded(limit: .containers, maximum: 3)) {
                _ = try store.update(userId: "u", eventId: nil, Self.limits.enforcing(Self.addContainer("f")))
            }
        }
    }

    /// Each dimension is checked against its own maximum.
    @Test(arguments: UserStateLimits.Limit.allCases)
    func everyDimensionIsBounded(_ limit: UserStateLimits.Limit) throws {
        var state = UserState()
        func grow(_ state: inout UserState, _ i: Int) {
            switch limit {
            case .containers: state.containers[ContainerKey(containerId: "c\(i)")] = ContainerCount(count: i)
            case .stackDepth: state.stack.append(StackEntry(sheetId: "s\(i)", mode: .push))
            case .contentHeights: state.contentHeights[HeightKey(sheetId: "s\(i)", platform: .ios)] = 100
            case .impressions:
                state.campaign.recordImpression(
                    of: "s\(i % 2)", at: Timestamp(millisecondsSince1970: Int64(i) * 1000), keepSeconds: 86_400)
            }
        }
        let maximum = Self.limits.maximum(limit)
        for i in 0..<maximum {
            var next = state
            grow(&next, i)
            try Self.limits.check(from: state, to: next)
            state = next
        }
        var over = state
        grow(&over, maximum)
        #expect(throws: StateLimitExceeded(limit: limit, maximum: maximum)) { try Self.limits.check(from: state, to: over) }
        #expect(UserStateLimits().maximum(.containers) == 256)
    }
}
