// Public initializers for the values other store modules (the PostgreSQL backend) build.

extension EmbeddedMigration {
    /// What the EmbedMigrations plugin's generated code calls, also from other store modules.
    public init(shippedVersion version: Int, name: String, fileName: String, bytes: [UInt8]) {
        self.version = version
        self.name = name
        self.fileName = fileName
        self.bytes = bytes
    }
}

extension WriteStatistics {
    /// Statistics of a backend without WAL checkpoints.
    public init(updates: Int, commits: Int, largestBatch: Int) {
        self.updates = updates
        self.commits = commits
        self.largestBatch = largestBatch
    }
}
