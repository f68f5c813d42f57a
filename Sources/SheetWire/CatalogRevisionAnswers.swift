import JSONKit
public import SheetPolicy

/// One catalog revision as `GET /v1/catalog/revisions` lists it (and the restore answers it).
public struct RevisionSummary: Sendable, Equatable {
    public var revision: Int64
    public var createdAt: String
    public var actor: String
    public var comment: String?
    public var restoredFrom: Int64?
    public var sheetCount: Int

    public init(revision: Int64, createdAt: String, actor: String, comment: String?, restoredFrom: Int64?, sheetCount: Int) {
        self.revision = revision; self.createdAt = createdAt; self.actor = actor; self.comment = comment
        self.restoredFrom = restoredFrom; self.sheetCount = sheetCount
    }

    /// The summary object alone (the restore's answer).
    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in writeMembers(to: &o) }
        return w.bytes
    }

    func writeMembers(to o: inout JSONWriter) {
        o.member("revision", Int(revision))
        o.member("createdAt", createdAt)
        o.member("actor", actor)
        o.member("comment", comment)
        o.member("restoredFrom", restoredFrom.map { Int($0) })
        o.member("sheetCount", sheetCount)
    }
}

/// One page of `GET /v1/catalog/revisions`, newest first; `next` is the `after` of the next page.
public struct RevisionPage: Sendable, Equatable {
    public var revisions: [RevisionSummary]
    public var next: Int64?

    public init(revisions: [RevisionSummary], next: Int64?) {
        self.revisions = revisions
        self.next = next
    }

    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.arrayMember("revisions") { items in for revision in revisions { items.object { revision.writeMembers(to: &$0) } } }
            o.member("next", next.map { Int($0) })
        }
        return w.bytes
    }
}

/// `GET /v1/catalog/revisions/{revision}`: the whole catalog as it was and what changed from the
/// revision before it.
public struct RevisionDetail: Sendable, Equatable {
    /// One changed sheet and its top-level members whose values differ.
    public struct ChangedSheet: Sendable, Equatable {
        public var id: String
        public var members: [String]
        public init(id: String, members: [String]) {
            self.id = id
            self.members = members
        }
    }

    public var summary: RevisionSummary
    /// Each sheet's stored (canonical) JSON, in id order.
    public var sheetsJSON: [[UInt8]]
    public var settings: CampaignSettings
    public var previousRevision: Int64?
    public var added: [String]
    public var removed: [String]
    public var changed: [ChangedSheet]
    public var settingsChanged: Bool

    public init(
        summary: RevisionSummary, sheetsJSON: [[UInt8]], settings: CampaignSettings, previousRevision: Int64?, added: [String],
        removed: [String], changed: [ChangedSheet], settingsChanged: Bool
    ) {
        self.summary = summary; self.sheetsJSON = sheetsJSON; self.settings = settings; self.previousRevision = previousRevision
        self.added = added; self.removed = removed; self.changed = changed; self.settingsChanged = settingsChanged
    }

    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            summary.writeMembers(to: &o)
            o.objectMember("catalog") { c in
                c.arrayMember("sheets") { items in for sheet in sheetsJSON { items.json(sheet) } }
                c.member("settings") { $0.json(settings.jsonBytes()) }
            }
            o.objectMember("changes") { c in
                c.member("previousRevision", previousRevision.map { Int($0) })
                c.arrayMember("added") { a in for id in added { a.element(id) } }
                c.arrayMember("removed") { a in for id in removed { a.element(id) } }
                c.arrayMember("changed") { a in
                    for sheet in changed {
                        a.object { o in
                            o.member("id", sheet.id)
                            o.arrayMember("members") { m in for name in sheet.members { m.element(name) } }
                        }
                    }
                }
                c.member("settingsChanged", settingsChanged)
            }
        }
        return w.bytes
    }
}
