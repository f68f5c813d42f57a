import SQLiteKit
import SheetStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Optional where Wrapped == Connection {
    /// The connection held here, or a new one to `path` (set up by `prepare`) that is kept here from
    /// now on. A connection dropped after a fault (`nil`) is reopened this way on next use.
    mutating func opened(
        path: String, flags: OpenFlags, options: Connection.Options,
        prepare: (Connection) throws(SQLiteError) -> Void = { _ in }
    ) throws(SQLiteError) -> Connection {
        if let self { return self }
        let db = try Connection(path: path, flags: flags, options: options)
        try prepare(db)
        self = db
        return db
    }
}

func createParentDirectory(of path: String) throws(StoreError) {
    do {
        try DatabaseFiles.createParentDirectory(of: path)
    } catch {
        throw .unavailable(error.description)
    }
}
