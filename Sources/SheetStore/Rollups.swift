public import SheetPolicy

/// How long the store keeps what is not a user's state: the per-sheet rollups behind the stats
/// route and the processed event ids behind replays. One value for every backend and every writer.
public struct StoreRetention: Sendable, Equatable {
    /// Hour rollups older than this are folded into the sheet's archive row (kept for the totals
    /// without `since`) and deleted.
    public var rollupSeconds: Int64
    /// Processed event ids older than this are forgotten (the API promises at least 24 h).
    public var eventIdSeconds: Int64
    /// And at most this many of a user's latest event ids are kept: a retry is of a recent event, and
    /// the ids of one busy user must not grow the database without limit.
    public var eventIdsPerUser: Int

    public init(rollupSeconds: Int64 = 400 * 86_400, eventIdSeconds: Int64 = 7 * 86_400, eventIdsPerUser: Int = 64) {
        self.rollupSeconds = rollupSeconds
        self.eventIdSeconds = eventIdSeconds
        self.eventIdsPerUser = eventIdsPerUser
    }

    public static let `default` = StoreRetention()

    /// A writer runs a prune step every this many committed transactions (and one at start).
    public static let pruneEveryCommits = 512
    /// Rows one prune step deletes at most (per table), so that a prune never holds the writer long.
    public static let pruneBatch = 500
    /// Event ids of one user deleted per transaction when the user is erased (the rest in the next
    /// transactions, other users' writes in between).
    public static let eraseBatch = 1_000
}

/// The time buckets of the rollups: UTC hours, numbered from 1970-01-01T00:00Z.
public enum RollupBucket {
    static let milliseconds: Int64 = 3_600_000
    /// The row of a sheet that holds what retention folded away (and, after migration 6, what the
    /// activity log no longer had: erased users' events). Counted without `since` only; no time is
    /// that early.
    public static let archive: Int64 = -1_000_000_000

    /// The bucket holding `time`.
    public static func of(_ time: Timestamp) -> Int64 {
        let (q, r) = time.millisecondsSince1970.quotientAndRemainder(dividingBy: milliseconds)
        return r < 0 ? q - 1 : q
    }

    /// The first bucket that starts at or after `time`: a `since` counts whole hours from there.
    public static func firstStarting(atOrAfter time: Timestamp) -> Int64 {
        let (q, r) = time.millisecondsSince1970.quotientAndRemainder(dividingBy: milliseconds)
        return r > 0 ? q + 1 : q
    }

    /// Where `bucket` starts.
    public static func start(of bucket: Int64) -> Timestamp {
        let (ms, overflow) = bucket.multipliedReportingOverflow(by: milliseconds)
        return Timestamp(millisecondsSince1970: overflow ? (bucket < 0 ? .min : .max) : ms)
    }
}

/// One sheet's counters in one bucket (or summed over several): the columns of `sheet_rollups`.
///
/// `users` counts the users whose latest impression of the sheet (the last entry of the impression
/// log in their state, which is always kept) falls in the bucket: a user moves to a later bucket
/// with a later impression, and leaves when erased. So the distinct users with an impression from
/// a bucket on are the sum of `users` from that bucket on: exact, and written only when a user's
/// latest impression changes hour.
public struct RollupCounters: Sendable, Equatable {
    /// The columns, in this order; the dismissal methods are `DismissMethod`'s.
    public static let columns: [String] =
        ["impressions", "users"] + DismissMethod.allCases.map { "dismissed_" + $0.rawValue.lowercased() } + ["latch_releases", "opened_from"]
    static let dismissalOffset = 2

    public var values: [Int64]

    public init() { values = Array(repeating: 0, count: Self.columns.count) }

    public init(values: [Int64]) {
        precondition(values.count == Self.columns.count)
        self.values = values
    }

    var isZero: Bool { values.allSatisfy { $0 == 0 } }

    mutating func count(_ record: SheetActivity) {
        switch record.kind {
        case .impression: values[0] += 1
        case .dismissal:
            // A method outside `DismissMethod` has no column (the service emits none).
            if let method = record.method.flatMap(DismissMethod.init(rawValue:)), let i = DismissMethod.allCases.firstIndex(of: method) {
                values[Self.dismissalOffset + i] += 1
            }
        case .latchRelease: values[values.count - 2] += 1
        case .opened: values[values.count - 1] += 1
        case .exposure, .experimentImpression, .conversion, .pin: break
        }
    }

    /// The stats route's figures.
    public var stats: SheetStats {
        var dismissals: [String: Int] = [:]
        for (i, method) in DismissMethod.allCases.enumerated() where values[Self.dismissalOffset + i] != 0 {
            dismissals[method.rawValue] = Int(values[Self.dismissalOffset + i])
        }
        return SheetStats(
            impressions: Int(values[0]), uniqueUsers: Int(values[1]), dismissals: dismissals,
            latchReleases: Int(values[values.count - 2]), openedFrom: Int(values[values.count - 1]))
    }
}

/// The rollup changes of a batch of committed updates (or of an erase), one entry per (sheet,
/// bucket): the writer adds them with one upsert per entry, in key order, in the batch's transaction.
public struct RollupDeltas: Sendable {
    public struct Key: Hashable, Comparable, Sendable {
        public var sheetId: String
        public var bucket: Int64
        public static func < (a: Key, b: Key) -> Bool {
            // Byte order, the same on every writer (the order their row locks are taken in).
            a.sheetId == b.sheetId ? a.bucket < b.bucket : a.sheetId.utf8.lexicographicallyPrecedes(b.sheetId.utf8)
        }
    }

    private var rows: [Key: RollupCounters] = [:]

    public init() {}

    public var isEmpty: Bool { rows.isEmpty }

    /// The entries to write, in key order; entries that add nothing are left out.
    public var sorted: [(key: Key, counters: RollupCounters)] {
        rows.filter { !$0.value.isZero }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// One committed update of a user: its activity records, and the move of the user's latest
    /// impression of each sheet between `old` and `new` (its state before and after).
    public mutating func add(_ activity: [SheetActivity], from old: UserState, to new: UserState) {
        for record in activity where !record.isExperimentFact {
            rows[Key(sheetId: record.sheetId, bucket: RollupBucket.of(record.at)), default: RollupCounters()].count(record)
        }
        guard old.campaign.impressions != new.campaign.impressions else { return }
        for sheetId in Set(old.campaign.impressions.keys).union(new.campaign.impressions.keys) {
            let before = old.campaign.impressions[sheetId]?.last.map(RollupBucket.of)
            let after = new.campaign.impressions[sheetId]?.last.map(RollupBucket.of)
            guard before != after else { continue }
            if let before { rows[Key(sheetId: sheetId, bucket: before), default: RollupCounters()].values[1] -= 1 }
            if let after { rows[Key(sheetId: sheetId, bucket: after), default: RollupCounters()].values[1] += 1 }
        }
    }

    /// Erasing a user: they leave the unique users (their counted events stay).
    public mutating func erase(_ state: UserState) {
        add([], from: state, to: UserState())
    }
}

/// The width of a stats series' buckets: a UTC hour (one rollup row) or a UTC day (24 of them).
public enum StatsBucketWidth: String, Sendable, CaseIterable {
    case hour, day
    public var hours: Int64 { self == .hour ? 1 : 24 }
}

/// The hours a stats series counts and how they are bucketed: the whole UTC hours from the first
/// hour boundary at or after `since` up to the last boundary at or before `until` (not after 1970
/// begins), grouped in UTC hours or days. A day bucket at either end may hold only part of its day.
public struct RollupRange: Sendable, Equatable {
    /// The first hour counted and the hour after the last (`firstHour ... endHour - 1`, maybe none).
    public let firstHour: Int64
    public let endHour: Int64
    public let width: StatsBucketWidth

    public init(since: Timestamp, until: Timestamp, width: StatsBucketWidth) {
        firstHour = max(0, RollupBucket.firstStarting(atOrAfter: since))
        endHour = max(firstHour, RollupBucket.of(until))
        self.width = width
    }

    /// The buckets of the series, the empty ones included.
    public var bucketCount: Int { endHour > firstHour ? Int(group(endHour - 1) - group(firstHour) + 1) : 0 }
    /// Where counting starts and ends (the hour boundaries).
    public var countedFrom: Timestamp { RollupBucket.start(of: firstHour) }
    public var countedUntil: Timestamp { RollupBucket.start(of: endHour) }

    /// The bucket holding hour `hour` (hours are not negative here, so this is `RollupSQL.series`' division).
    func group(_ hour: Int64) -> Int64 { hour / width.hours }
}

/// One bucket of a stats series: where it starts (a UTC hour or midnight) and its counters.
public struct SheetStatsBucket: Sendable, Equatable {
    public var start: Timestamp
    public var stats: SheetStats
    public init(start: Timestamp, stats: SheetStats) {
        self.start = start
        self.stats = stats
    }
}

/// The rollup SQL both backends run, written once with `$N` parameters (see `SQLDialect`). Column
/// names come from `RollupCounters.columns`.
public enum RollupSQL {
    public static let columnList = RollupCounters.columns.joined(separator: ", ")
    static let sums = RollupCounters.columns.map { "coalesce(sum(\($0)), 0)" }.joined(separator: ", ")
    public static let additions = RollupCounters.columns.map { "\($0) = sheet_rollups.\($0) + excluded.\($0)" }.joined(separator: ", ")

    /// One (sheet, bucket) entry added: `$1` sheet, `$2` bucket, then the counters.
    public static let upsert = """
        INSERT INTO sheet_rollups (sheet_id, bucket, \(columnList))
        VALUES (\((1...(RollupCounters.columns.count + 2)).map { "$\($0)" }.joined(separator: ", ")))
        ON CONFLICT (sheet_id, bucket) DO UPDATE SET \(additions)
        """

    /// One sheet's counters summed from bucket `$2` on (the archive's bucket: everything).
    public static let stats = "SELECT \(sums) FROM sheet_rollups WHERE sheet_id = $1 AND bucket >= $2"

    /// One sheet's counters per bucket of `$4` hours over the hours `$2 ..< $3` (see `RollupRange`):
    /// the bucket's number (hour / `$4`), then the sums; buckets without rows are left out.
    public static let series = """
        SELECT bucket / $4 AS n, \(sums) FROM sheet_rollups
        WHERE sheet_id = $1 AND bucket >= $2 AND bucket < $3 GROUP BY n ORDER BY n
        """

    /// The series from the rows of `series` (bucket number, counters): every bucket of the range, in
    /// order, those without rows at zero.
    public static func series(from rows: [(bucket: Int64, values: [Int64])], range: RollupRange) -> [SheetStatsBucket] {
        let counted = Dictionary(rows.map { ($0.bucket, $0.values) }, uniquingKeysWith: { first, _ in first })
        guard range.bucketCount > 0 else { return [] }
        let first = range.group(range.firstHour)
        return (first..<(first + Int64(range.bucketCount))).map { bucket in
            let values = counted[bucket] ?? Array(repeating: 0, count: RollupCounters.columns.count)
            return SheetStatsBucket(start: RollupBucket.start(of: bucket * range.width.hours), stats: RollupCounters(values: values).stats)
        }
    }

    /// The arguments of `series` for a range, after the sheet id.
    public static func seriesArguments(_ range: RollupRange) -> [Int64] { [range.firstHour, range.endHour, range.width.hours] }

    /// The oldest rows past the retention (`$1`: the first bucket kept), at most `$2` of them.
    static let expired = """
        SELECT sheet_id, bucket FROM sheet_rollups WHERE bucket > \(RollupBucket.archive) AND bucket < $1
        ORDER BY bucket, sheet_id LIMIT $2
        """
    /// A prune step, first statement: folds the expired rows into their sheets' archive rows.
    public static let foldExpired = """
        INSERT INTO sheet_rollups (sheet_id, bucket, \(columnList))
        SELECT sheet_id, \(RollupBucket.archive), \(sums) FROM sheet_rollups
        WHERE (sheet_id, bucket) IN (\(expired))
        GROUP BY sheet_id
        ON CONFLICT (sheet_id, bucket) DO UPDATE SET \(additions)
        """
    /// Second statement, same transaction: deletes them.
    public static let deleteExpired = "DELETE FROM sheet_rollups WHERE (sheet_id, bucket) IN (\(expired))"

    /// The first bucket the retention keeps at `now` (Unix seconds).
    public static func firstKeptBucket(now: Int64, retention: StoreRetention) -> Int64 {
        RollupBucket.of(Timestamp(secondsSince1970: now - retention.rollupSeconds))
    }

    /// The figures of a `sheetStats` call from the row of `stats`.
    public static func stats(from values: [Int64], since: Timestamp?) -> SheetStats {
        var stats = RollupCounters(values: values).stats
        stats.countedFrom = since.map { RollupBucket.start(of: RollupBucket.firstStarting(atOrAfter: $0)) }
        return stats
    }

    /// The bucket `stats` counts from.
    public static func firstBucket(since: Timestamp?) -> Int64 {
        since.map(RollupBucket.firstStarting(atOrAfter:)) ?? RollupBucket.archive
    }
}

/// The processed event ids' SQL both backends run (`$N` parameters, see `RollupSQL`). A user's ids
/// are numbered (`seq`, per user) so that keeping the latest N is a bounded range delete.
public enum ProcessedEventSQL {
    static let nextSeq = "(SELECT coalesce(max(seq), 0) FROM processed_events WHERE user_id = $1)"

    /// The outcome of `$2` if the user `$1` has processed it.
    public static let replay = "SELECT outcome FROM processed_events WHERE user_id = $1 AND event_id = $2"
    /// Records event `$2` of user `$1` with its outcome `$3` at `$4` (Unix seconds), numbered after the user's last.
    public static let insert = """
        INSERT INTO processed_events (user_id, seq, event_id, outcome, processed_at)
        VALUES ($1, \(nextSeq) + 1, $2, $3, $4)
        """
    /// Forgets user `$1`'s ids older than their latest `$2`: those that just fell out of the window
    /// (at most a batch's worth below it, so the delete stays small; anything older goes with time).
    public static let trim = """
        DELETE FROM processed_events WHERE user_id = $1
        AND seq <= \(nextSeq) - $2 AND seq > \(nextSeq) - $2 - \(trimSpan)
        """
    /// How far below the window `trim` looks: more than one batch of one user's events.
    public static let trimSpan = 512
    /// Ids older than `$1` (Unix seconds), at most `$2` of them.
    public static let deleteExpired = """
        DELETE FROM processed_events WHERE (user_id, seq) IN (
            SELECT user_id, seq FROM processed_events WHERE processed_at < $1 LIMIT $2)
        """
    /// At most `$2` of user `$1`'s ids (an erase, a part at a time).
    public static let eraseSome = """
        DELETE FROM processed_events WHERE (user_id, seq) IN (
            SELECT user_id, seq FROM processed_events WHERE user_id = $1 ORDER BY seq LIMIT $2)
        """
}
