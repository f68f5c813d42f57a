import JSONKit
public import SheetPolicy

/// The wire form of `POST /v1/catalog/impact`'s answer.
public struct CatalogImpactReport: Sendable {
    public var impact: CatalogImpact
    /// The user id the sample started from.
    public var from: String
    /// Users asked for.
    public var requestedUsers: Int
    /// False when the time budget ran out before every sampled user was compared.
    public var complete: Bool
    public var now: Timestamp
    public var elapsedMilliseconds: Int
    public var contexts: [ClientContext]
    /// Sheet ids the proposed catalog adds, removes and changes, each in byte order.
    public var added: [String], removed: [String], changed: [String]

    public init(
        impact: CatalogImpact, from: String, requestedUsers: Int, complete: Bool, now: Timestamp, elapsedMilliseconds: Int,
        contexts: [ClientContext], current: Catalog, proposed: Catalog
    ) {
        self.impact = impact; self.from = from; self.requestedUsers = requestedUsers; self.complete = complete
        self.now = now; self.elapsedMilliseconds = elapsedMilliseconds; self.contexts = contexts
        added = proposed.sortedByID.filter { current.sheets[$0.id] == nil }.map(\.id)
        removed = current.sortedByID.filter { proposed.sheets[$0.id] == nil }.map(\.id)
        changed = proposed.sortedByID.filter { new in current.sheets[new.id].map { $0 != new } ?? false }.map(\.id)
    }

    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.objectMember("sample") { s in
                s.member("users", impact.users)
                s.member("requestedUsers", requestedUsers)
                s.member("from", from)
                s.member("complete", complete)
            }
            o.member("now", now.rfc3339)
            o.member("elapsedMilliseconds", elapsedMilliseconds)
            o.objectMember("sheets") { s in
                s.member("added", added)
                s.member("removed", removed)
                s.member("changed", changed)
            }
            o.arrayMember("contexts") { items in for context in contexts { items.object { Self.write(context, to: &$0) } } }
            o.member("decisions", impact.decisions)
            o.member("changed", impact.changed)
            o.arrayMember("changes") { items in
                for change in CatalogImpact.Change.allCases {
                    items.object { c in
                        c.member("change", change.rawValue)
                        c.member("decisions", impact.counts[change] ?? 0)
                        c.arrayMember("examples") { examples in
                            for example in impact.examples[change] ?? [] {
                                examples.object { e in
                                    e.member("userId", example.userId)
                                    Self.write(example.context, to: &e)
                                    e.objectMember("before") { Self.write(example.before, to: &$0) }
                                    e.objectMember("after") { Self.write(example.after, to: &$0) }
                                }
                            }
                        }
                    }
                }
            }
            // Most frequent first; ties in byte order of the ids (nothing presented first).
            let transitions = impact.transitions.sorted { a, b in
                if a.value != b.value { return a.value > b.value }
                if a.key.from != b.key.from { return Self.precedes(a.key.from, b.key.from) }
                return Self.precedes(a.key.to, b.key.to)
            }
            o.arrayMember("transitions") { items in
                for (transition, count) in transitions {
                    items.object { t in
                        t.member("from", transition.from)
                        t.member("to", transition.to)
                        t.member("decisions", count)
                    }
                }
            }
        }
        return w.bytes
    }

    private static func write(_ context: ClientContext, to o: inout JSONWriter) {
        o.member("screen", context.screen)
        o.member("tab", context.tab)
        o.member("platform", context.platform.rawValue)
    }

    private static func write(_ outcome: CatalogImpact.Outcome, to o: inout JSONWriter) {
        o.member("present", outcome.present)
        o.member("sheetId", outcome.sheetId)
        o.member("variant", outcome.variant?.rawValue)
        o.member("detents", outcome.detents.map(\.rawValue))
        o.member("selectedDetent", outcome.selectedDetent?.rawValue)
    }

    private static func precedes(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): false
        case (nil, _): true
        case (_, nil): false
        case (let a?, let b?): a.utf8.lexicographicallyPrecedes(b.utf8)
        }
    }
}
