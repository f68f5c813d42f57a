import Foundation
import MicroHTTP
import TestSupport
import Testing

/// The decision route's answers over the wire with and without `Accept-Encoding: gzip`.
@Suite struct DecisionCompressionTests {
    /// A client accepting gzip gets the same decision gzip-encoded, with a weak form of the ETag and
    /// `Vary: Accept-Encoding`; revalidating with that weak tag is a 304 that keeps the weak tag.
    @Test func decisionIsGzipEncodedForClientsThatAcceptIt() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let put = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count": 2}"#)
        #expect(put.status == 200)
        let auth = ("Authorization", "Bearer \(live.userToken("u1"))")
        let c = try RawConnection(port: live.server.port)

        let plain = try c.request("GET", StreamTests.decisionPath, headers: [auth])
        #expect(plain.status == 200)
        #expect(plain.body.count >= 1024)
        #expect(plain.header("Content-Encoding") == nil)
        #expect(plain.header("Vary") == "Accept-Encoding")
        let etag = try #require(plain.header("ETag"))
        #expect(!etag.hasPrefix("W/"))

        let encoded = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("Accept-Encoding", "gzip, br")])
        #expect(encoded.status == 200)
        #expect(encoded.header("Content-Encoding") == "gzip")
        #expect(encoded.header("Vary") == "Accept-Encoding")
        #expect(encoded.header("ETag") == "W/" + etag)
        #expect(encoded.body.count < plain.body.count)
        #expect(try gunzip(encoded.body) == plain.body)

        let revalidated = try c.request(
            "GET", StreamTests.decisionPath, headers: [auth, ("Accept-Encoding", "gzip"), ("If-None-Match", "W/" + etag)])
        #expect(revalidated.status == 304)
        #expect(revalidated.header("ETag") == "W/" + etag)
        let plainRevalidated = try c.request("GET", StreamTests.decisionPath, headers: [auth, ("If-None-Match", etag)])
        #expect(plainRevalidated.status == 304)
        #expect(plainRevalidated.header("ETag") == etag)
    }
}
