import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire

/// Facts a client reports for one user (counts, dismissals, presentations, content heights): each
/// one transaction, replayed by event id, dated by its `occurredAt` (`EventRecorder`).
struct EventsController: RouteController {
    let authorization: RequestAuthorization
    let recorder: EventRecorder
    let catalog: CatalogKeeper

    func register(on router: Router) {
        router.addUserRoute(.PUT, "/containers/{containerId}/count") { [self] in try reportCount($0) }
        router.addUserRoute(.POST, "/dismissals") { [self] in try reportDismissal($0) }
        router.addUserRoute(.POST, "/presentations") { [self] in try reportPresentation($0) }
        router.addUserRoute(.PUT, "/sheets/{sheetId}/content-height") { [self] in try reportContentHeight($0) }
    }

    func reportCount(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let containerId = try request.pathIdentifier("containerId")
        let report = try request.decodeBody(CountReport.init)
        let filter = report.filter
        let events = catalog.eventCatalog()
        // Counts apply in `seq` order (else as they arrive), whatever their `occurredAt`: it dates the latch releases.
        return recorder.record(userId: userId, eventId: report.eventId, occurredAt: report.occurredAt, kind: .count) { state, at in
            let effect = SheetPolicy.apply(
                .countReported(containerId: containerId, filter: filter, count: report.count, seq: report.seq), to: &state,
                catalog: events.current, now: at)
            return EventOutcome.count(containerId: containerId, filter: filter, effect: effect).jsonBytes()
        }
    }

    func reportDismissal(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let dismissal = try request.decodeBody(Dismissal.init)
        let sheetId = dismissal.sheetId
        let events = catalog.eventCatalog()
        return recorder.record(
            userId: userId, eventId: dismissal.eventId, occurredAt: dismissal.occurredAt, kind: .dismissal,
            emitting: [(sheetId, .dismissal, dismissal.method.rawValue)]
        ) { state, at in
            let catalog = events.current
            // Checked inside the transaction so a replayed event id answers as it did, whatever the catalog says now.
            guard catalog[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            let effect = SheetPolicy.apply(.sheetDismissed(sheetId: sheetId, method: dismissal.method), to: &state, catalog: catalog, now: at)
            return EventOutcome.dismissal(effect).jsonBytes()
        }
    }

    func reportPresentation(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let presentation = try request.decodeBody(PresentationReport.init)
        let sheetId = presentation.sheetId, parentSheetId = presentation.parentSheetId
        let events = catalog.eventCatalog()
        // "Opened from" a sheet (its stats): a presentation naming it as the parent.
        let opened = parentSheetId.map { [(sheetId: $0, kind: SheetActivity.Kind.opened, method: String?.none)] } ?? []
        return recorder.record(
            userId: userId, eventId: presentation.eventId, occurredAt: presentation.occurredAt, kind: .presentation, emitting: opened
        ) { state, at in
            let catalog = events.current
            guard catalog[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            if let parentSheetId, catalog[parentSheetId] == nil {
                throw Problems.notFound("no parent sheet '\(parentSheetId)' in the catalog")
            }
            let effect = SheetPolicy.apply(
                .sheetOpened(sheetId: sheetId, mode: presentation.mode, parentSheetId: parentSheetId), to: &state, catalog: catalog, now: at)
            return EventOutcome.presentation(effect).jsonBytes()
        }
    }

    func reportContentHeight(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let sheetId = try request.pathIdentifier("sheetId")
        let report = try request.decodeBody(ContentHeightReport.init)
        let platform = report.platform, height = report.height
        let events = catalog.eventCatalog()
        return recorder.record(userId: userId, eventId: report.eventId, occurredAt: report.occurredAt, kind: .contentHeight) { state, at in
            let catalog = events.current
            guard catalog[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            _ = SheetPolicy.apply(
                .contentHeightMeasured(sheetId: sheetId, platform: platform, height: height), to: &state, catalog: catalog, now: at)
            return EventOutcome.contentHeight(sheetId: sheetId, platform: platform, height: height).jsonBytes()
        }
    }
}
