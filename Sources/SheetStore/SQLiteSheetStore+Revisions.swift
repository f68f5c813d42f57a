import SQLiteKit
import SheetPolicy

/// Catalog history on SQLite (`migrations/0008_catalog_revisions.sql`): each revision copies the
/// `sheets` rows and the settings in the transaction that appends it.
extension SQLiteSheetStore {
    public func appendCatalogRevision(author: RevisionAuthor, keep: Int) throws(StoreError) -> CatalogRevision {
        try write { db in
            try db.transaction(.immediate) { try Self.appendRevision(author: author, restoredFrom: nil, keep: keep, db) }
        }
    }

    public func catalogRevisions(before: Int64?, limit: Int) throws(StoreError) -> [CatalogRevision] {
        try read { db in
            try db.query(
                Self.selectRevision + " WHERE r.revision < ?1 ORDER BY r.revision DESC LIMIT ?2",
                [.integer(before ?? Int64.max), .integer(Int64(limit))], row: Self.revision)
        }
    }

    public func catalogRevision(_ number: Int64) throws(StoreError) -> CatalogRevision? {
        try read { db in try Self.loadRevision(number, db) }
    }

    public func restoreCatalogRevision(_ number: Int64, record: CatalogWriteRecord) throws(StoreError) -> CatalogRevision? {
        try write { db in
            try db.transaction(.immediate) { () throws -> CatalogRevision? in
                guard try db.scalar("SELECT 1 FROM catalog_revisions WHERE revision = ?1", [.integer(number)]) != nil else { return nil }
                try ExperimentIdentitySQL.enforce(record.experiments, SQLiteSession(db))
                try db.run("DELETE FROM sheets")
                try db.run(
                    """
                    INSERT INTO sheets (id, definition, created_at, updated_at)
                    SELECT id, definition, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
                    FROM catalog_revision_sheets WHERE revision = ?1
                    """, [.integer(number)])
                try db.run(
                    """
                    INSERT INTO settings (id, global_cap_max, global_cap_period_seconds, min_interval_seconds)
                    SELECT 1, global_cap_max, global_cap_period_seconds, min_interval_seconds FROM catalog_revisions WHERE revision = ?1
                    ON CONFLICT (id) DO UPDATE SET global_cap_max = excluded.global_cap_max,
                        global_cap_period_seconds = excluded.global_cap_period_seconds,
                        min_interval_seconds = excluded.min_interval_seconds
                    """, [.integer(number)])
                return try Self.appendRevision(author: record.author, restoredFrom: number, keep: record.keep, db)
            }
        }
    }

    static func appendRevision(author: RevisionAuthor, restoredFrom: Int64?, keep: Int, _ db: Connection) throws -> CatalogRevision {
        try db.run(
            """
            INSERT INTO catalog_revisions (created_at, actor, comment, restored_from, global_cap_max, global_cap_period_seconds,
                min_interval_seconds)
            SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?1, ?2, ?3, s.global_cap_max, s.global_cap_period_seconds, s.min_interval_seconds
            FROM (SELECT 1) LEFT JOIN settings s ON s.id = 1
            """, [.text(author.actor), author.comment.map { .text($0) } ?? .null, restoredFrom.map { .integer($0) } ?? .null])
        let number = db.lastInsertRowID
        try db.run("INSERT INTO catalog_revision_sheets (revision, id, definition) SELECT ?1, id, definition FROM sheets", [.integer(number)])
        // Retention: the revisions below the newest `keep` go (their sheets by cascade).
        try db.run("DELETE FROM catalog_revisions WHERE revision <= ?1", [.integer(number - Int64(max(1, keep)))])
        return try db.query(selectRevision + " WHERE r.revision = ?1", [.integer(number)], row: revision)[0]
    }

    private static func loadRevision(_ number: Int64, _ db: Connection) throws -> CatalogRevision? {
        guard var found = try db.query(selectRevision + " WHERE r.revision = ?1", [.integer(number)], row: revision).first else {
            return nil
        }
        found.sheets = try db.query("SELECT id, definition FROM catalog_revision_sheets WHERE revision = ?1 ORDER BY id", [.integer(number)]) {
            StoredSheet(id: $0.string(at: 0), json: $0.string(at: 1))
        }
        return found
    }

    private static let selectRevision = """
        SELECT r.revision, r.created_at, r.actor, r.comment, r.restored_from, r.global_cap_max, r.global_cap_period_seconds,
            r.min_interval_seconds, (SELECT count(*) FROM catalog_revision_sheets s WHERE s.revision = r.revision)
        FROM catalog_revisions r
        """

    private static func revision(_ row: Statement) -> CatalogRevision {
        CatalogRevision(
            number: row.int64(at: 0), createdAt: row.string(at: 1), actor: row.string(at: 2),
            comment: row.isNull(at: 3) ? nil : row.string(at: 3), restoredFrom: row.isNull(at: 4) ? nil : row.int64(at: 4),
            settings: CampaignSettings(
                globalCap: row.isNull(at: 5) || row.isNull(at: 6)
                    ? nil : FrequencyCap(max: Int(row.int64(at: 5)), periodSeconds: Int(row.int64(at: 6))),
                minIntervalSeconds: row.isNull(at: 7) ? nil : Int(row.int64(at: 7))),
            sheets: [], sheetCount: Int(row.int64(at: 8)))
    }
}
