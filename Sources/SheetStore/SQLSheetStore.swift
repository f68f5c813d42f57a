public import SheetPolicy

/// A SheetStore over SQL: what a backend provides (its sessions and a few hooks) so that the
/// catalog, settings, stats, experiment counts, user sampling and erasure below are written once
/// for both backends (see `SQLSession`). The user-state hot path (reads, the group-commit batches)
/// stays each backend's own.
public protocol SQLSheetStore: SheetStore {
    associatedtype Session: SQLSession

    /// Runs `body` on a connection for reads (SQLite: this thread's reader; PostgreSQL: a pooled one).
    func withReadSession<T>(_ body: (Session) throws -> T) throws(StoreError) -> T
    /// Runs `body` on a connection that writes outside the group-commit batches (catalog writes,
    /// erasure): SQLite's writer connection under its lock, a pooled PostgreSQL connection.
    func withWriteSession<T>(_ body: (Session) throws -> T) throws(StoreError) -> T

    /// First thing in a catalog write's transaction (PostgreSQL: locks the catalog version row, so
    /// the catalog writes of every replica run one at a time and read each other's changes).
    func catalogWriteBegins(_ session: Session) throws
    /// In a catalog write's transaction, after it changed something (PostgreSQL: bumps the catalog
    /// version and notifies the replicas).
    func catalogChanged(_ session: Session) throws
    /// In an erasure's transaction, after the user's rows are gone (PostgreSQL: notifies the replicas).
    func userErased(_ userId: String, _ session: Session) throws
}

extension SQLSheetStore {
    // MARK: - Catalog

    public func catalog() throws(StoreError) -> [StoredSheet] {
        try withReadSession { db in
            try db.query("SELECT id, definition FROM sheets ORDER BY id\(db.dialect.byteOrder)", []).map { row in
                StoredSheet(id: row.string(at: 0), json: row.string(at: 1))
            }
        }
    }

    public func putSheet(_ sheet: StoredSheet, record: CatalogWriteRecord) throws(StoreError) -> Bool {
        try catalogWrite(record, touching: .sheets([sheet.id])) { db in
            let (created, changed) = try CatalogSQL.upsert(sheet, db)
            return (created, changed)
        }
    }

    public func putSheets(_ sheets: [StoredSheet], record: CatalogWriteRecord) throws(StoreError) {
        try catalogWrite(record, touching: .sheets(sheets.map(\.id))) { db in
            var changed = false
            for sheet in sheets where try CatalogSQL.upsert(sheet, db).changed { changed = true }
            return ((), changed)
        }
    }

    public func deleteSheet(id: String, record: CatalogWriteRecord) throws(StoreError) -> Bool {
        try catalogWrite(record, touching: .sheets([id])) { db in
            let existed = try db.execute("DELETE FROM sheets WHERE id = $1", [.text(id)]) > 0
            return (existed, existed)
        }
    }

    public func adoptExperimentIdentities(_ identities: [ExperimentIdentity]) throws(StoreError) {
        guard !identities.isEmpty else { return }
        try withWriteSession { db in try db.transaction { try ExperimentIdentitySQL.adopt(identities, db) } }
    }

    /// One catalog write in one transaction: the experiments' identities checked and recorded, the
    /// change, and, when it changed anything, `catalogChanged` and its revision (which stores the
    /// `touched` sheets that differ from the newest revision: `CatalogHistorySQL`).
    public func catalogWrite<T>(
        _ record: CatalogWriteRecord, touching touched: CatalogHistorySQL.Touched, _ change: (Session) throws -> (T, changed: Bool)
    ) throws(StoreError) -> T {
        try withWriteSession { db in
            try db.transaction {
                try catalogWriteBegins(db)
                try ExperimentIdentitySQL.enforce(record.experiments, db)
                let (result, changed) = try change(db)
                if changed {
                    try catalogChanged(db)
                    _ = try CatalogHistorySQL.append(author: record.author, restoredFrom: nil, touched: touched, budget: record.budget, db)
                }
                return result
            }
        }
    }

    // MARK: - Catalog history (`CatalogHistorySQL`)

    public func appendCatalogRevision(author: RevisionAuthor, keep: Int) throws(StoreError) -> CatalogRevision {
        try withWriteSession { db in
            try db.transaction {
                try catalogWriteBegins(db)
                return try CatalogHistorySQL.append(
                    author: author, restoredFrom: nil, touched: .all,
                    budget: CatalogHistorySQL.Budget(revisions: keep, bytes: CatalogRevision.defaultHistoryBytes), db)
            }
        }
    }

    public func catalogRevisions(before: Int64?, limit: Int) throws(StoreError) -> [CatalogRevision] {
        try withReadSession { db in try CatalogHistorySQL.revisions(before: before, limit: limit, db) }
    }

    public func catalogRevision(_ number: Int64) throws(StoreError) -> CatalogRevision? {
        try withReadSession { db in try CatalogHistorySQL.revision(number, db) }
    }

    /// Like a catalog write: serialized with the others (`catalogWriteBegins`), and `catalogChanged`
    /// when the revision was still kept.
    public func restoreCatalogRevision(_ number: Int64, record: CatalogWriteRecord) throws(StoreError) -> CatalogRevision? {
        try withWriteSession { db in
            try db.transaction { () throws -> CatalogRevision? in
                try catalogWriteBegins(db)
                guard let made = try CatalogHistorySQL.restore(number, record: record, db, lock: {}) else { return nil }
                try catalogChanged(db)
                return made
            }
        }
    }

    /// Bytes of sheet definitions the catalog history holds (what `SHEETD_CATALOG_HISTORY_BYTES` bounds).
    public func catalogHistoryBytes() throws(StoreError) -> Int64 {
        try withReadSession { db in try CatalogHistorySQL.storedBytes(db) }
    }

    // MARK: - Settings and stats

    public func settings() throws(StoreError) -> CampaignSettings {
        try withReadSession { db in try CatalogSQL.settings(db) }
    }

    /// Like a catalog write (the settings travel with the catalog and its revisions).
    public func putSettings(_ settings: CampaignSettings, record: CatalogWriteRecord) throws(StoreError) {
        try catalogWrite(record, touching: .sheets([])) { db in
            guard try CatalogSQL.settings(db) != settings else { return ((), false) }
            try db.execute(
                """
                INSERT INTO settings (id, global_cap_max, global_cap_period_seconds, min_interval_seconds) VALUES (1, $1, $2, $3)
                ON CONFLICT (id) DO UPDATE SET global_cap_max = excluded.global_cap_max,
                    global_cap_period_seconds = excluded.global_cap_period_seconds,
                    min_interval_seconds = excluded.min_interval_seconds
                """,
                [
                    settings.globalCap.map { Int64($0.max) }.sqlValue, settings.globalCap.map { Int64($0.periodSeconds) }.sqlValue,
                    settings.minIntervalSeconds.map { Int64($0) }.sqlValue,
                ])
            return ((), true)
        }
    }

    public func sheetStats(sheetId: String, since: Timestamp?) throws(StoreError) -> SheetStats {
        try withReadSession { db in
            let row = try db.query(RollupSQL.stats, [.text(sheetId), .integer(RollupSQL.firstBucket(since: since))])[0]
            return RollupSQL.stats(from: RollupCounters.columns.indices.map { row.int64(at: $0) }, since: since)
        }
    }

    public func sheetStatsSeries(sheetId: String, range: RollupRange) throws(StoreError) -> [SheetStatsBucket] {
        try withReadSession { db in
            let rows = try db.query(RollupSQL.series, [.text(sheetId)] + RollupSQL.seriesArguments(range).map { .integer($0) }).map { row in
                (bucket: row.int64(at: 0), values: RollupCounters.columns.indices.map { row.int64(at: $0 + 1) })
            }
            return RollupSQL.series(from: rows, range: range)
        }
    }

    public func experimentCounts(experimentId: String) throws(StoreError) -> ExperimentCounts {
        try withReadSession { db in
            var counts = ExperimentCounts()
            for row in try db.query(ExperimentSQL.counts, [.text(experimentId)]) {
                counts.arms[row.string(at: 0)] = ExperimentArmCounts(
                    exposedUsers: row.int(at: 1), impressions: row.int(at: 2), convertedUsers: row.int(at: 3), conversions: row.int(at: 4))
            }
            if let row = try db.query(ExperimentSQL.unattributedCount, [.text(experimentId)]).first { counts.unattributed = row.int(at: 0) }
            return counts
        }
    }

    // MARK: - Users

    public func sampleUsers(from: String?, limit: Int) throws(StoreError) -> [(userId: String, state: UserState)] {
        guard limit > 0 else { return [] }
        // Every stored user has a `user_states` row (an erase removes it). Two range scans of the
        // primary key in its order (the column's collation; byte order on SQLite and on a C-collated
        // PostgreSQL database): beyond picking the start, the cost follows `limit`.
        return try withReadSession { db in
            var from = from ?? ""
            if from.isEmpty, let users = try db.query("SELECT count(*) FROM user_states", []).first?.int64(at: 0), users > 0 {
                let offset = SQLValue.integer(Int64.random(in: 0..<users))
                from = try db.scalar("SELECT user_id FROM user_states ORDER BY user_id LIMIT 1 OFFSET $1", [offset])?.text ?? ""
            }
            let rows = try db.query(
                """
                SELECT * FROM (SELECT user_id, state FROM user_states WHERE user_id >= $1 ORDER BY user_id LIMIT $2) AS after_start
                UNION ALL
                SELECT * FROM (SELECT user_id, state FROM user_states WHERE user_id < $1 ORDER BY user_id LIMIT $2) AS before_start
                """, [.text(from), .integer(Int64(limit))])
            return try rows.prefix(limit).map { row in (row.string(at: 0), try UserStateCodec.decode(row.blob(at: 1))) }
        }
    }

    public func deleteUser(userId: String) throws(StoreError) {
        // The event ids a part at a time, each part its own transaction, so that the writers take
        // other users' batches in between (see `SheetStore.deleteUser`); then the rest in one.
        let part = StoreRetention.eraseBatch
        while try withWriteSession({ db in
            try db.transaction { try db.execute(ProcessedEventSQL.eraseSome, [.text(userId), .integer(Int64(part))]) }
        }) >= part {}
        try withWriteSession { db in
            try db.transaction {
                // The row first: on PostgreSQL its lock waits for a writer holding the user, and a
                // replica that cached this user sees the version change (the row is gone: version 0).
                var rollups = RollupDeltas()
                for row in try db.query("DELETE FROM user_states WHERE user_id = $1 RETURNING state", [.text(userId)]) {
                    rollups.erase(try UserStateCodec.decode(row.blob(at: 0)))
                }
                // Taken out of the rollups' unique users, one upsert per (sheet, hour) in key order.
                for (key, counters) in rollups.sorted {
                    try db.execute(RollupSQL.upsert, [.text(key.sheetId), .integer(key.bucket)] + counters.values.map { .integer($0) })
                }
                try db.execute("DELETE FROM processed_events WHERE user_id = $1", [.text(userId)])
                try db.execute(ExperimentSQL.erase, [.text(userId)])
                try userErased(userId, db)
            }
        }
    }
}

/// The catalog's SQL that more than one feature runs.
enum CatalogSQL {
    /// Whether the row was created, and whether it changed at all (an identical definition is no
    /// change). In the catalog write's transaction, after `catalogWriteBegins`: nobody changes the
    /// row between the read and the write.
    static func upsert(_ sheet: StoredSheet, _ db: some SQLSession) throws -> (created: Bool, changed: Bool) {
        let before = try db.scalar("SELECT definition FROM sheets WHERE id = $1", [.text(sheet.id)])?.text
        guard before != sheet.json else { return (false, false) }
        try db.execute(
            """
            INSERT INTO sheets (id, definition, created_at, updated_at) VALUES ($1, $2, \(db.dialect.now), \(db.dialect.now))
            ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
            """, [.text(sheet.id), .text(sheet.json)])
        return (before == nil, true)
    }

    static func settings(_ db: some SQLSession) throws -> CampaignSettings {
        guard let row = try db.query("SELECT global_cap_max, global_cap_period_seconds, min_interval_seconds FROM settings WHERE id = 1", []).first
        else { return .off }
        return CampaignSettings(
            globalCap: row.optionalInt(at: 0).flatMap { max in row.optionalInt(at: 1).map { FrequencyCap(max: max, periodSeconds: $0) } },
            minIntervalSeconds: row.optionalInt(at: 2))
    }
}

/// The retention's prune step, run by every backend's writers (see `StoreRetention`).
public enum StorePruning {
    /// One prune step, in one short transaction: event ids past the time window, and rollup hours
    /// past theirs folded into the archive rows, at most `StoreRetention.pruneBatch` rows each.
    public static func step(now: Int64, retention: StoreRetention, _ db: some SQLSession) throws {
        let limit = SQLValue.integer(Int64(StoreRetention.pruneBatch))
        let kept = SQLValue.integer(RollupSQL.firstKeptBucket(now: now, retention: retention))
        try db.transaction {
            try db.execute(ProcessedEventSQL.deleteExpired, [.integer(now - retention.eventIdSeconds), limit])
            try db.execute(RollupSQL.foldExpired, [kept, limit])
            try db.execute(RollupSQL.deleteExpired, [kept, limit])
        }
    }
}
