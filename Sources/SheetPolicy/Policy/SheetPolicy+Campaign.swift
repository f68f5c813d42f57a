/// The campaign rules: schedule, audience, cooldown, frequency cap, global cap and
/// minimum interval. They hold back card sheets (never the user's stack); `now` is an input.
extension SheetPolicy {
    /// Facts about all of the user's card-sheet impressions, for the global settings (computed once per
    /// decision, and only when a setting is on).
    struct GlobalImpressions {
        /// The user's latest impression of any card sheet.
        var latest: Timestamp?
        /// When the global cap is reached now: the instant it is not any more.
        var capReleasedAt: Timestamp?

        init(state: UserState, catalog: Catalog, settings: CampaignSettings, now: Timestamp) {
            var window: [Timestamp] = []
            let cap = settings.globalCap
            for (sheetId, times) in state.campaign.impressions {
                guard let last = times.last, catalog[sheetId]?.isCardSheet == true else { continue }
                if latest.map({ last > $0 }) ?? true { latest = last }
                if let cap {
                    for t in times.reversed() {
                        guard t.adding(seconds: cap.periodSeconds) > now else { break }
                        window.append(t)
                    }
                }
            }
            if let cap, window.count >= cap.max {
                window.sort()
                capReleasedAt = window[window.count - cap.max].adding(seconds: cap.periodSeconds)
            }
        }
    }

    /// The first campaign rule holding `sheet` (a card sheet with cards, not latched) at `now`, or `nil`
    /// when none does. Lowers `boundary` to the next instant at which this answer can change by time alone.
    static func campaignHold(
        of sheet: SheetDefinition, state: UserState, context: ClientContext, catalog: Catalog, now: Timestamp,
        global: inout GlobalImpressions?, boundary: inout Timestamp?, trace: inout [String]
    ) -> DecisionReason? {
        func until(_ t: Timestamp) { if boundary.map({ t < $0 }) ?? true { boundary = t } }
        func hold(_ reason: DecisionReason, _ why: String) -> DecisionReason {
            trace.append("campaign: '\(sheet.id)' held (\(reason.rawValue)): \(why)")
            return reason
        }
        let rules = sheet.campaign

        // Schedule: eligible only when start <= now < end.
        if let schedule = rules.schedule {
            if let start = schedule.start, now < start {
                until(start)
                return hold(.outsideSchedule, "its schedule starts at \(start.rfc3339)")
            }
            if let end = schedule.end {
                if now >= end { return hold(.outsideSchedule, "its schedule ended at \(end.rfc3339)") }
                until(end)
            }
        }

        // Audience: every member given must match.
        if let audience = rules.audience, let why = mismatch(audience, state: state, context: context) {
            return hold(.notInAudience, why)
        }

        // Cooldown: from the latest dismissal of this sheet (any method).
        if let cooldown = rules.cooldownSeconds, let dismissed = state.campaign.lastDismissals[sheet.id] {
            let ends = dismissed.adding(seconds: cooldown)
            if now < ends {
                until(ends)
                return hold(
                    .coolingDown, "dismissed at \(dismissed.rfc3339), its cooldown of \(cooldown) s ends at \(ends.rfc3339)")
            }
        }

        // The impression-counting rules hold back a new showing, never one in progress.
        let settings = catalog.settings
        guard rules.frequency != nil || !settings.isOff else { return nil }
        let impressions = state.campaign.impressions[sheet.id]
        if let shown = impressions?.last, state.campaign.lastDismissals[sheet.id].map({ shown > $0 }) ?? true {
            trace.append(
                "campaign: '\(sheet.id)' is on screen (impression at \(shown.rfc3339), not dismissed since): "
                    + "caps and the minimum interval do not hold it")
            return nil
        }

        if let frequency = rules.frequency, let times = impressions, times.count >= frequency.max {
            // Impressions in the window (now - period, now], oldest first.
            var inWindow = 0
            for t in times.reversed() {
                guard t.adding(seconds: frequency.periodSeconds) > now else { break }
                inWindow += 1
            }
            if inWindow >= frequency.max {
                let released = times[times.count - frequency.max].adding(seconds: frequency.periodSeconds)
                until(released)
                return hold(
                    .frequencyCapped,
                    "\(frequency.max) impression\(frequency.max == 1 ? "" : "s") in \(frequency.periodSeconds) s reached, "
                        + "shown again from \(released.rfc3339)")
            }
        }

        if settings.isOff { return nil }
        if global == nil { global = GlobalImpressions(state: state, catalog: catalog, settings: settings, now: now) }
        if let cap = settings.globalCap, let released = global?.capReleasedAt {
            until(released)
            return hold(
                .globalCap,
                "\(cap.max) card-sheet impression\(cap.max == 1 ? "" : "s") in \(cap.periodSeconds) s reached, "
                    + "card sheets shown again from \(released.rfc3339)")
        }
        if let interval = settings.minIntervalSeconds, let latest = global?.latest {
            let ends = latest.adding(seconds: interval)
            if now < ends {
                until(ends)
                return hold(
                    .minInterval,
                    "the last card-sheet impression was at \(latest.rfc3339), none within \(interval) s, until \(ends.rfc3339)")
            }
        }
        return nil
    }

    /// Why `audience` does not match, or `nil` when it does.
    static func mismatch(_ audience: Audience, state: UserState, context: ClientContext) -> String? {
        if let platforms = audience.platforms, !platforms.contains(context.platform) {
            return "platform \(context.platform.rawValue) is not one of \(platforms.map(\.rawValue).joined(separator: ", "))"
        }
        if let idioms = audience.idioms, !idioms.contains(context.idiom) {
            return "idiom \(context.idiom.rawValue) is not one of \(idioms.map(\.rawValue).joined(separator: ", "))"
        }
        if audience.minAppVersion != nil || audience.maxAppVersion != nil {
            guard let version = context.appVersion else { return "the audience sets app versions and the query has no appVersion" }
            if let min = audience.minAppVersion, AppVersion.compare(version, min) < 0 {
                return "appVersion \(version) is below minAppVersion \(min)"
            }
            if let max = audience.maxAppVersion, AppVersion.compare(version, max) > 0 {
                return "appVersion \(version) is above maxAppVersion \(max)"
            }
        }
        if let locales = audience.locales {
            guard let locale = context.locale else { return "the audience sets locales and the query has no locale" }
            if !locales.contains(where: { LanguageTag.matches($0, locale) }) {
                return "locale \(locale) matches none of \(locales.joined(separator: ", "))"
            }
        }
        if let segments = audience.segments, !segments.contains(where: { state.campaign.segments.contains($0) }) {
            return "the user is in none of the segments \(segments.joined(separator: ", "))"
        }
        return nil
    }
}
