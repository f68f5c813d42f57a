import Foundation
import TestSupport
import Testing

@testable import MicroHTTP

/// gzip negotiation and encoding of responses that allow it.
@Suite struct CompressionTests {
    func accepts(_ header: String?) -> Bool {
        guard var header else { return ContentCoding.acceptsGzip(nil) }
        return header.withUTF8 { ContentCoding.acceptsGzip($0.span) }
    }

    /// `Accept-Encoding` takes gzip by name or through `*`, unless its weight is 0.
    @Test func acceptEncodingNegotiation() {
        #expect(accepts("gzip"))
        #expect(accepts("br, GZIP;q=0.5"))
        #expect(accepts("x-gzip"))
        #expect(accepts("*"))
        #expect(accepts("deflate , gzip ; q=1.0"))
        #expect(!accepts(nil))
        #expect(!accepts(""))
        #expect(!accepts("br, deflate"))
        #expect(!accepts("gzip;q=0"))
        #expect(!accepts("*, gzip;q=0"))
        #expect(!accepts("identity"))
        #expect(accepts("deflate, gzip"))  // what URLSession on Linux sends
        #expect(!accepts("gzip;q=0.000"))
        #expect(!accepts("gzip;Q=0, *"))
        #expect(accepts("x-gzip\t;\tq=0.1"))
        #expect(!accepts("gzipx, x-gzi, ;q=1"))
    }

    /// A response that allows it is encoded above the minimum size, with Vary, Content-Encoding and
    /// a strong ETag of its own (`-gzip` inside the quotes); below the size, or for a client without
    /// gzip, it is sent as is (Vary still set above the size, once); a response that does not allow
    /// it is never touched.
    @Test func negotiationDecidesTheEncoding() throws {
        let body = Array(String(repeating: #"{"sheet":"offer-cards","trace":[]}"#, count: 60).utf8)
        var allowed = HTTPResponse.json(200, body, headers: [("ETag", "\"abc\"")])
        allowed.compression = .gzipIfAccepted

        let encoded = ContentCoding.negotiate(allowed, acceptsGzip: true, minimumBytes: 1024)
        #expect(encoded.header("Content-Encoding") == "gzip")
        #expect(encoded.header("Vary") == "Accept-Encoding")
        #expect(encoded.header("ETag") == "\"abc-gzip\"")
        #expect(encoded.body.count < body.count)
        #expect(try gunzip(encoded.body) == body)

        let plain = ContentCoding.negotiate(allowed, acceptsGzip: false, minimumBytes: 1024)
        #expect(plain.header("Content-Encoding") == nil)
        #expect(plain.header("Vary") == "Accept-Encoding")
        #expect(plain.header("ETag") == "\"abc\"")
        #expect(plain.body == body)

        let small = ContentCoding.negotiate(allowed, acceptsGzip: true, minimumBytes: body.count + 1)
        #expect(small.header("Content-Encoding") == nil && small.header("Vary") == nil && small.body == body)

        let untouched = ContentCoding.negotiate(.json(200, body), acceptsGzip: true, minimumBytes: 1)
        #expect(untouched.header("Content-Encoding") == nil && untouched.body == body)

        var notModified = HTTPResponse.notModified(headers: [("ETag", "\"abc\"")], representation: body)
        notModified.compression = .gzipIfAccepted
        let revalidated = ContentCoding.negotiate(notModified, acceptsGzip: true, minimumBytes: 1024)
        #expect(revalidated.header("ETag") == "\"abc-gzip\"")
        #expect(revalidated.header("Vary") == "Accept-Encoding")

        // A Vary of the handler's own that names Accept-Encoding is kept, not repeated.
        var varying = allowed
        varying.headers.append(("Vary", "Accept-Encoding, Prefer"))
        let varied = ContentCoding.negotiate(varying, acceptsGzip: true, minimumBytes: 1024)
        #expect(varied.headers.filter { $0.0 == "Vary" }.map(\.1) == ["Accept-Encoding, Prefer"])

        // A handler that says its Vary names Accept-Encoding is encoded the same, its headers not scanned.
        varying.compression = .gzipIfAcceptedVaryIncluded
        let declared = ContentCoding.negotiate(varying, acceptsGzip: true, minimumBytes: 1024)
        #expect(declared.headers.filter { $0.0 == "Vary" }.map(\.1) == ["Accept-Encoding, Prefer"])
        #expect(declared.header("Content-Encoding") == "gzip" && declared.header("ETag") == "\"abc-gzip\"")
        #expect(try gunzip(declared.body) == body)
    }

    /// A body sent again (the same array) is encoded once; an equal body in another array is encoded
    /// on its own; both decode to the body.
    @Test func theSameBodyIsEncodedOnce() throws {
        let body = Array(String(repeating: #"{"present":true,"stack":[]}"#, count: 80).utf8)
        let first = try #require(Gzip.compressRemembered(body))
        let again = try #require(Gzip.compressRemembered(body))
        #expect(first.withUnsafeBufferPointer { $0.baseAddress } == again.withUnsafeBufferPointer { $0.baseAddress })
        var copy = body
        copy.append(0x20)
        copy.removeLast()
        let other = try #require(Gzip.compressRemembered(copy))
        #expect(try gunzip(first) == body && gunzip(other) == body)
    }

    /// A handler's own `Vary` names Accept-Encoding when one of its fields is that token (any case,
    /// white space around it) or `*`.
    @Test func varyListsAcceptEncoding() {
        for yes in ["Accept-Encoding", "accept-encoding", "Prefer, Accept-Encoding", " Accept-Encoding , Prefer", "*", "Prefer,*"] {
            #expect(ContentCoding.namesAcceptEncoding(yes), "\(yes)")
        }
        for no in ["", "Prefer", "Accept-Encodings", "Accept", "X-Accept-Encoding", "Accept Encoding", "**", "Accept-Language"] {
            #expect(!ContentCoding.namesAcceptEncoding(no), "\(no)")
        }
    }

    /// The gzip representation's tag: the identity tag with `-gzip` inside the quotes, weak or strong.
    @Test func gzipEntityTagKeepsTheQuotes() {
        #expect(ContentCoding.gzipEntityTag("\"abc\"") == "\"abc-gzip\"")
        #expect(ContentCoding.gzipEntityTag("W/\"abc\"") == "W/\"abc-gzip\"")
        #expect(ContentCoding.gzipEntityTag("abc") == "abc")
    }

    /// Over a real connection: a client sending `Accept-Encoding: gzip` gets the gzip body, which
    /// decodes to the body a client without it gets.
    @Test func liveServerSendsGzipToClientsThatAcceptIt() throws {
        let body = Array(String(repeating: "sheetd decides which bottom sheet to show. ", count: 100).utf8)
        let router = Router()
        router.add(.GET, "/v1/big-json") { _ in
            var response = HTTPResponse.json(200, body)
            response.compression = .gzipIfAccepted
            return response
        }
        let server = try Self.startedServer(router)
        defer { server.stop(drainTimeout: .seconds(1)) }

        let c = try RawConnection(port: server.port)
        let gz = try c.request("GET", "/v1/big-json", headers: [("Accept-Encoding", "gzip")])
        #expect(gz.status == 200)
        #expect(gz.header("Content-Encoding") == "gzip")
        #expect(gz.header("Vary") == "Accept-Encoding")
        #expect(gz.body.count < body.count)
        #expect(try gunzip(gz.body) == body)
        let identity = try c.request("GET", "/v1/big-json")
        #expect(identity.header("Content-Encoding") == nil)
        #expect(identity.body == body)
    }

    /// A 304 to a request that would get gzip carries the gzip 200's Content-Length (RFC 9110 §8.6),
    /// not the identity body's; one to an identity request the identity length. Both are followed by
    /// nothing: the next answer parses on the same connection.
    @Test func notModifiedCarriesTheSelectedRepresentationsLength() throws {
        let body = Array(String(repeating: "sheetd decides which bottom sheet to show. ", count: 100).utf8)
        let router = Router()
        router.add(.GET, "/v1/tagged") { request in
            var response =
                request.header("If-None-Match") != nil
                ? HTTPResponse.notModified(headers: [("ETag", "\"t\"")], representation: body)
                : HTTPResponse.json(200, body, headers: [("ETag", "\"t\"")])
            response.compression = .gzipIfAccepted
            return response
        }
        let server = try Self.startedServer(router)
        defer { server.stop(drainTimeout: .seconds(1)) }

        let c = try RawConnection(port: server.port)
        let gz = try c.request("GET", "/v1/tagged", headers: [("Accept-Encoding", "gzip")])
        #expect(gz.header("Content-Encoding") == "gzip")
        let gz304 = try c.request("GET", "/v1/tagged", headers: [("Accept-Encoding", "gzip"), ("If-None-Match", "\"t-gzip\"")])
        #expect(gz304.status == 304)
        #expect(gz304.header("Content-Length") == gz.header("Content-Length"), "the identity body's length on a gzip 304")
        #expect(gz304.header("ETag") == gz.header("ETag"))
        let plain304 = try c.request("GET", "/v1/tagged", headers: [("If-None-Match", "\"t\"")])
        #expect(plain304.header("Content-Length") == String(body.count))
        #expect(try c.request("GET", "/v1/tagged").status == 200)
    }

    /// A one-thread server on a free port, no access log.
    static func startedServer(_ router: Router) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        configuration.accessLog = false
        let server = HTTPServer(configuration: configuration, router: router, metrics: HTTPMetrics())
        try server.start()
        return server
    }
}
