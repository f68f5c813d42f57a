import Concurrency
import PostgresKit
public import SheetPolicy
public import SheetStore

/// What replicas sharing the database need: versions to check caches against, and notifications.
///
/// Every user write (an event's transaction, an erase) bumps the version in the user's `user_states`
/// row from one sequence (an erase deletes the row: version 0); every catalog write bumps `catalog_version`. The same transaction sends one NOTIFY on the
/// store's channel (one per group-committed batch, not one per event: a transaction that notified
/// takes a global lock at commit, so fewer is better), delivered to every listener when it commits.
extension PostgresSheetStore: SharedSheetStore {
    /// The user's versions and state (NULL: no row), in one statement, so one snapshot: the state
    /// read is the state at that user version (0 for a user without a row).
    static let versionedLoadSQL = """
        SELECT coalesce(s.version, 0)::text, coalesce((SELECT version FROM catalog_version), 0)::text, s.state
        FROM (SELECT $1::text AS id) AS u LEFT JOIN user_states s ON s.user_id = u.id
        """

    /// Both versions alone: the cache-hit path.
    static let versionsSQL = """
        SELECT coalesce((SELECT version FROM user_states WHERE user_id = $1), 0)::text,
               coalesce((SELECT version FROM catalog_version), 0)::text
        """

    public func userState(userId: String, unlessUserVersion: Int64?) throws(StoreError) -> (versions: SharedVersions, state: UserState?) {
        try read { db in
            if let unlessUserVersion {
                // A cached answer exists: usually still current (one primary-key read); after a write
                // of this user, a second round trip reads the state.
                let row = try db.query(Self.versionsSQL, [.text(userId)])[0]
                let versions = SharedVersions(user: Int64(row.string(at: 0)) ?? 0, catalog: Int64(row.string(at: 1)) ?? 0)
                if versions.user == unlessUserVersion { return (versions, nil) }
            }
            guard let row = try db.query(Self.versionedLoadSQL, [.text(userId)]).first else {
                throw StoreError.failure("the version row is missing")
            }
            let versions = SharedVersions(user: Int64(row.string(at: 0)) ?? 0, catalog: Int64(row.string(at: 1)) ?? 0)
            return (versions, try PostgresUserStateSQL.state(row, at: 2))
        }
    }

    /// The versions of the users in `$1` (kind 0, by user id, in any order; 0 for a user without a
    /// row) with the catalog's, and the states of the users in `$2` (kind 1), in one statement: one
    /// snapshot.
    static let batchStatesSQL = """
        SELECT u.id, 0, coalesce(s.version, 0)::text, coalesce((SELECT version FROM catalog_version), 0)::text, NULL::bytea
        FROM unnest($1::text[]) AS u(id) LEFT JOIN user_states s ON s.user_id = u.id
        UNION ALL
        SELECT s.user_id, 1, NULL::text, NULL::text, s.state FROM user_states s WHERE s.user_id = ANY($2::text[])
        """

    public func versions(
        userIds: [String], loading: [String]
    ) throws(StoreError) -> (
        users: [Int64], catalog: Int64, states: [String: UserState]
    ) {
        guard !userIds.isEmpty else { return ([], try catalogVersion(), [:]) }
        return try read { db in
            let rows = try db.query(Self.batchStatesSQL, [.text(Self.arrayLiteral(userIds)), .text(Self.arrayLiteral(loading))])
            var versions: [String: Int64] = [:]
            var catalog: Int64?
            var states: [String: UserState] = [:]
            for row in rows {
                if row.int(at: 1) == 0 {
                    versions[row.string(at: 0)] = Int64(row.string(at: 2)) ?? 0
                    catalog = Int64(row.string(at: 3)) ?? 0
                } else {
                    states[row.string(at: 0)] = try PostgresUserStateSQL.state(row, at: 4)
                }
            }
            guard let catalog, versions.count == Set(userIds).count else {
                throw StoreError.failure("\(versions.count) versions for \(userIds.count) users")
            }
            for userId in loading where states[userId] == nil { states[userId] = UserState() }
            return (userIds.map { versions[$0] ?? 0 }, catalog, states)
        }
    }

    /// A text[] literal: every element double-quoted, `"` and `\` escaped with a backslash. Built
    /// from UTF-8 bytes (both escaped characters are ASCII, so no multi-byte sequence is split).
    static func arrayLiteral(_ elements: [String]) -> String {
        var bytes: [UInt8] = []
        var capacity = 2
        for element in elements { capacity += element.utf8.count + 3 }
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    public func catalogVersion() throws(StoreError) -> Int64 {
        try read { db in Int64(try db.scalar("SELECT version FROM catalog_version") ?? "0") ?? 0 }
    }

    public func listen(_ handler: @escaping @Sendable (SharedChange) -> Void) {
        let notifier = self.notifier
        let listener = PostgresListener(connector: connector, channel: notifier.channel) { event in
            switch event {
            case .listening: handler(.listenerReset(connected: true))
            case .lost: handler(.listenerReset(connected: false))
            case .notification(let note):
                if let change = notifier.change(from: note.payload) { handler(change) }
            }
        }
        guard installListener(listener) else { return }
        startDetachedThread(named: "pg-listener") { listener.run() }
    }

    public func syncChanges(_ completion: @escaping @Sendable (Bool) -> Void) {
        guard let listener = currentListener else { return completion(false) }
        listener.sync(completion)
    }

    public var changeSyncRoundTrips: Int { currentListener?.barrierRoundTrips ?? 0 }

    /// Stops the listener (notifications are no longer heard; versions still keep reads exact).
    public func stopListening() { currentListener?.stop() }

    /// The listening session's backend pid (0 while none), for tests that end it.
    public var listenerBackendPID: Int32 { currentListener?.backendPID ?? 0 }
}

/// The store's NOTIFY side: its channel and this process's id; what is sent is a
/// `ReplicaNotification`. A batch's users are split over several notifications under PostgreSQL's
/// payload limit (still one transaction, so still one commit-time lock).
struct ChangeNotifier: Sendable {
    /// One channel per schema: tests (and deployments) sharing a server in separate schemas do not
    /// hear each other.
    let channel: String
    /// A random id of this store (process), so its listener skips the changes it made itself.
    let instance: String

    init(schema: String) {
        channel = "sheetd:" + schema
        instance = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    }

    /// Payloads naming `userIds` (deduplicated, in order), each under the size limit.
    func userPayloads(_ userIds: some Sequence<String>) -> [String] {
        ReplicaNotification.users(userIds, from: instance).map(\.payload)
    }

    var catalogPayload: String { ReplicaNotification(instance: instance, change: .catalog).payload }

    /// The same as `notify`, as SQL text to run in one simple query before the COMMIT (the writer
    /// saves a round trip per batch). Literals are escape strings (`E'...'`, backslash and quote
    /// doubled), which read the same whatever `standard_conforming_strings` says.
    func notifyingSQL(_ payloads: [String]) -> String {
        payloads.map { "SELECT pg_notify(\(Self.literal(channel)), \(Self.literal($0)));" }.joined()
    }

    static func literal(_ text: String) -> String {
        var quoted = "E'"
        for character in text where character != "\0" {
            switch character {
            case "'": quoted += "''"
            case "\\": quoted += "\\\\"
            default: quoted.append(character)
            }
        }
        return quoted + "'"
    }

    /// Sends the notifications inside the caller's open transaction (delivered at its commit).
    func notify(_ payloads: [String], _ db: PostgresConnection) throws {
        for payload in payloads { try db.query("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)]) }
    }

    /// Bumps the catalog version and notifies, inside the caller's open transaction.
    func catalogChanged(_ db: PostgresConnection) throws {
        try db.query("UPDATE catalog_version SET version = version + 1")
        try notify([catalogPayload], db)
    }

    /// What a payload of another instance says; nil for this instance's own and for unknown payloads.
    func change(from payload: String) -> SharedChange? {
        guard let notification = ReplicaNotification(payload: payload), notification.instance != instance else { return nil }
        switch notification.change {
        case .users(let userIds): return .users(userIds)
        case .catalog: return .catalog
        }
    }
}
