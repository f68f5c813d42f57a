import Foundation
import SQLiteKit
import SheetPolicy
import TestSupport
import Testing

@testable import SQLiteStore
@testable import SheetStore

/// Random states with awkward content: empty filters, multi-byte and separator-like characters in ids,
/// extreme integers, heights that need all 17 digits.
func randomState(_ rng: inout SplitMix64) -> UserState {
    let alphabet = ["a", "b", "~", ":", "1", "é", "🚀", "-", ".", " ", "c9"]
    func id(_ rng: inout SplitMix64, allowEmpty: Bool = false) -> String {
        let length = rng.int(in: (allowEmpty ? 0 : 1)...6)
        return (0..<length).map { _ in rng.pick(alphabet) }.joined()
    }
    func integer(_ rng: inout SplitMix64) -> Int {
        rng.pick([0, 1, 7, 1_000_000, Int.max, Int.min, -3, rng.int(in: -1_000_000...1_000_000)])
    }
    var state = UserState()
    for _ in 0..<rng.int(in: 0...6) {
        state.containers[ContainerKey(containerId: id(&rng), filter: id(&rng, allowEmpty: true))] = ContainerCount(
            count: integer(&rng), seq: rng.maybe(50) { integer(&$0) })
    }
    for _ in 0..<rng.int(in: 0...3) { state.latches[id(&rng)] = integer(&rng) }
    for _ in 0..<rng.int(in: 0...4) {
        state.stack.append(
            StackEntry(sheetId: id(&rng), mode: rng.pick(OpenMode.allCases), replacedSheetId: rng.maybe(40) { id(&$0) }))
    }
    for _ in 0..<rng.int(in: 0...3) {
        let height = rng.pick([1, 10_000, 312.5, 0.1, 1.0 / 3.0, Double.random(in: 1...10_000, using: &rng)])
        state.contentHeights[HeightKey(sheetId: id(&rng), platform: rng.pick(Platform.allCases))] = height
    }
    // Campaign facts (segments may hold any text, ids the awkward alphabet).
    for _ in 0..<rng.int(in: 0...3) {
        state.campaign.impressions[id(&rng)] = (0..<rng.int(in: 0...3)).map { _ in
            Timestamp(millisecondsSince1970: Int64(rng.pick([0, -1, 1_700_000_000_123, Int(Int64.max), rng.int(in: 0...2_000_000_000_000)])))
        }
    }
    for _ in 0..<rng.int(in: 0...2) { state.campaign.impressionTotals[id(&rng)] = integer(&rng) }
    for _ in 0..<rng.int(in: 0...2) {
        state.campaign.lastDismissals[id(&rng)] = Timestamp(millisecondsSince1970: Int64(rng.int(in: -1000...2_000_000_000_000)))
    }
    state.campaign.segments = (0..<rng.int(in: 0...3)).map { _ in id(&rng, allowEmpty: true) }
    return state
}

@Suite struct UserStateCodecTests {
    /// Every state reads back equal from its bytes, and equal states give equal bytes.
    @Test func encodingRoundTripsAndIsCanonical() throws {
        var rng = SplitMix64(seed: 12)
        for _ in 0..<2000 {
            let state = randomState(&rng)
            let bytes = UserStateCodec.encode(state)
            #expect(try UserStateCodec.decode(bytes) == state)
            // The same state built in another insertion order encodes to the same bytes.
            var rebuilt = UserState(stack: state.stack, campaign: CampaignState(segments: state.campaign.segments))
            for (k, v) in state.campaign.impressions.reversed() { rebuilt.campaign.impressions[k] = v }
            for (k, v) in state.campaign.impressionTotals.reversed() { rebuilt.campaign.impressionTotals[k] = v }
            for (k, v) in state.campaign.lastDismissals.reversed() { rebuilt.campaign.lastDismissals[k] = v }
            for (k, v) in state.containers.reversed() { rebuilt.containers[k] = v }
            for (k, v) in state.latches.reversed() { rebuilt.latches[k] = v }
            for (k, v) in state.contentHeights.reversed() { rebuilt.contentHeights[k] = v }
            #expect(UserStateCodec.encode(rebuilt) == bytes)
        }
        #expect(UserStateCodec.encode(UserState()) == Array("1".utf8))
    }

    /// Truncated or altered bytes are a failure, never a crash or a silently different state.
    @Test func malformedBytesFail() throws {
        let bytes = UserStateCodec.encode(sampleState)
        for cut in 0..<bytes.count {
            let prefix = Array(bytes[..<cut])
            if let state = try? UserStateCodec.decode(prefix) {
                // A cut between records is a valid, smaller state.
                #expect(UserStateCodec.encode(state) != bytes)
            }
        }
        for bad in ["", "2", "1x", "1c3:abc", "1c99:a", "1l1:a1:x", "1s1:01:a4:jump~", "1h1:a3:ios3:abc", "1c1:a0:20:99999999999999999999~"] {
            #expect(throws: StoreError.self, "\(bad)") { try UserStateCodec.decode(Array(bad.utf8)) }
        }
    }
}

@Suite struct UserStateMigrationTests {
    /// Version 2 turns the per-table rows of version 1 into one row per user with exactly the same
    /// state (stack order, absent seq and replaced ids, every bit of the heights), and drops the tables.
    @Test func version1RowsBecomeOneRowPerUser() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let db = try Connection(path: dir.file())
        _ = try MigrationRunner(shippedMigrations.filter { $0.version == 1 }).migrate(db)
        var rng = SplitMix64(seed: 2)
        var expected: [String: UserState] = [:]
        for u in 0..<200 {
            var state = randomState(&rng)
            state.campaign = CampaignState()  // version 1 had no campaign facts
            // Version 1's columns: counts and seqs are what SQLite stores; ids are 1 to 128 characters.
            state.containers = state.containers.filter { !$0.key.containerId.isEmpty }
            let userId = "user-\(u)"
            for (key, value) in state.containers {
                try db.run(
                    "INSERT INTO container_counts (user_id, container_id, filter, count, seq) VALUES (?1, ?2, ?3, ?4, ?5)",
                    [
                        .text(userId), .text(key.containerId), .text(key.filter), .integer(Int64(value.count)),
                        value.seq.map { .integer(Int64($0)) } ?? .null,
                    ])
            }
            for (sheetId, count) in state.latches {
                try db.run(
                    "INSERT INTO latches (user_id, sheet_id, count) VALUES (?1, ?2, ?3)", [.text(userId), .text(sheetId), .integer(Int64(count))])
            }
            // Stack rows inserted top first: the order of rows must not matter.
            for (position, entry) in state.stack.enumerated().reversed() {
                try db.run(
                    "INSERT INTO stack (user_id, position, sheet_id, mode, replaced_sheet_id) VALUES (?1, ?2, ?3, ?4, ?5)",
                    [
                        .text(userId), .integer(Int64(position)), .text(entry.sheetId), .text(entry.mode.rawValue),
                        entry.replacedSheetId.map { .text($0) } ?? .null,
                    ])
            }
            for (key, height) in state.contentHeights {
                try db.run(
                    "INSERT INTO content_heights (user_id, sheet_id, platform, height) VALUES (?1, ?2, ?3, ?4)",
                    [.text(userId), .text(key.sheetId), .text(key.platform.rawValue), .real(height)])
            }
            expected[userId] = state
        }
        db.close()

        let store = try SQLiteSheetStore.open(path: dir.file())
        defer { store.close() }
        for (userId, state) in expected {
            #expect(try store.userState(userId: userId) == state, "\(userId)")
        }
        let check = try Connection(path: dir.file(), flags: [.readOnly])
        defer { check.close() }
        #expect(try check.scalar("SELECT count(*) FROM user_states") == .integer(Int64(expected.values.filter { $0 != UserState() }.count)))
        for table in ["container_counts", "latches", "stack", "content_heights"] {
            #expect(try check.scalar("SELECT count(*) FROM sqlite_schema WHERE name = ?1", [.text(table)]) == .integer(0))
        }
    }

    /// A database at version 2 (rows without campaign records) opens at version 3: its rows read the
    /// same, and take campaign facts from then on.
    @Test func version2RowsReadUnchangedAfterMigration3() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let db = try Connection(path: dir.file())
        _ = try MigrationRunner(shippedMigrations.filter { $0.version <= 2 }).migrate(db)
        var rng = SplitMix64(seed: 3)
        var state = randomState(&rng)
        while state.containers.isEmpty { state = randomState(&rng) }
        state.campaign = CampaignState()
        try db.run("INSERT INTO user_states (user_id, state) VALUES ('u', ?1)", [.blob(UserStateCodec.encode(state))])
        db.close()

        let store = try SQLiteSheetStore.open(path: dir.file())
        defer { store.close() }
        #expect(try store.userState(userId: "u") == state)
        _ = try store.update(userId: "u", eventId: nil) { s in
            s.campaign.recordImpression(of: "x", at: Timestamp(millisecondsSince1970: 7), keepSeconds: nil)
            return []
        }
        var expected = state
        expected.campaign = CampaignState(impressions: ["x": [Timestamp(millisecondsSince1970: 7)]], impressionTotals: ["x": 1])
        #expect(try store.userState(userId: "u") == expected)
    }
}

/// The campaign records added to format 1 by migration 3 (issue 15).
@Suite struct UserStateCampaignRecordTests {
    /// A row written before the campaign records decodes unchanged (no campaign facts).
    @Test func rowWithoutCampaignRecordsDecodes() throws {
        let old = Array("1c1:c0:1:31:7l1:s1:3".utf8)
        let state = try UserStateCodec.decode(old)
        #expect(state.containers == [ContainerKey(containerId: "c"): ContainerCount(count: 3, seq: 7)])
        #expect(state.latches == ["s": 3])
        #expect(state.campaign == CampaignState())
        #expect(UserStateCodec.encode(state) == old, "the encoding of a state without campaign facts is unchanged")
    }

    /// Campaign facts round trip exactly, canonically, and in the documented record layout.
    @Test func campaignRecordsRoundTrip() throws {
        var state = UserState()
        state.campaign = CampaignState(
            impressions: ["b": [Timestamp(millisecondsSince1970: 5), Timestamp(millisecondsSince1970: 5)], "a": []],
            impressionTotals: ["b": 2], lastDismissals: ["b": Timestamp(millisecondsSince1970: -1)], segments: ["x,y", "z"])
        let bytes = UserStateCodec.encode(state)
        #expect(String(decoding: bytes, as: UTF8.self) == "1i1:a0:i1:b3:5,5t1:b1:2d1:b2:-1g3:x,yg1:z")
        #expect(try UserStateCodec.decode(bytes) == state)
        #expect(throws: StoreError.self) { try UserStateCodec.decode(Array("1i1:b3:5,x".utf8)) }
    }
}
