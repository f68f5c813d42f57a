import Foundation
import MicroHTTP
import TestSupport
import Testing

/// The decision route's representations over the wire: full or minimal (`Prefer: return=minimal`),
/// each identity or gzip-encoded (`Accept-Encoding: gzip`), every one with a strong tag of its own.
@Suite struct DecisionRepresentationTests {
    /// A live service with the fixtures and a decision large enough to be encoded (a card sheet
    /// presented, so `sheet` and `trace` are both there).
    private static func liveDecision() throws -> (LiveService, RawConnection, auth: (String, String)) {
        let live = try LiveService()
        try Fixtures.install(live)
        let put = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count": 2}"#)
        #expect(put.status == 200)
        return (live, try RawConnection(port: live.server.port), ("Authorization", "Bearer \(LiveService.adminToken)"))
    }

    /// Without `Prefer`, the full body with `sheet` and `trace`; with `Prefer: return=minimal`, the
    /// same members without those two, `Preference-Applied: return=minimal`, another strong tag, and
    /// `Vary` naming both `Prefer` and `Accept-Encoding` on both.
    @Test func minimalAnswerLeavesOutSheetAndTrace() throws {
        let (live, c, auth) = try Self.liveDecision()
        _ = live
        let full = try c.request("GET", StreamTests.decisionPath, headers: [auth])
        #expect(full.status == 200)
        let fullJSON = try #require(try JSONSerialization.jsonObject(with: Data(full.body)) as? [String: Any])
        #expect(fullJSON["sheet"] != nil && fullJSON["trace"] != nil)
        #expect(full.header("Preference-Applied") == nil)
        #expect(full.header("Vary") == "Accept-Encoding, Prefer")

        let minimal = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("Prefer", "return=minimal")])
        #expect(minimal.status == 200)
        #expect(minimal.header("Preference-Applied") == "return=minimal")
        #expect(minimal.header("Vary") == "Accept-Encoding, Prefer")
        let minimalJSON = try #require(try JSONSerialization.jsonObject(with: Data(minimal.body)) as? [String: Any])
        #expect(minimalJSON["sheet"] == nil && minimalJSON["trace"] == nil)
        #expect(Set(minimalJSON.keys) == Set(fullJSON.keys).subtracting(["sheet", "trace"]))
        #expect((minimalJSON["stack"] as? [Any])?.count == (fullJSON["stack"] as? [Any])?.count)
        #expect(minimalJSON["present"] as? Bool == true)

        let fullTag = try #require(full.header("ETag")), minimalTag = try #require(minimal.header("ETag"))
        #expect(!fullTag.hasPrefix("W/") && !minimalTag.hasPrefix("W/"))
        #expect(fullTag != minimalTag)

        // Each form revalidates with its own tag, and the cache never serves one for the other.
        let minimal304 = try c.request(
            "GET", StreamTests.decisionPath, headers: [auth, ("Prefer", "return=minimal"), ("If-None-Match", minimalTag)])
        #expect(minimal304.status == 304)
        #expect(minimal304.header("ETag") == minimalTag)
        let fullWithMinimalTag = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("If-None-Match", minimalTag)])
        #expect(fullWithMinimalTag.status == 200)
        #expect(fullWithMinimalTag.body == full.body)
        let minimalAgain = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("Prefer", "return=minimal")])
        #expect(minimalAgain.body == minimal.body)
        let fullAgain = try c.request("GET", StreamTests.decisionPath, headers: [auth])
        #expect(fullAgain.body == full.body)
    }

    /// `Accept-Encoding: gzip` gets the same body gzip-encoded with a strong tag of its own (the
    /// identity tag with `-gzip`), and `If-None-Match` with either tag is a 304 carrying the tag of the
    /// representation the client would get.
    @Test func gzipAnswerHasItsOwnStrongTag() throws {
        let (live, c, auth) = try Self.liveDecision()
        _ = live
        let plain = try c.request("GET", StreamTests.decisionPath, headers: [auth])
        #expect(plain.status == 200)
        #expect(plain.body.count >= 1024)
        #expect(plain.header("Content-Encoding") == nil)
        #expect(plain.header("Vary") == "Accept-Encoding, Prefer")
        let tag = try #require(plain.header("ETag"))
        #expect(!tag.hasPrefix("W/"))
        let gzipTag = String(tag.dropLast()) + "-gzip\""

        let encoded = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("Accept-Encoding", "gzip, br")])
        #expect(encoded.status == 200)
        #expect(encoded.header("Content-Encoding") == "gzip")
        #expect(encoded.headers.filter { $0.0 == "Vary" }.map(\.1) == ["Accept-Encoding, Prefer"])
        #expect(encoded.header("ETag") == gzipTag)
        #expect(encoded.body.count < plain.body.count)
        #expect(try gunzip(encoded.body) == plain.body)

        for held in [tag, gzipTag] {
            let gz304 = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("Accept-Encoding", "gzip"), ("If-None-Match", held)])
            #expect(gz304.status == 304, "If-None-Match \(held)")
            #expect(gz304.header("ETag") == gzipTag)
            let plain304 = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("If-None-Match", held)])
            #expect(plain304.status == 304, "If-None-Match \(held)")
            #expect(plain304.header("ETag") == tag)
        }

        // The minimal form is encoded the same way, with its own tags.
        let minimal = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("Prefer", "return=minimal")])
        let minimalGzip = try c.request(
            "GET", StreamTests.decisionPath, headers: [auth, ("Prefer", "return=minimal"), ("Accept-Encoding", "gzip")])
        if minimal.body.count >= 1024 {
            #expect(minimalGzip.header("Content-Encoding") == "gzip")
            #expect(try gunzip(minimalGzip.body) == minimal.body)
            #expect(minimalGzip.header("ETag") == String(try #require(minimal.header("ETag")).dropLast()) + "-gzip\"")
        } else {
            #expect(minimalGzip.header("Content-Encoding") == nil)
            #expect(minimalGzip.body == minimal.body)
        }
    }

    /// A client that decodes gzip on its own (URLSession: curl with zlib) gets the identity bytes and
    /// the gzip tag, which revalidates to a 304.
    @Test func urlSessionDecodesTheGzipAnswer() throws {
        let (live, c, auth) = try Self.liveDecision()
        let plain = try c.request("GET", StreamTests.decisionPath, headers: [auth])
        let session = try live.get(StreamTests.decisionPath, headers: ["Accept-Encoding": "gzip"])
        #expect(session.status == 200)
        #expect(Array(session.body) == plain.body)
        let tag = try #require(session.header("ETag"))
        #expect(tag == String(try #require(plain.header("ETag")).dropLast()) + "-gzip\"")
        let revalidated = try live.get(StreamTests.decisionPath, headers: ["Accept-Encoding": "gzip", "If-None-Match": tag])
        #expect(revalidated.status == 304)
    }

    /// A long-poll (`Prefer: wait`) with `return=minimal` holds the minimal tag and answers the
    /// minimal body when the decision changes, saying which preferences it applied.
    @Test func longPollKeepsTheMinimalForm() throws {
        let (live, c, auth) = try Self.liveDecision()
        let minimal = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("Prefer", "return=minimal")])
        let tag = try #require(minimal.header("ETag"))
        let waited = try c.request(
            "GET", StreamTests.decisionPath, headers: [auth, ("Prefer", "return=minimal, wait=1"), ("If-None-Match", tag)])
        #expect(waited.status == 304)
        #expect(waited.header("ETag") == tag)
        #expect(waited.header("Preference-Applied") == "return=minimal, wait=1")
        let writer = try RawConnection(port: live.server.port)
        let changer = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            _ = try? writer.request(
                "PUT", "/v1/users/u1/containers/offers-home/count", headers: [auth, ("Content-Type", "application/json")],
                body: Array(#"{"count": 0}"#.utf8))
        }
        changer.start()
        let changed = try c.request(
            "GET", StreamTests.decisionPath, headers: [auth, ("Prefer", "return=minimal, wait=5"), ("If-None-Match", tag)])
        #expect(changed.status == 200)
        #expect(changed.header("ETag") != tag)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(changed.body)) as? [String: Any])
        #expect(json["sheet"] == nil && json["trace"] == nil)
    }
}
