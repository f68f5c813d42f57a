import JSONKit
import MicroHTTP
import SheetPolicy
import SheetStore

/// Experiments: conversions, results and QA pins (exposures are recorded by the decision, see
/// `ExperimentRecorder`).
extension SheetService {
    /// `POST /v1/users/{userId}/conversions`: counted for the user's arm within the experiment's
    /// window after their exposure, else unattributed; pinned users count nowhere.
    func reportConversion(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        let conversion = try ConversionReport(try jsonBody(request))
        let sheetId = conversion.sheetId, goal = conversion.goal
        let events = eventCatalog(), clock = self.clock
        return record(userId: userId, eventId: conversion.eventId, kind: .conversion) { state, activity in
            let catalog = events.current
            guard let sheet = catalog[sheetId] else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            let now = clock()
            var attribution: (counted: Bool, arm: String?) = (false, nil)
            if let experiment = sheet.experiment {
                attribution = SheetPolicy.attributeConversion(in: experiment, state: state, at: now)
                if attribution.counted {
                    activity.append(
                        SheetActivity(sheetId: sheetId, kind: .conversion, at: now, experimentId: experiment.id, arm: attribution.arm))
                }
            }
            var w = JSONWriter()
            w.object { o in
                o.member("sheetId", sheetId)
                o.member("experimentId", sheet.experiment?.id)
                o.member("goal", goal)
                o.member("counted", attribution.counted)
                o.member("arm", attribution.arm)
            }
            return w.bytes
        }
    }

    /// `GET /v1/experiments/{experimentId}/results` (admin): exact counts per arm, the comparisons
    /// with the baseline and the sample ratio check.
    func experimentResults(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may read experiment results")
        let experimentId = try pathIdentifier(request, "experimentId")
        guard let (_, experiment) = catalog.experiment(id: experimentId) else {
            throw Problems.notFound("no experiment '\(experimentId)' in the catalog")
        }
        let counts = try storage { () throws(StoreError) in try store.experimentCounts(experimentId: experimentId) }
        return .json(200, Self.resultsJSON(experiment, counts))
    }

    static func resultsJSON(_ experiment: Experiment, _ counts: ExperimentCounts) -> [UInt8] {
        let arms = experiment.arms.map { ($0, counts.arms[$0.id] ?? ExperimentArmCounts()) }
        let baseline = arms.first(where: { $0.0.holdout }) ?? arms[0]
        let ratio = ExperimentStatistics.sampleRatio(observed: arms.map { $0.1.exposedUsers }, weights: arms.map { $0.0.weight })
        var w = JSONWriter()
        w.object { o in
            o.member("experimentId", experiment.id)
            o.member("status", experiment.status.rawValue)
            o.member("winner", experiment.winner)
            o.arrayMember("arms") { items in
                for (arm, c) in arms {
                    items.object { a in
                        a.member("id", arm.id)
                        a.member("holdout", arm.holdout)
                        a.member("weight", arm.weight)
                        a.member("exposedUsers", c.exposedUsers)
                        a.member("impressions", c.impressions)
                        a.member("convertedUsers", c.convertedUsers)
                        a.member("conversions", c.conversions)
                        a.member("conversionRate", ExperimentStatistics.rate(c.convertedUsers, c.exposedUsers))
                    }
                }
            }
            o.arrayMember("comparisons") { items in
                for (arm, c) in arms where arm.id != baseline.0.id {
                    let comparison = ExperimentStatistics.compare(
                        converted: c.convertedUsers, exposed: c.exposedUsers, baselineConverted: baseline.1.convertedUsers,
                        baselineExposed: baseline.1.exposedUsers)
                    items.object { x in
                        x.member("arm", arm.id)
                        x.member("baseline", baseline.0.id)
                        x.member("difference", comparison.difference)
                        if let ci = comparison.ci95 { x.member("ci95", [ci.low, ci.high]) } else { x.member("ci95", nil as [Double]?) }
                        x.member("pValue", comparison.pValue)
                    }
                }
            }
            o.objectMember("sampleRatio") { s in
                s.member("chiSquare", ratio.chiSquare)
                s.member("pValue", ratio.pValue)
                s.member("mismatch", ratio.pValue < 0.001)
            }
            o.member("unattributed", counts.unattributed)
        }
        return w.bytes
    }

    /// `PUT /v1/experiments/{experimentId}/pins/{userId}` (admin): puts a QA user in an arm.
    func putPin(_ request: HTTPRequest) throws -> HTTPResponse {
        try requireAdmin(request, "only the admin token may pin users to an arm")
        let experimentId = try pathIdentifier(request, "experimentId")
        let userId = try pathIdentifier(request, "userId")
        let pin = try PinBody(try jsonBody(request))
        guard let (_, experiment) = catalog.experiment(id: experimentId) else {
            throw Problems.notFound("no experiment '\(experimentId)' in the catalog")
        }
        guard experiment.arm(pin.arm) != nil else {
            throw Problems.invalidParams([("arm", "must be one of \(experiment.arms.map(\.id).joined(separator: ", "))")])
        }
        return pinRecord(experimentId: experimentId, userId: userId, arm: pin.arm)
    }

    /// `DELETE /v1/experiments/{experimentId}/pins/{userId}` (admin): the user is bucketed again.
    func deletePin(_ request: HTTPRequest) throws -> HTTPResponse {
        try requireAdmin(request, "only the admin token may pin users to an arm")
        let experimentId = try pathIdentifier(request, "experimentId")
        let userId = try pathIdentifier(request, "userId")
        guard catalog.experiment(id: experimentId) != nil else { throw Problems.notFound("no experiment '\(experimentId)' in the catalog") }
        return pinRecord(experimentId: experimentId, userId: userId, arm: nil)
    }

    private func pinRecord(experimentId: String, userId: String, arm: String?) -> HTTPResponse {
        let clock = self.clock
        return record(userId: userId, eventId: nil, kind: .pin) { state, activity in
            state.experiments.pins[experimentId] = arm
            // The user's exposure row (if any) leaves or rejoins the results with the pin.
            activity.append(SheetActivity(sheetId: experimentId, kind: .pin, at: clock(), experimentId: experimentId, arm: arm))
            var w = JSONWriter()
            w.object { o in
                o.member("experimentId", experimentId)
                o.member("userId", userId)
                o.member("arm", arm)
            }
            return w.bytes
        }
    }

    /// A catalog write that would reassign a running experiment's users (409), or an experiment id
    /// another sheet already has (400).
    func checkExperimentChange(_ definition: SheetDefinition, in catalog: Catalog) throws(Problem) {
        guard let new = definition.experiment else { return }
        if let old = catalog[definition.id]?.experiment, old.id == new.id, old.status == .running, !old.assignsAlike(new) {
            throw ProblemType.experimentRunning.problem(
                "experiment '\(old.id)' is running: its arms and weights cannot change, since that would reassign users already exposed; "
                    + "stop it (status stopped, optionally with a winner) or start a new experiment id")
        }
        if let (other, _) = catalog.experiment(id: new.id), other.id != definition.id {
            throw Problems.invalidParams([("experiment.id", "is already the experiment of sheet '\(other.id)'")])
        }
    }
}

/// `{"sheetId", "eventId"?, "goal"?}`.
struct ConversionReport {
    let sheetId: String
    let eventId: String?
    let goal: String?
    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        eventId = r.eventId()
        goal = r.identifier("goal")
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
    }
}

/// `{"arm"}`.
struct PinBody {
    let arm: String
    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let arm = r.identifier("arm", required: true)
        try r.finish()
        self.arm = try r.required(arm, "arm")
    }
}
