import SheetStore

/// The store's SQL that both backends run, written once (`RollupSQL`, `ProcessedEventSQL`, with
/// `?N` parameters), in PostgreSQL's spelling (`$N`); and the rollup upsert's multi-row form.
enum PostgresSQL {
    static let replay = dollars(ProcessedEventSQL.replay)
    static let deleteExpiredEvents = dollars(ProcessedEventSQL.deleteExpired)
    static let eraseSomeEvents = dollars(ProcessedEventSQL.eraseSome)
    static let rollupStats = dollars(RollupSQL.stats)
    static let rollupSeries = dollars(RollupSQL.series)
    static let foldExpiredRollups = dollars(RollupSQL.foldExpired)
    static let deleteExpiredRollups = dollars(RollupSQL.deleteExpired)

    /// `RollupSQL.upsert` for many (sheet, bucket) entries: parallel arrays, in the order given.
    static let upsertRollups: String = {
        let values = RollupCounters.columns.indices.map { "c\($0)" }.joined(separator: ", ")
        let arrays = RollupCounters.columns.indices.map { "$\($0 + 3)::bigint[]" }.joined(separator: ", ")
        return """
            INSERT INTO sheet_rollups (sheet_id, bucket, \(RollupSQL.columnList))
            SELECT s, b, \(values) FROM unnest($1::text[], $2::bigint[], \(arrays)) WITH ORDINALITY AS t(s, b, \(values), n)
            ORDER BY n
            ON CONFLICT (sheet_id, bucket) DO UPDATE SET \(RollupSQL.additions)
            """
    }()

    /// `sql` with each `?N` parameter written `$N`.
    static func dollars(_ sql: String) -> String {
        var out = ""
        var previous: Character?
        for character in sql {
            if previous == "?" { out.removeLast(); out += character.isNumber ? "$" : "?" }
            out.append(character)
            previous = character
        }
        return out
    }
}
