import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire

/// Experiments: conversions, results and QA pins (exposures are recorded by the decision, see
/// `ExperimentRecorder`).
struct ExperimentsController: RouteController {
    let authorization: RequestAuthorization
    let recorder: EventRecorder
    let catalog: CatalogKeeper
    let store: any SheetStore
    let databaseErrors: DatabaseErrors
    /// The most conversions one user counts per experiment (`SHEETD_EXPERIMENT_CONVERSION_CAP`).
    let conversionCapPerUser: Int

    func register(on router: Router) {
        router.addUserRoute(.POST, "/conversions") { [self] in try reportConversion($0) }
        router.add(.GET, "/v1/experiments/{experimentId}/results") { [self] in try experimentResults($0) }
        router.add(.PUT, "/v1/experiments/{experimentId}/pins/{userId}") { [self] in try putPin($0) }
        router.add(.DELETE, "/v1/experiments/{experimentId}/pins/{userId}") { [self] in try deletePin($0) }
    }

    /// `POST /v1/users/{userId}/conversions`: counted for the user's arm within the experiment's
    /// window after their exposure, else unattributed; pinned users count nowhere, nor a user's
    /// conversions beyond the per-user cap (`capped`).
    func reportConversion(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let conversion = try request.decodeBody(ConversionReport.init)
        let sheetId = conversion.sheetId, goal = conversion.goal
        let events = catalog.eventCatalog(), cap = conversionCapPerUser
        return recorder.record(userId: userId, eventId: conversion.eventId, occurredAt: conversion.occurredAt, kind: .conversion) {
            state, activity, at in
            guard let sheet = events.current[sheetId] else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            var attribution = SheetPolicy.ConversionAttribution.none
            if let experiment = sheet.experiment {
                // Within the window after the exposure by when it happened, not when it was reported.
                attribution = SheetPolicy.recordConversion(in: experiment, state: &state, at: at, capPerUser: cap)
                if attribution.counted {
                    activity.append(
                        SheetActivity(sheetId: sheetId, kind: .conversion, at: at, experimentId: experiment.id, arm: attribution.arm))
                }
            }
            return EventOutcome.conversion(
                sheetId: sheetId, experimentId: sheet.experiment?.id, goal: goal, counted: attribution.counted, arm: attribution.arm,
                capped: attribution.capped
            ).jsonBytes()
        }
    }

    /// `GET /v1/experiments/{experimentId}/results` (admin): exact counts per arm, the comparisons
    /// with the baseline and the sample ratio check.
    func experimentResults(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may read experiment results")
        let experimentId = try request.pathIdentifier("experimentId")
        catalog.refresh()
        guard let (_, experiment) = catalog.current.experiment(id: experimentId) else {
            throw Problems.notFound("no experiment '\(experimentId)' in the catalog")
        }
        let store = self.store
        let counts = try databaseErrors.guarding { () throws(StoreError) in try store.experimentCounts(experimentId: experimentId) }
        return .json(200, ExperimentStatistics.results(experiment, counts, conversionCapPerUser: conversionCapPerUser).jsonBytes())
    }

    /// `PUT /v1/experiments/{experimentId}/pins/{userId}` (admin): puts a QA user in an arm.
    func putPin(_ request: HTTPRequest) throws -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may pin users to an arm")
        let experimentId = try request.pathIdentifier("experimentId")
        let userId = try request.pathIdentifier("userId")
        let pin = try request.decodeBody(PinBody.init)
        catalog.refresh()
        guard let (_, experiment) = catalog.current.experiment(id: experimentId) else {
            throw Problems.notFound("no experiment '\(experimentId)' in the catalog")
        }
        guard experiment.arm(pin.arm) != nil else {
            throw Problems.invalidParams([("arm", "must be one of \(experiment.arms.map(\.id).joined(separator: ", "))")])
        }
        return pinRecord(experimentId: experimentId, userId: userId, arm: pin.arm)
    }

    /// `DELETE /v1/experiments/{experimentId}/pins/{userId}` (admin): the user is bucketed again.
    func deletePin(_ request: HTTPRequest) throws -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may pin users to an arm")
        let experimentId = try request.pathIdentifier("experimentId")
        let userId = try request.pathIdentifier("userId")
        catalog.refresh()
        guard catalog.current.experiment(id: experimentId) != nil else {
            throw Problems.notFound("no experiment '\(experimentId)' in the catalog")
        }
        return pinRecord(experimentId: experimentId, userId: userId, arm: nil)
    }

    private func pinRecord(experimentId: String, userId: String, arm: String?) -> HTTPResponse {
        return recorder.record(userId: userId, eventId: nil, kind: .pin) { state, activity, now in
            state.experiments.pins[experimentId] = arm
            // The user's exposure row (if any) leaves or rejoins the results with the pin.
            activity.append(SheetActivity(sheetId: experimentId, kind: .pin, at: now, experimentId: experimentId, arm: arm))
            return EventOutcome.pin(experimentId: experimentId, userId: userId, arm: arm).jsonBytes()
        }
    }
}
