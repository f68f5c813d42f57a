/// One `migrations/NNNN_name.sql` file, embedded at build time by the EmbedMigrations plugin.
public struct EmbeddedMigration: Sendable {
    public let version: Int
    public let name: String
    public let fileName: String
    /// The file's bytes exactly as shipped (its SHA-256 is the migration's checksum).
    public let bytes: [UInt8]
    public var sql: String { String(decoding: bytes, as: UTF8.self) }
}
