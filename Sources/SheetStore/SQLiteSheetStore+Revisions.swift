import SQLiteKit
import SheetPolicy

/// Catalog history on SQLite: `CatalogHistorySQL` in the writer's or a reader's transaction.
extension SQLiteSheetStore {
    public func appendCatalogRevision(author: RevisionAuthor, keep: Int) throws(StoreError) -> CatalogRevision {
        try write { db in
            try db.transaction(.immediate) {
                try CatalogHistorySQL.append(
                    author: author, restoredFrom: nil, touched: .all,
                    budget: CatalogHistorySQL.Budget(revisions: keep, bytes: CatalogRevision.defaultHistoryBytes), SQLiteSession(db))
            }
        }
    }

    public func catalogRevisions(before: Int64?, limit: Int) throws(StoreError) -> [CatalogRevision] {
        try read { db in try CatalogHistorySQL.revisions(before: before, limit: limit, SQLiteSession(db)) }
    }

    public func catalogRevision(_ number: Int64) throws(StoreError) -> CatalogRevision? {
        try read { db in try CatalogHistorySQL.revision(number, SQLiteSession(db)) }
    }

    public func restoreCatalogRevision(_ number: Int64, record: CatalogWriteRecord) throws(StoreError) -> CatalogRevision? {
        try write { db in
            try db.transaction(.immediate) { try CatalogHistorySQL.restore(number, record: record, SQLiteSession(db), lock: {}) }
        }
    }

    /// Bytes of sheet definitions the catalog history holds.
    public func catalogHistoryBytes() throws(StoreError) -> Int64 {
        try read { db in try CatalogHistorySQL.storedBytes(SQLiteSession(db)) }
    }
}
