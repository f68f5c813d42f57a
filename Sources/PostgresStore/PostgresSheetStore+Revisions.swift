import PostgresKit
import SheetPolicy
public import SheetStore

/// Catalog history on PostgreSQL (`migrations/postgres/0008_catalog_revisions.sql`): each revision
/// copies the `sheets` rows and the settings in the transaction that appends it; a restore bumps the
/// catalog version and notifies the replicas like any catalog write.
extension PostgresSheetStore {
    public func appendCatalogRevision(author: RevisionAuthor, keep: Int) throws(StoreError) -> CatalogRevision {
        try read { db in
            try Self.transaction(db) { try Self.appendRevision(author: author, restoredFrom: nil, keep: keep, db) }
        }
    }

    public func catalogRevisions(before: Int64?, limit: Int) throws(StoreError) -> [CatalogRevision] {
        try read { db in
            try db.query(
                Self.selectRevision + " WHERE r.revision < $1 ORDER BY r.revision DESC LIMIT $2",
                [.int(before ?? Int64.max), .int(Int64(limit))]
            ).map(Self.revision)
        }
    }

    public func catalogRevision(_ number: Int64) throws(StoreError) -> CatalogRevision? {
        try read { db in try Self.loadRevision(number, db) }
    }

    public func restoreCatalogRevision(_ number: Int64, record: CatalogWriteRecord) throws(StoreError) -> CatalogRevision? {
        try read { db in
            try Self.transaction(db) { () throws -> CatalogRevision? in
                // FOR UPDATE: retention in a concurrent transaction cannot drop it meanwhile.
                guard try !db.query("SELECT 1 FROM catalog_revisions WHERE revision = $1 FOR UPDATE", [.int(number)]).isEmpty else {
                    return nil
                }
                try ExperimentIdentitySQL.enforce(record.experiments, PostgresSession(db))
                try db.query("DELETE FROM sheets")
                try db.query(
                    "INSERT INTO sheets (id, definition) SELECT id, definition FROM catalog_revision_sheets WHERE revision = $1",
                    [.int(number)])
                try db.query(
                    """
                    INSERT INTO settings (id, global_cap_max, global_cap_period_seconds, min_interval_seconds)
                    SELECT 1, global_cap_max, global_cap_period_seconds, min_interval_seconds FROM catalog_revisions WHERE revision = $1
                    ON CONFLICT (id) DO UPDATE SET global_cap_max = excluded.global_cap_max,
                        global_cap_period_seconds = excluded.global_cap_period_seconds,
                        min_interval_seconds = excluded.min_interval_seconds
                    """, [.int(number)])
                try notifier.catalogChanged(db)
                return try Self.appendRevision(author: record.author, restoredFrom: number, keep: record.keep, db)
            }
        }
    }

    static func appendRevision(author: RevisionAuthor, restoredFrom: Int64?, keep: Int, _ db: PostgresConnection) throws -> CatalogRevision {
        let inserted = try db.query(
            """
            INSERT INTO catalog_revisions (actor, comment, restored_from, global_cap_max, global_cap_period_seconds, min_interval_seconds)
            SELECT $1, $2, $3, s.global_cap_max, s.global_cap_period_seconds, s.min_interval_seconds
            FROM (SELECT 1) one LEFT JOIN settings s ON s.id = 1
            RETURNING revision
            """, [.text(author.actor), author.comment.map { .text($0) } ?? .null, restoredFrom.map { .int($0) } ?? .null])
        let number = Int64(inserted[0].int(at: 0))
        try db.query("INSERT INTO catalog_revision_sheets (revision, id, definition) SELECT $1, id, definition FROM sheets", [.int(number)])
        // Retention: the revisions below the newest `keep` go (their sheets by cascade).
        try db.query("DELETE FROM catalog_revisions WHERE revision <= $1", [.int(number - Int64(max(1, keep)))])
        return revision(try db.query(selectRevision + " WHERE r.revision = $1", [.int(number)])[0])
    }

    private static func loadRevision(_ number: Int64, _ db: PostgresConnection) throws -> CatalogRevision? {
        guard let row = try db.query(selectRevision + " WHERE r.revision = $1", [.int(number)]).first else { return nil }
        var found = revision(row)
        found.sheets = try db.query(
            "SELECT id, definition FROM catalog_revision_sheets WHERE revision = $1 ORDER BY id COLLATE \"C\"", [.int(number)]
        ).map { StoredSheet(id: $0.string(at: 0), json: $0.string(at: 1)) }
        return found
    }

    private static let selectRevision = """
        SELECT r.revision, to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), r.actor, r.comment,
            r.restored_from, r.global_cap_max, r.global_cap_period_seconds, r.min_interval_seconds,
            (SELECT count(*) FROM catalog_revision_sheets s WHERE s.revision = r.revision)
        FROM catalog_revisions r
        """

    private static func revision(_ row: PostgresRow) -> CatalogRevision {
        CatalogRevision(
            number: Int64(row.int(at: 0)), createdAt: row.string(at: 1), actor: row.string(at: 2), comment: row.optionalString(at: 3),
            restoredFrom: row.optionalInt(at: 4).map(Int64.init),
            settings: CampaignSettings(
                globalCap: row.optionalInt(at: 5).flatMap { max in row.optionalInt(at: 6).map { FrequencyCap(max: max, periodSeconds: $0) } },
                minIntervalSeconds: row.optionalInt(at: 7)),
            sheets: [], sheetCount: row.int(at: 8))
    }
}
