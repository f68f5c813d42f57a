import JSONKit
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// Facts a client reports for one user: each one transaction, replayed by event id.
extension SheetService {
    func reportCount(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        let containerId = try pathIdentifier(request, "containerId")
        let report = try CountReport(try jsonBody(request))
        let filter = report.filter
        let events = eventCatalog(), clock = self.clock
        return record(userId: userId, eventId: report.eventId, kind: .count) { state in
            let catalog = events.current
            let effect = SheetPolicy.apply(
                .countReported(containerId: containerId, filter: filter, count: report.count, seq: report.seq), to: &state, catalog: catalog,
                now: clock())
            var w = JSONWriter()
            w.object { o in
                o.member("containerId", containerId)
                o.member("filter", filter)
                o.member("count", effect.count)
                o.member("changed", effect.changed)
                o.member("applied", effect.applied)
            }
            return w.bytes
        }
    }

    func reportDismissal(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        let dismissal = try Dismissal(try jsonBody(request))
        let sheetId = dismissal.sheetId
        let events = eventCatalog(), clock = self.clock
        return record(
            userId: userId, eventId: dismissal.eventId, kind: .dismissal, emitting: [(sheetId, .dismissal, dismissal.method.rawValue)]
        ) { state in
            let catalog = events.current
            // Checked inside the transaction so a replayed event id answers as it did, whatever the catalog says now.
            guard catalog[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            let effect = SheetPolicy.apply(.sheetDismissed(sheetId: sheetId, method: dismissal.method), to: &state, catalog: catalog, now: clock())
            var w = JSONWriter()
            w.object { o in
                o.member("stack", effect.stack)
                o.member("latched", effect.latched)
            }
            return w.bytes
        }
    }

    func reportPresentation(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        let presentation = try Presentation(try jsonBody(request))
        let sheetId = presentation.sheetId, parentSheetId = presentation.parentSheetId
        let events = eventCatalog(), clock = self.clock
        // "Opened from" a sheet (its stats): a presentation naming it as the parent.
        let opened = parentSheetId.map { [(sheetId: $0, kind: SheetActivity.Kind.opened, method: String?.none)] } ?? []
        return record(userId: userId, eventId: presentation.eventId, kind: .presentation, emitting: opened) { state in
            let catalog = events.current
            guard catalog[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            if let parentSheetId, catalog[parentSheetId] == nil {
                throw Problems.notFound("no parent sheet '\(parentSheetId)' in the catalog")
            }
            let effect = SheetPolicy.apply(
                .sheetOpened(sheetId: sheetId, mode: presentation.mode, parentSheetId: parentSheetId), to: &state, catalog: catalog, now: clock())
            var w = JSONWriter()
            w.object { o in o.member("stack", effect.stack) }
            return w.bytes
        }
    }

    func reportContentHeight(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        let sheetId = try pathIdentifier(request, "sheetId")
        let report = try ContentHeightReport(try jsonBody(request))
        let platform = report.platform, height = report.height
        let events = eventCatalog(), clock = self.clock
        return record(userId: userId, eventId: report.eventId, kind: .contentHeight) { state in
            let catalog = events.current
            guard catalog[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            _ = SheetPolicy.apply(
                .contentHeightMeasured(sheetId: sheetId, platform: platform, height: height), to: &state, catalog: catalog, now: clock())
            var w = JSONWriter()
            w.object { o in
                o.member("sheetId", sheetId)
                o.member("platform", platform.rawValue)
                o.member("height", height)
            }
            return w.bytes
        }
    }

    /// The catalog an event's body decides with. On PostgreSQL the writer reads the catalog version in
    /// the batch's transaction (after the request arrived) and reloads the snapshot when it moved,
    /// before any body of the batch runs: the body takes the snapshot as it is then, and the request
    /// makes no read of its own. Elsewhere the catalog as the request sees it now (`catalog`).
    func eventCatalog() -> EventCatalog {
        EventCatalog(taken: catalogCheckedPerBatch ? nil : catalog, snapshot: catalogSnapshot)
    }

    /// One event, one transaction; the outcome of the first processing answers every retry.
    /// Event ids are scoped to the kind of event: the same id on another route is another event (a
    /// replay must answer with the route's own outcome shape, not another route's).
    ///
    /// The answer is deferred: the connection is parked until the writer commits the batch carrying
    /// this event, so the worker thread serves others meanwhile and one commit carries many events.
    ///
    /// `emitting`: the activity records (stats) this event adds when its body succeeds, stamped with the
    /// clock; latches the body releases are added as `latch-release` records. They commit with the
    /// state, and count on /metrics after the commit.
    func record(
        userId: String, eventId: String?, kind: EventKind, emitting: [(sheetId: String, kind: SheetActivity.Kind, method: String?)] = [],
        _ body: @escaping @Sendable (inout UserState) throws -> [UInt8]
    ) -> HTTPResponse {
        record(userId: userId, eventId: eventId, kind: kind, emitting: emitting) { (state: inout UserState, _: inout [SheetActivity]) in
            try body(&state)
        }
    }

    /// `record` with a body that may emit records of its own (experiment facts).
    func record(
        userId: String, eventId: String?, kind: EventKind, emitting: [(sheetId: String, kind: SheetActivity.Kind, method: String?)] = [],
        _ body: @escaping @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8]
    ) -> HTTPResponse {
        if let retryAfter = eventRate.admit(userId) {
            return Problems.tooManyRequests(
                "user '\(userId)' reported more than \(eventRate.eventsPerMinute) events within a minute; retry in \(retryAfter) s",
                retryAfterSeconds: retryAfter
            ).response
        }
        let storedEventId = eventId.map(kind.storedEventId)
        let clock = self.clock
        let emitted = EmittedActivity()
        let withActivity: @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8] = { state, activity in
            let latched = state.latches
            let outcome = try body(&state, &activity)
            let now = clock()
            for (sheetId, kind, method) in emitting { activity.append(SheetActivity(sheetId: sheetId, kind: kind, method: method, at: now)) }
            // Sorted only when some latch was released (most events release none).
            var released: [String] = []
            for sheetId in latched.keys where state.latches[sheetId] == nil { released.append(sheetId) }
            for sheetId in released.sorted() { activity.append(SheetActivity(sheetId: sheetId, kind: .latchRelease, at: now)) }
            emitted.records.withLock { $0 = activity }
            return outcome
        }
        return .deferred { [self] promise in
            store.submit(userId: userId, eventId: storedEventId, stateLimits.enforcing(withActivity)) { [self] result in
                // After the commit (or the failure), before the answer: cached decisions of this user are stale.
                decisions.freshness.userStateWritten(userId)
                if case .success(let event) = result, !event.replayed {
                    feed.userChanged(userId)
                    let records = emitted.records.withLock { $0 }
                    sheetCounters.add(records)
                    experimentRecorder.add(records)
                }
                promise.complete {
                    switch result {
                    case .success(let event):
                        return .json(200, event.outcome, headers: event.replayed ? [("Idempotent-Replayed", "true")] : [])
                    case .failure(let error as StateLimitExceeded):
                        throw error.problem
                    case .failure(let error as StoreError):
                        databaseErrors.add(1, ordering: .relaxed)
                        throw Problems.storage(error)
                    case .failure(let error):
                        throw error
                    }
                }
            }
        }
    }
}

/// See `SheetService.eventCatalog()`.
struct EventCatalog: Sendable {
    let taken: Catalog?
    let snapshot: CatalogSnapshot
    /// Read by the body, when it runs.
    var current: Catalog { taken ?? snapshot.current }
}

/// What an event's body emitted, read after its commit (the body runs once, on the writer).
private final class EmittedActivity: Sendable {
    let records = Mutex<[SheetActivity]>([])
}
