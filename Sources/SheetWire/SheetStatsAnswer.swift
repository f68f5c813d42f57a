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
            o.member("impressions", impressions)
            o.member("uniqueUsers", uniqueUsers)
            o.objectMember("dismissals") { d in
                for method in DismissMethod.allCases { d.member(method.rawValue, dismissals[method.rawValue] ?? 0) }
            }
            o.member("latchReleases", latchReleases)
            o.member("openedFrom", openedFrom)
            o.member("countedFrom", countedFrom?.rfc3339)
        }
        return w.bytes
    }
}
