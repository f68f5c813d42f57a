import SheetPolicy

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Catalog history (`migrations/0011_catalog_history_changes.sql`), written once for both backends.
///
/// A revision stores what it changed, not a copy of the catalog: one `catalog_revision_changes` row
/// per sheet whose definition it changed (NULL for a deletion). The catalog of revision N is, for
/// each id, the newest row at or below N that is not a deletion. Retention drops the revisions below
/// the oldest kept one (K) and the rows that K no longer needs: those superseded by a newer row at or
/// below K, and the deletions at or below K. The rows below K that stay are K's catalog.
public enum CatalogHistorySQL {
    /// Which sheets a catalog write may have changed.
    public enum Touched: Sendable, Equatable {
        /// These ids (unchanged ones are recognized and left out of the revision).
        case sheets([String])
        /// Any: the whole catalog is compared with the newest revision's.
        case all
    }

    /// What the kept history may hold: its revisions (`SHEETD_CATALOG_REVISIONS`) and the bytes of
    /// its stored sheet definitions (`SHEETD_CATALOG_HISTORY_BYTES`). The newest revision is always kept.
    public struct Budget: Sendable, Equatable {
        public var revisions: Int
        public var bytes: Int64
        public init(revisions: Int, bytes: Int64) { self.revisions = revisions; self.bytes = bytes }
    }

    /// Appends the revision recording the catalog and settings as they are now in `db`'s transaction:
    /// who, why, which revision it restores, and the sheets `touched` that differ from the newest
    /// revision. Then drops the oldest revisions beyond `budget`.
    public static func append(
        author: RevisionAuthor, restoredFrom: Int64?, touched: Touched, budget: Budget, _ db: some SQLSession
    ) throws -> CatalogRevision {
        let number = try int(
            db.rows(
                """
                INSERT INTO catalog_revisions (created_at, actor, comment, restored_from, global_cap_max, global_cap_period_seconds,
                    min_interval_seconds, sheet_count)
                SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CASE WHEN $4 = 1 THEN CAST($3 AS TEXT) END,
                    CASE WHEN CAST($5 AS BIGINT) > 0 THEN CAST($5 AS BIGINT) END,
                    s.global_cap_max, s.global_cap_period_seconds, s.min_interval_seconds, (SELECT count(*) FROM sheets)
                FROM (SELECT 1) one LEFT JOIN settings s ON s.id = 1
                RETURNING revision
                """,
                [
                    .text(utcNow()), .text(author.actor), .text(author.comment ?? ""), .integer(author.comment == nil ? 0 : 1),
                    .integer(restoredFrom ?? 0),
                ])[0][0])
        try recordChanges(of: touched, in: number, db)
        try applyBudget(budget, newest: number, db)
        return try db.rows(selectRevision + " WHERE r.revision = $1", [.integer(number)]).map(revision)[0]
    }

    /// Kept revisions below `before`, newest first, without their sheets.
    public static func revisions(before: Int64?, limit: Int, _ db: some SQLSession) throws -> [CatalogRevision] {
        try db.rows(
            selectRevision + " WHERE r.revision < $1 ORDER BY r.revision DESC LIMIT $2", [.integer(before ?? Int64.max), .integer(Int64(limit))]
        ).map(revision)
    }

    /// Revision `number` with its sheets (ordered by id, byte order); nil when it is not kept.
    public static func revision(_ number: Int64, _ db: some SQLSession) throws -> CatalogRevision? {
        guard var found = try db.rows(selectRevision + " WHERE r.revision = $1", [.integer(number)]).map(revision).first else {
            return nil
        }
        found.sheets = try sheets(at: number, db)
        return found
    }

    /// Makes the catalog and settings those of revision `number` (only the sheets that differ are
    /// written) and appends the revision recording it; nil when `number` is not kept. `lock` runs
    /// first: it serializes catalog writes where several run at once (PostgreSQL's catalog version).
    public static func restore(
        _ number: Int64, record: CatalogWriteRecord, _ db: some SQLSession, lock: () throws -> Void
    ) throws -> CatalogRevision? {
        try lock()
        guard try !db.rows("SELECT 1 FROM catalog_revisions WHERE revision = $1", [.integer(number)]).isEmpty else { return nil }
        try ExperimentIdentitySQL.enforce(record.experiments, db)
        let restored = try sheets(at: number, db)
        var current: [String: String] = [:]
        for row in try db.rows("SELECT id, definition FROM sheets", []) { current[row[0] ?? ""] = row[1] }
        var touched: [String] = []
        let now = utcNow()
        for sheet in restored {
            guard current.removeValue(forKey: sheet.id) != sheet.json else { continue }
            _ = try db.rows(
                """
                INSERT INTO sheets (id, definition, created_at, updated_at) VALUES ($1, $2, $3, $3)
                ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
                """, [.text(sheet.id), .text(sheet.json), .text(now)])
            touched.append(sheet.id)
        }
        for id in current.keys {
            _ = try db.rows("DELETE FROM sheets WHERE id = $1", [.text(id)])
            touched.append(id)
        }
        _ = try db.rows(
            """
            INSERT INTO settings (id, global_cap_max, global_cap_period_seconds, min_interval_seconds)
            SELECT 1, global_cap_max, global_cap_period_seconds, min_interval_seconds FROM catalog_revisions WHERE revision = $1
            ON CONFLICT (id) DO UPDATE SET global_cap_max = excluded.global_cap_max,
                global_cap_period_seconds = excluded.global_cap_period_seconds,
                min_interval_seconds = excluded.min_interval_seconds
            """, [.integer(number)])
        return try append(author: record.author, restoredFrom: number, touched: .sheets(touched), budget: record.budget, db)
    }

    /// Bytes of sheet definitions the history holds (what `Budget.bytes` bounds).
    public static func storedBytes(_ db: some SQLSession) throws -> Int64 {
        try int(db.rows("SELECT coalesce(sum(bytes), 0) FROM catalog_revision_changes", [])[0][0])
    }

    // MARK: - Changes

    /// Above this many ids, one comparison of the whole catalog costs less than one per id.
    static let idsComparedOneByOne = 16

    /// The newest stored row of a sheet (`c`): the definition every later revision has for it.
    private static let isNewest = "c.revision = (SELECT max(o.revision) FROM catalog_revision_changes o WHERE o.id = c.id)"

    private static func recordChanges(of touched: Touched, in number: Int64, _ db: some SQLSession) throws {
        let ids: [String?]
        switch touched {
        case .sheets(let list) where list.count <= idsComparedOneByOne: ids = Array(Set(list))
        default: ids = [nil]
        }
        for id in ids {
            let only = id.map { [ExperimentSQL.Write.Argument.text($0)] } ?? []
            // Sheets whose definition is not the newest revision's: added or changed.
            let changed = try db.rows(
                """
                SELECT s.id, s.definition FROM sheets s
                WHERE \(id == nil ? "" : "s.id = $1 AND ")NOT EXISTS (
                    SELECT 1 FROM catalog_revision_changes c WHERE c.id = s.id AND c.definition = s.definition AND \(isNewest))
                """, only)
            for row in changed {
                guard let sheetId = row[0], let definition = row[1] else { continue }
                _ = try db.rows(
                    "INSERT INTO catalog_revision_changes (revision, id, bytes, definition) VALUES ($1, $2, $3, $4)",
                    [.integer(number), .text(sheetId), .integer(Int64(definition.utf8.count)), .text(definition)])
            }
            // Sheets the newest revision has and the catalog has not: deleted.
            let deleted = try db.rows(
                """
                SELECT c.id FROM catalog_revision_changes c
                WHERE \(id == nil ? "" : "c.id = $1 AND ")c.definition IS NOT NULL AND \(isNewest)
                    AND NOT EXISTS (SELECT 1 FROM sheets s WHERE s.id = c.id)
                """, only)
            for row in deleted {
                guard let sheetId = row[0] else { continue }
                _ = try db.rows(
                    "INSERT INTO catalog_revision_changes (revision, id, bytes, definition) VALUES ($1, $2, 0, NULL)",
                    [.integer(number), .text(sheetId)])
            }
        }
    }

    private static func sheets(at number: Int64, _ db: some SQLSession) throws -> [StoredSheet] {
        try db.rows(
            """
            SELECT c.id, c.definition FROM catalog_revision_changes c
            WHERE c.revision <= $1 AND c.definition IS NOT NULL
                AND c.revision = (SELECT max(o.revision) FROM catalog_revision_changes o WHERE o.id = c.id AND o.revision <= $1)
            """, [.integer(number)]
        )
        .map { StoredSheet(id: $0[0] ?? "", json: $0[1] ?? "") }
        .sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    // MARK: - Retention

    /// Drops the oldest revisions beyond the count, then as many more as the byte budget needs.
    private static func applyBudget(_ budget: Budget, newest: Int64, _ db: some SQLSession) throws {
        try keep(from: newest - Int64(max(1, budget.revisions)) + 1, db)
        let total = try storedBytes(db)
        guard total > budget.bytes else { return }
        // What keeping from each revision K frees: the rows a newer row at or below K supersedes
        // (each row is freed from the revision of its successor on).
        var freedFrom: [Int64: Int64] = [:]
        for row in try db.rows(
            """
            SELECT successor, sum(bytes) FROM (
                SELECT c.bytes,
                    (SELECT min(n.revision) FROM catalog_revision_changes n WHERE n.id = c.id AND n.revision > c.revision) AS successor
                FROM catalog_revision_changes c) superseded
            WHERE successor IS NOT NULL GROUP BY successor
            """, [])
        {
            freedFrom[try int(row[0])] = try int(row[1])
        }
        var oldestKept = newest
        var freed: Int64 = 0
        for row in try db.rows("SELECT revision FROM catalog_revisions ORDER BY revision", []) {
            let candidate = try int(row[0])
            freed += freedFrom[candidate] ?? 0
            if total - freed <= budget.bytes {
                oldestKept = candidate
                break
            }
        }
        try keep(from: oldestKept, db)
    }

    /// Drops the revisions below `oldest`, and the rows the revision `oldest` does not need.
    private static func keep(from oldest: Int64, _ db: some SQLSession) throws {
        guard let first = try db.rows("SELECT min(revision) FROM catalog_revisions", [])[0][0].flatMap({ Int64($0) }), first < oldest else {
            return
        }
        // Rows below `first` that rows up to it superseded went when `first` became the oldest.
        _ = try db.rows(
            """
            DELETE FROM catalog_revision_changes WHERE (id, revision) IN (
                SELECT o.id, o.revision FROM catalog_revision_changes n
                JOIN catalog_revision_changes o ON o.id = n.id AND o.revision < n.revision
                WHERE n.revision > $1 AND n.revision <= $2)
            """, [.integer(first), .integer(oldest)])
        _ = try db.rows("DELETE FROM catalog_revision_changes WHERE definition IS NULL AND revision <= $1", [.integer(oldest)])
        _ = try db.rows("DELETE FROM catalog_revisions WHERE revision < $1", [.integer(oldest)])
    }

    // MARK: - Rows

    private static let selectRevision = """
        SELECT r.revision, r.created_at, r.actor, r.comment, r.restored_from, r.global_cap_max, r.global_cap_period_seconds,
            r.min_interval_seconds, r.sheet_count
        FROM catalog_revisions r
        """

    private static func revision(_ row: [String?]) throws -> CatalogRevision {
        let number = { (i: Int) in row[i].flatMap { Int64($0) } }
        let globalCap = number(5).flatMap { max in number(6).map { FrequencyCap(max: Int(max), periodSeconds: Int($0)) } }
        return CatalogRevision(
            number: try int(row[0]), createdAt: row[1] ?? "", actor: row[2] ?? "", comment: row[3], restoredFrom: number(4),
            settings: CampaignSettings(globalCap: globalCap, minIntervalSeconds: number(7).map { Int($0) }),
            sheets: [], sheetCount: Int(try int(row[8])))
    }

    private static func int(_ text: String?) throws -> Int64 {
        guard let text, let value = Int64(text) else { throw StoreError.failure("catalog history: '\(text ?? "NULL")' is not a number") }
        return value
    }

    /// Now as RFC 3339 with milliseconds in UTC (what `created_at` holds on both backends).
    static func utcNow() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(spec.tv_nsec / 1_000_000), 3))Z"
    }
}
