import JSONKit
public import SheetPolicy

/// The support view of one user's stored state (`GET /v1/users/{userId}/state`).
public struct UserStateView: Sendable {
    public var userId: String
    public var state: UserState

    public init(userId: String, state: UserState) {
        self.userId = userId
        self.state = state
    }

    /// The body: containers, latches, the stack, content heights, then the campaign facts, each sorted.
    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.member("userId", userId)
            o.arrayMember("containers") { items in
                for key in state.containers.keys.sorted() {
                    let value = state.containers[key]!
                    items.object { c in
                        c.member("containerId", key.containerId)
                        c.member("filter", key.filter)
                        c.member("count", value.count)
                        c.member("seq", value.seq)
                    }
                }
            }
            o.arrayMember("latches") { items in
                for sheetId in state.latches.keys.sorted(by: Self.byId) {
                    items.object { l in
                        l.member("sheetId", sheetId)
                        l.member("count", state.latches[sheetId]!)
                    }
                }
            }
            o.arrayMember("stack") { items in
                for entry in state.stack {
                    items.object { e in
                        e.member("sheetId", entry.sheetId)
                        e.member("mode", entry.mode.rawValue)
                    }
                }
            }
            o.arrayMember("contentHeights") { items in
                for key in state.contentHeights.keys.sorted() {
                    items.object { h in
                        h.member("sheetId", key.sheetId)
                        h.member("platform", key.platform.rawValue)
                        h.member("height", state.contentHeights[key]!)
                    }
                }
            }
            Self.writeCampaignFacts(state.campaign, to: &o)
        }
        return w.bytes
    }

    /// Ids in byte order.
    private static func byId(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// The campaign members: impressions per sheet (the total kept for good and the times kept for
    /// the rules), the latest dismissal per sheet, and the segments.
    private static func writeCampaignFacts(_ campaign: CampaignState, to o: inout JSONWriter) {
        let sheets = Set(campaign.impressionTotals.keys).union(campaign.impressions.keys).sorted(by: byId)
        o.arrayMember("impressions") { items in
            for sheetId in sheets {
                items.object { i in
                    i.member("sheetId", sheetId)
                    i.member("total", campaign.impressionTotals[sheetId] ?? 0)
                    i.arrayMember("recent") { times in
                        for time in campaign.impressions[sheetId] ?? [] { times.element(time.rfc3339) }
                    }
                }
            }
        }
        o.arrayMember("lastDismissals") { items in
            for sheetId in campaign.lastDismissals.keys.sorted(by: byId) {
                items.object { d in
                    d.member("sheetId", sheetId)
                    d.member("at", campaign.lastDismissals[sheetId]!.rfc3339)
                }
            }
        }
        o.arrayMember("segments") { items in for segment in campaign.segments { items.element(segment) } }
    }
}
