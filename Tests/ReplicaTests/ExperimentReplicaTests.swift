import Dispatch
import Foundation
import Testing

/// Experiments on two replicas over one database: a user decided on both, many times and at once,
/// is exposed once; a pin set on one replica is in the other's next decision.
@Suite
struct ExperimentReplicaTests {
    static let offers = """
        {"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,
         "experiment":{"id":"copy","status":"running","conversionWindowSeconds":3600,
          "arms":[{"id":"x","weight":1},{"id":"y","weight":1}]}}
        """
    static let home = "screen=home&tab=accounts&platform=ios"

    static func exposed(_ replica: Replica) throws -> Int {
        let r = try replica.get("/v1/experiments/copy/results").expect(200)
        let json = try JSONSerialization.jsonObject(with: Data(r.text.utf8)) as? [String: Any]
        return ((json?["arms"] as? [[String: Any]]) ?? []).reduce(0) { $0 + (($1["exposedUsers"] as? Int) ?? 0) }
    }

    @Test func exposedOnceAcrossReplicas() throws {
        let pair = try ReplicaPair()
        try pair.a.put("/v1/sheets/offers", Self.offers).expect(201)
        for user in ["u1", "u2"] { try pair.a.put("/v1/users/\(user)/containers/offers-home/count", #"{"count":1}"#).expect(200) }
        let replicas = [pair.a, pair.b]
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            _ = try? replicas[i % 2].get("/v1/users/u\(1 + (i / 2) % 2)/decision?\(Self.home)")
        }
        var total = 0
        for _ in 0..<100 {
            total = try Self.exposed(pair.b)
            if total >= 2 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try Self.exposed(pair.a) == 2)
        #expect(try Self.exposed(pair.b) == 2)

        // A pin on one replica decides the other's next answer.
        _ = try pair.b.get("/v1/users/u1/decision?\(Self.home)")  // warm b's cache
        try pair.a.put("/v1/experiments/copy/pins/u1", #"{"arm":"y"}"#).expect(200)
        #expect(try pair.b.get("/v1/users/u1/decision?\(Self.home)").text.contains(#""experiment":{"id":"copy","arm":"y""#))
        try pair.a.put("/v1/experiments/copy/pins/u1", #"{"arm":"x"}"#).expect(200)
        #expect(try pair.b.get("/v1/users/u1/decision?\(Self.home)").text.contains(#""experiment":{"id":"copy","arm":"x""#))
    }
}
