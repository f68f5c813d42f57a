import Dispatch
import Foundation
import PostgresKit
import SQLiteStore
import SheetPolicy
import SheetStore
import Synchronization
import Testing

@testable import PostgresStore

/// The replica side of the PostgreSQL store: versions that tell whether a cached state is current,
/// and the notifications one store's writes send to another's listener.
@Suite
struct SharedStoreTests {
    static let key = ContainerKey(containerId: "c")

    private func setCount(_ store: any SheetStore, _ user: String, _ count: Int) throws {
        _ = try store.update(userId: user, eventId: nil) { state in
            state.containers[Self.key] = ContainerCount(count: count, seq: nil)
            return []
        }
    }

    /// The state comes back with its version, and not at all when the caller's version is current;
    /// every write (on either store) and an erase move the version; the catalog version moves with
    /// every catalog write only.
    @Test func versionsTellWhetherTheStateIsCurrent() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let a = try #require(try database.open() as? PostgresSheetStore)
        let b = try #require(try database.open() as? PostgresSheetStore)
        defer { a.close(); b.close() }

        let empty = try b.userState(userId: "u", unlessUserVersion: nil)
        #expect(empty.versions.user == 0)
        #expect(empty.state == UserState())
        try setCount(a, "u", 3)
        let first = try b.userState(userId: "u", unlessUserVersion: 0)
        #expect(first.versions.user > 0)
        #expect(first.state?.containers[Self.key]?.count == 3)
        let same = try b.userState(userId: "u", unlessUserVersion: first.versions.user)
        #expect(same.versions == first.versions)
        #expect(same.state == nil)
        try setCount(b, "u", 4)
        let second = try a.userState(userId: "u", unlessUserVersion: first.versions.user)
        #expect(second.versions.user > first.versions.user)
        #expect(second.state?.containers[Self.key]?.count == 4)
        try a.deleteUser(userId: "u")
        let erased = try b.userState(userId: "u", unlessUserVersion: second.versions.user)
        #expect(erased.versions.user == 0)
        #expect(erased.state == UserState())

        let catalog0 = try b.catalogVersion()
        #expect(second.versions.catalog == catalog0)
        #expect(try a.putSheet(StoredSheet(id: "s", json: #"{"kind":"informational","screen":"x"}"#)))
        let catalog1 = try b.catalogVersion()
        #expect(catalog1 > catalog0)
        #expect(try !a.deleteSheet(id: "missing"))
        #expect(try b.catalogVersion() == catalog1, "a delete that deleted nothing changes nothing")
        #expect(try b.deleteSheet(id: "s"))
        #expect(try a.catalogVersion() > catalog1)
    }

    /// Many users' versions in one statement, in the order asked (0 for users never written), with
    /// the catalog's; the same values the one-user read gives.
    @Test func batchedVersionsMatchTheOneUserRead() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let a = try #require(try database.open() as? PostgresSheetStore)
        defer { a.close() }
        try setCount(a, "x", 1)
        try setCount(a, "y", 2)
        try setCount(a, "x", 3)
        let (users, catalog, states) = try a.versions(userIds: ["y", "nobody", "x", "y", #"q"u\o"#], loading: [])
        #expect(states.isEmpty)
        let x = try a.userState(userId: "x", unlessUserVersion: nil).versions
        let y = try a.userState(userId: "y", unlessUserVersion: nil).versions
        #expect(users == [y.user, 0, x.user, y.user, 0])
        #expect(x.user > y.user)
        #expect(catalog == x.catalog)
        #expect(PostgresSheetStore.arrayLiteral(["a", #"b"c\"#]) == #"{"a","b\"c\\"}"#)
        #expect(PostgresSheetStore.arrayLiteral([]) == "{}")
        #expect(PostgresSheetStore.arrayLiteral(["é\"日本", ""]) == #"{"é\"日本",""}"#)
        // The literal reads back as the same elements (multi-byte characters and escapes included).
        let elements = ["plain", #"q"u\o"#, "é日本🙂", "", "a,b{c}"]
        let db = try PostgresConnection(url: database.location)
        defer { db.close() }
        let back = try db.query("SELECT unnest($1::text[])", [.text(PostgresSheetStore.arrayLiteral(elements))]).map { $0.string(at: 0) }
        #expect(back == elements)
    }

    /// The batched read with states: the versions of every user asked, the states of those loading
    /// (empty for a user never written), each the one-user read's state and version.
    @Test func batchedStatesMatchTheOneUserRead() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let a = try #require(try database.open() as? PostgresSheetStore)
        defer { a.close() }
        try setCount(a, "x", 1)
        try setCount(a, "y", 2)
        _ = try a.update(userId: "y", eventId: nil) { state in
            state.latches["s"] = 3
            return []
        }
        let (users, catalog, states) = try a.versions(userIds: ["y", "nobody", "x", "y"], loading: ["y", "nobody"])
        let (x, _) = try a.userState(userId: "x", unlessUserVersion: nil)
        let (y, yState) = try a.userState(userId: "y", unlessUserVersion: nil)
        #expect(users == [y.user, 0, x.user, y.user])
        #expect(catalog == x.catalog)
        #expect(states.count == 2)
        #expect(states["y"] == yState)
        #expect(states["y"]?.latches["s"] == 3)
        #expect(states["y"]?.containers[Self.key]?.count == 2)
        #expect(states["nobody"] == UserState())
        #expect(states["x"] == nil, "x was not asked to load")
        // Nothing to load: the versions alone; no user: the catalog's alone.
        let versionsOnly = try a.versions(userIds: ["x"], loading: [])
        #expect(versionsOnly.users == [x.user] && versionsOnly.states.isEmpty)
        let nobody = try a.versions(userIds: [], loading: [])
        #expect(nobody.users.isEmpty && nobody.catalog == catalog && nobody.states.isEmpty)
    }

    /// One store's committed writes, erases and catalog changes reach the other's listener (not its
    /// own); a replayed event sends nothing.
    @Test func listenersHearTheOtherStoresChanges() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let a = try #require(try database.open() as? PostgresSheetStore)
        let b = try #require(try database.open() as? PostgresSheetStore)
        defer { a.close(); b.close() }
        let heardByA = Mutex<[SharedChange]>([])
        let heardByB = Mutex<[SharedChange]>([])
        a.listen { change in heardByA.withLock { $0.append(change) } }
        b.listen { change in heardByB.withLock { $0.append(change) } }
        #expect(waitFor { heardByB.withLock { $0.contains(.listenerReset(connected: true)) } })
        #expect(waitFor { heardByA.withLock { $0.contains(.listenerReset(connected: true)) } })

        _ = try a.update(userId: "u1", eventId: "e1") { state in
            state.containers[Self.key] = ContainerCount(count: 1, seq: nil)
            return []
        }
        _ = try a.update(userId: "u1", eventId: "e1") { _ in [] }  // replayed: nothing changed
        try a.deleteUser(userId: "u2")
        try a.putSheets([StoredSheet(id: "s", json: #"{"kind":"informational","screen":"x"}"#)])
        #expect(waitFor { heardByB.withLock { $0.contains(.catalog) } })
        let changes = heardByB.withLock { $0.filter { $0 != .listenerReset(connected: true) } }
        #expect(changes == [.users(["u1"]), .users(["u2"]), .catalog])
        #expect(heardByA.withLock { $0 } == [.listenerReset(connected: true)], "a store does not hear itself")
    }

    /// `syncChanges` answers only after every change the other store committed before the call was
    /// handed to the listener's handler (the barrier behind cached reads on replicas), and refuses
    /// (false) once the listener stopped.
    @Test func syncChangesComesAfterEveryEarlierCommitsNotification() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let a = try #require(try database.open() as? PostgresSheetStore)
        let b = try #require(try database.open() as? PostgresSheetStore)
        defer { a.close(); b.close() }
        let heard = Mutex<[String]>([])
        let listening = Atomic<Bool>(false)
        b.listen { change in
            switch change {
            case .users(let ids): heard.withLock { $0 += ids }
            case .listenerReset(let connected): listening.store(connected, ordering: .releasing)
            case .catalog: break
            }
        }
        #expect(waitFor { listening.load(ordering: .acquiring) })
        let before = b.changeSyncRoundTrips
        let outcomes = Mutex<[(heard: Bool, applied: Bool)]>([])
        for n in 0..<100 {
            let userId = "sync-\(n)"
            _ = try a.update(userId: userId, eventId: nil) { state in
                state.containers[Self.key] = ContainerCount(count: n + 1, seq: nil)
                return []
            }
            // The write is acknowledged: the very next barrier must come after its notification.
            let done = DispatchSemaphore(value: 0)
            b.syncChanges { ok in
                outcomes.withLock { $0.append((ok, heard.withLock { $0.contains(userId) })) }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 5) == .success)
        }
        let results = outcomes.withLock { $0 }
        #expect(results.count == 100)
        #expect(results.allSatisfy { $0.heard && $0.applied }, "\(results.filter { !($0.heard && $0.applied) }.count) barriers came too early")
        #expect(b.changeSyncRoundTrips > before)

        b.stopListening()
        let refused = DispatchSemaphore(value: 0)
        let answer = Mutex<Bool?>(nil)
        b.syncChanges { ok in
            answer.withLock { $0 = ok }
            refused.signal()
        }
        #expect(refused.wait(timeout: .now() + 5) == .success)
        #expect(answer.withLock { $0 } == false)
    }

    /// A batch naming more users than one payload holds is split under the 8000-byte limit.
    @Test func largeBatchesSplitTheirPayloads() {
        let notifier = ChangeNotifier(schema: "x")
        let users = (0..<300).map { "user-\($0)-" + String(repeating: "x", count: 100) }
        let payloads = notifier.userPayloads(users + users)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= ReplicaNotification.maxPayloadBytes })
        let other = ChangeNotifier(schema: "x")
        let named = payloads.flatMap { payload -> [String] in
            guard case .users(let ids) = other.change(from: payload) else { return [] }
            return ids
        }
        #expect(named == users)
        #expect(notifier.change(from: payloads[0]) == nil, "its own payloads")
        #expect(ChangeNotifier.literal(#"a'b\c"#) == #"E'a''b\\c'"#)
        #expect(notifier.notifyingSQL(["u x 1"]) == #"SELECT pg_notify(E'sheetd:x', E'u x 1');"#)
    }

    /// A notification reads back as it was sent, in the payload form replicas of earlier versions
    /// send and read; a payload of an unknown kind or shape is no notification.
    @Test func replicaNotificationsRoundTrip() {
        let users = ReplicaNotification(instance: "k3x", change: .users(["u1", "u-2", "ü"]))
        #expect(users.payload == "u k3x u1 u-2 ü")
        #expect(ReplicaNotification(payload: users.payload) == users)
        let catalog = ReplicaNotification(instance: "k3x", change: .catalog)
        #expect(catalog.payload == "c k3x")
        #expect(ReplicaNotification(payload: "c k3x") == catalog)
        for malformed in ["", "u", "c", "u k3x", "u  a", "u k3x a  b", "u k3x a ", "c k3x extra", "c ", "x k3x a", "U k3x a"] {
            #expect(ReplicaNotification(payload: malformed) == nil, "\(malformed)")
        }
        let split = ReplicaNotification.users(["a", "b", "a"], from: "k3x")
        #expect(split == [ReplicaNotification(instance: "k3x", change: .users(["a", "b"]))])
        #expect(ReplicaNotification.users([], from: "k3x").isEmpty)
    }

    private func waitFor(_ condition: () -> Bool) -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            usleep(10_000)
        }
        return false
    }
}
