/// A point in time, in whole milliseconds since 1970-01-01T00:00:00Z (UTC).
///
/// The policy has no clock: the service passes `now`, tests pass fixed times. Milliseconds keep
/// every comparison exact (no floating point) and fit RFC 3339 times with fractional seconds.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var millisecondsSince1970: Int64
    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }
    public init(secondsSince1970 seconds: Int64) {
        self.millisecondsSince1970 = seconds.multipliedReportingOverflow(by: 1000).overflow ? (seconds < 0 ? .min : .max) : seconds * 1000
    }
    public static func < (a: Self, b: Self) -> Bool { a.millisecondsSince1970 < b.millisecondsSince1970 }
    /// This time moved by `seconds`, saturating at the ends of the range instead of trapping.
    public func adding(seconds: Int) -> Timestamp {
        let (delta, o1) = Int64(seconds).multipliedReportingOverflow(by: 1000)
        if o1 { return Timestamp(millisecondsSince1970: seconds < 0 ? .min : .max) }
        let (sum, o2) = millisecondsSince1970.addingReportingOverflow(delta)
        if o2 { return Timestamp(millisecondsSince1970: delta < 0 ? .min : .max) }
        return Timestamp(millisecondsSince1970: sum)
    }
    public var description: String { "\(millisecondsSince1970)ms" }
}

/// At most `max` of something per `periodSeconds` (a sheet's frequency cap, the global cap).
public struct FrequencyCap: Sendable, Equatable {
    public var max: Int
    public var periodSeconds: Int
    public init(max: Int, periodSeconds: Int) { self.max = max; self.periodSeconds = periodSeconds }
}

/// The service-wide campaign settings (`GET`/`PUT /v1/settings`); both off by default.
public struct CampaignSettings: Sendable, Equatable {
    /// At most `max` impressions of card sheets per user per period (reason `global-cap`).
    public var globalCap: FrequencyCap?
    /// No card sheet within this many seconds of the user's last impression of any card sheet (reason `min-interval`).
    public var minIntervalSeconds: Int?
    public init(globalCap: FrequencyCap? = nil, minIntervalSeconds: Int? = nil) {
        self.globalCap = globalCap; self.minIntervalSeconds = minIntervalSeconds
    }
    public static let off = CampaignSettings()
}

/// What the campaign rules know about one user (part of `UserState`, stored with it, erased with it).
public struct CampaignState: Sendable, Equatable {
    /// Impression times per sheet, oldest first. Pruned past the longest period any rule needs
    /// (`Catalog.longestImpressionPeriod`) and to the newest `Catalog.impressionsKeptPerSheet`, so it
    /// is not a total and a user's state does not grow with their impressions.
    public var impressions: [String: [Timestamp]]
    /// Impressions per sheet since the user was first seen: counters kept for good (never pruned).
    public var impressionTotals: [String: Int]
    /// The latest dismissal of each sheet (any method), for cooldowns and "a sheet on screen stays on screen".
    public var lastDismissals: [String: Timestamp]
    /// The operator's segments for this user (`PUT /v1/users/{userId}/attributes`), sorted, no duplicates.
    public var segments: [String]

    public init(
        impressions: [String: [Timestamp]] = [:], impressionTotals: [String: Int] = [:],
        lastDismissals: [String: Timestamp] = [:], segments: [String] = []
    ) {
        self.impressions = impressions; self.impressionTotals = impressionTotals
        self.lastDismissals = lastDismissals; self.segments = segments
    }

    /// Records one impression at `time` (kept in time order) and prunes impressions older than
    /// `keepSeconds` before `time` (`nil`: keep none beyond the latest per sheet, which the
    /// "stays on screen" rule needs), and beyond the newest `keepNewest` of each sheet.
    public mutating func recordImpression(of sheetId: String, at time: Timestamp, keepSeconds: Int?, keepNewest: Int = .max) {
        var times = impressions[sheetId] ?? []
        let index = times.lastIndex(where: { $0 <= time }).map { $0 + 1 } ?? 0
        times.insert(time, at: index)
        impressions[sheetId] = times
        impressionTotals[sheetId, default: 0] += 1
        prune(before: time, keepSeconds: keepSeconds, keepNewest: keepNewest)
    }

    /// Drops impressions older than `keepSeconds` before `time` and beyond each sheet's newest
    /// `keepNewest`, always keeping each sheet's latest.
    public mutating func prune(before time: Timestamp, keepSeconds: Int?, keepNewest: Int = .max) {
        let horizon = time.adding(seconds: -(keepSeconds ?? 0))
        let newest = Swift.max(keepNewest, 1)
        for (sheetId, times) in impressions {
            guard let last = times.last else { impressions[sheetId] = nil; continue }
            let kept = times.filter { $0 >= horizon }.suffix(newest)
            impressions[sheetId] = kept.isEmpty ? [last] : Array(kept)
        }
    }
}

/// A sheet's time window: eligible only when `start <= now < end` (either end open when `nil`).
public struct Schedule: Sendable, Equatable {
    public var start: Timestamp?
    public var end: Timestamp?
    public init(start: Timestamp? = nil, end: Timestamp? = nil) { self.start = start; self.end = end }
}

/// Who may see a sheet; every member given must match (reason `not-in-audience`).
public struct Audience: Sendable, Equatable {
    public var platforms: [Platform]?
    public var idioms: [Idiom]?
    /// Dotted numbers (`2.10.0`), compared number by number.
    public var minAppVersion: String?
    public var maxAppVersion: String?
    /// BCP 47 tags or prefixes: `de` matches `de` and `de-CH`.
    public var locales: [String]?
    /// Matches when the user has any of them.
    public var segments: [String]?
    public init(
        platforms: [Platform]? = nil, idioms: [Idiom]? = nil, minAppVersion: String? = nil,
        maxAppVersion: String? = nil, locales: [String]? = nil, segments: [String]? = nil
    ) {
        self.platforms = platforms; self.idioms = idioms; self.minAppVersion = minAppVersion
        self.maxAppVersion = maxAppVersion; self.locales = locales; self.segments = segments
    }
}

/// The campaign members of a card sheet's definition; every member `nil` is "no rule".
public struct CampaignRules: Sendable, Equatable {
    public var schedule: Schedule?
    public var cooldownSeconds: Int?
    public var frequency: FrequencyCap?
    public var audience: Audience?
    public init(
        schedule: Schedule? = nil, cooldownSeconds: Int? = nil, frequency: FrequencyCap? = nil, audience: Audience? = nil
    ) {
        self.schedule = schedule; self.cooldownSeconds = cooldownSeconds; self.frequency = frequency; self.audience = audience
    }
    public static let none = CampaignRules()
}

extension Catalog {
    /// The longest look-back any impression-counting rule needs (sheet frequency periods, the
    /// global cap's period, the minimum interval of `settings`), in seconds; `nil` when no rule counts
    /// impressions. Impressions older than this are pruned on write.
    public var longestImpressionPeriod: Int? {
        var longest: Int? = nil
        func consider(_ seconds: Int?) { if let seconds { longest = Swift.max(longest ?? 0, seconds) } }
        for sheet in sortedByID { consider(sheet.campaign.frequency?.periodSeconds) }
        consider(settings.globalCap?.periodSeconds)
        consider(settings.minIntervalSeconds)
        return longest
    }

    /// How many of a sheet's newest impressions the rules can ever count: the largest `max` of the
    /// sheets' frequency caps and of the global cap (at least 1). Keeping only these is exact: a cap
    /// counts the impressions inside a window that ends now, which are always the newest ones, so
    /// the count reaches `max` with the newest `max` alone (and the global cap's sum over sheets
    /// reaches its `max` as soon as one sheet or all of them together do). Impressions beyond these
    /// are pruned on write, so a user's state stays bounded however many impressions they report.
    public var impressionsKeptPerSheet: Int {
        var most = 1
        for sheet in sortedByID { most = Swift.max(most, sheet.campaign.frequency?.max ?? 1) }
        return Swift.max(most, settings.globalCap?.max ?? 1)
    }
}
