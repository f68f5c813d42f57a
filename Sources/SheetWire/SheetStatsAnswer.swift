import JSONKit
public import SheetPolicy

/// The answer of `GET /v1/sheets/{sheetId}/stats`: what the hour rollups count for one sheet.
public struct SheetStatsAnswer: Sendable, Equatable {
    public var sheetId: String
    /// The `since` asked for, as given; nil for the totals.
    public var since: String?
    public var impressions: Int
    public var uniqueUsers: Int
    /// Dismissals per method (every method of `DismissMethod`, 0 when none).
    public var dismissals: [String: Int]
    public var latchReleases: Int
    public var openedFrom: Int
    /// The first whole UTC hour counted (at or after `since`).
    public var countedFrom: Timestamp?

    public init(
        sheetId: String, since: String?, impressions: Int, uniqueUsers: Int, dismissals: [String: Int], latchReleases: Int,
        openedFrom: Int, countedFrom: Timestamp?
    ) {
        self.sheetId = sheetId; self.since = since; self.impressions = impressions; self.uniqueUsers = uniqueUsers
        self.dismissals = dismissals; self.latchReleases = latchReleases; self.openedFrom = openedFrom; self.countedFrom = countedFrom
    }

    /// The body; `dismissals` lists every method in `DismissMethod`'s order.
    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.member("sheetId", sheetId)
            o.member("since", since)
            Self.writeCounters(
                into: &o, impressions: impressions, uniqueUsers: uniqueUsers, dismissals: dismissals, latchReleases: latchReleases,
                openedFrom: openedFrom)
            o.member("countedFrom", countedFrom?.rfc3339)
        }
        return w.bytes
    }

    /// The counters' members, shared by the totals and each bucket of a series.
    static func writeCounters(
        into o: inout JSONWriter, impressions: Int, uniqueUsers: Int, dismissals: [String: Int], latchReleases: Int, openedFrom: Int
    ) {
        o.member("impressions", impressions)
        o.member("uniqueUsers", uniqueUsers)
        o.objectMember("dismissals") { d in
            for method in DismissMethod.allCases { d.member(method.rawValue, dismissals[method.rawValue] ?? 0) }
        }
        o.member("latchReleases", latchReleases)
        o.member("openedFrom", openedFrom)
    }
}

/// The answer of `GET /v1/sheets/{sheetId}/stats/series`: the stats' counters per UTC hour or day.
public struct SheetStatsSeriesAnswer: Sendable, Equatable {
    /// One bucket: where it starts and the same counters as the totals.
    public struct Bucket: Sendable, Equatable {
        public var start: Timestamp
        public var impressions: Int
        public var uniqueUsers: Int
        public var dismissals: [String: Int]
        public var latchReleases: Int
        public var openedFrom: Int
        public init(start: Timestamp, impressions: Int, uniqueUsers: Int, dismissals: [String: Int], latchReleases: Int, openedFrom: Int) {
            self.start = start; self.impressions = impressions; self.uniqueUsers = uniqueUsers; self.dismissals = dismissals
            self.latchReleases = latchReleases; self.openedFrom = openedFrom
        }
    }

    public var sheetId: String
    /// `hour` or `day`.
    public var bucket: String
    /// The `since` and `until` asked for, as given (`until` nil when left out).
    public var since: String
    public var until: String?
    /// The whole hours counted: from the first hour boundary at or after `since` to the last at or
    /// before `until` (or the end of the current hour).
    public var countedFrom: Timestamp
    public var countedUntil: Timestamp
    public var buckets: [Bucket]

    public init(
        sheetId: String, bucket: String, since: String, until: String?, countedFrom: Timestamp, countedUntil: Timestamp, buckets: [Bucket]
    ) {
        self.sheetId = sheetId; self.bucket = bucket; self.since = since; self.until = until
        self.countedFrom = countedFrom; self.countedUntil = countedUntil; self.buckets = buckets
    }

    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.member("sheetId", sheetId)
            o.member("bucket", bucket)
            o.member("since", since)
            o.member("until", until)
            o.member("countedFrom", countedFrom.rfc3339)
            o.member("countedUntil", countedUntil.rfc3339)
            o.arrayMember("buckets") { a in
                for bucket in buckets {
                    a.object { b in
                        b.member("start", bucket.start.rfc3339)
                        SheetStatsAnswer.writeCounters(
                            into: &b, impressions: bucket.impressions, uniqueUsers: bucket.uniqueUsers, dismissals: bucket.dismissals,
                            latchReleases: bucket.latchReleases, openedFrom: bucket.openedFrom)
                    }
                }
            }
        }
        return w.bytes
    }
}
