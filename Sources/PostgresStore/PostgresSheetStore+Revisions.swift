import PostgresKit
import SheetPolicy
public import SheetStore

/// Catalog history on PostgreSQL: `CatalogHistorySQL` in one transaction; a restore first bumps the
/// catalog version (which serializes catalog writes) and notifies the replicas like any catalog write.
extension PostgresSheetStore {
    public func appendCatalogRevision(author: RevisionAuthor, keep: Int) throws(StoreError) -> CatalogRevision {
        try read { db in
            try Self.transaction(db) {
                try CatalogHistorySQL.append(
                    author: author, restoredFrom: nil, touched: .all,
                    budget: CatalogHistorySQL.Budget(revisions: keep, bytes: CatalogRevision.defaultHistoryBytes), PostgresSession(db))
            }
        }
    }

    public func catalogRevisions(before: Int64?, limit: Int) throws(StoreError) -> [CatalogRevision] {
        try read { db in try CatalogHistorySQL.revisions(before: before, limit: limit, PostgresSession(db)) }
    }

    public func catalogRevision(_ number: Int64) throws(StoreError) -> CatalogRevision? {
        try read { db in try CatalogHistorySQL.revision(number, PostgresSession(db)) }
    }

    public func restoreCatalogRevision(_ number: Int64, record: CatalogWriteRecord) throws(StoreError) -> CatalogRevision? {
        try read { db in
            try Self.transaction(db) {
                try CatalogHistorySQL.restore(number, record: record, PostgresSession(db)) { try notifier.catalogChanged(db) }
            }
        }
    }

    /// Bytes of sheet definitions the catalog history holds.
    public func catalogHistoryBytes() throws(StoreError) -> Int64 {
        try read { db in try CatalogHistorySQL.storedBytes(PostgresSession(db)) }
    }
}
