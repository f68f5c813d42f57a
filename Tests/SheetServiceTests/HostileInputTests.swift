import Crypto
import Foundation
import JSONKit
import MicroHTTP
import SheetPolicy
import SheetWire
import TestSupport
import Testing

@testable import SheetService

/// Tokens and bodies built to cost CPU or crash the process are refused cheaply, and the messages
/// say what a client must send.
@Suite struct HostileInputTests {
    static let secret = "hostile-secret"
    let verifier = TokenVerifier(jwtSecret: HostileInputTests.secret, adminToken: "hostile-admin-token", clockSkewSeconds: 60)
    let now: Int64 = 1_800_000_000

    static func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

    /// A token over arbitrary header and payload texts, signed with `secret`.
    static func signed(header: String = #"{"alg":"HS256","typ":"JWT"}"#, payload: String, secret: String = secret) -> String {
        let input = b64(header) + "." + b64(payload)
        return input + "." + Base64URL.encode(HMACSHA256.authenticationCode(for: Array(input.utf8), key: Array(secret.utf8)))
    }

    /// Seconds of this thread's CPU time spent in `body` (preemption by other work does not count).
    static func cpuSeconds(_ body: () -> Void) -> Double {
        func now() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        let start = now()
        body()
        return now() - start
    }

    /// A 2.8 KB token nesting 510 levels (4 s of CPU for a 401 when JSON was parsed first) fails on
    /// its signature without its JSON being read; signed, it fails on the depth limit; either way fast.
    @Test func deeplyNestedTokenCostsNothing() {
        let deep = String(repeating: "[", count: 510) + String(repeating: "]", count: 510)
        let unsigned = Self.b64(deep) + "." + Self.b64(deep) + ".c2lnbmF0dXJl"
        #expect(unsigned.utf8.count > 2_700)
        var outcome: Result<Principal, TokenError>?
        let seconds = Self.cpuSeconds {
            outcome = Result { () throws(TokenError) in try verifier.principal(authorization: "Bearer " + unsigned, now: now) }
        }
        #expect(outcome == .failure(.badSignature))
        #expect(seconds < 0.05)

        let signed = Self.signed(header: deep, payload: deep)
        let signedSeconds = Self.cpuSeconds {
            outcome = Result { () throws(TokenError) in try verifier.principal(authorization: "Bearer " + signed, now: now) }
        }
        #expect(outcome == .failure(.malformed))
        #expect(signedSeconds < 0.05)
    }

    /// Nothing from an unsigned token is decoded before its signature: garbage parts answer "signature".
    @Test func signatureIsCheckedBeforeAnythingElse() {
        for token in ["@@@.@@@.c2ln", "e30.e30.c2ln", Self.b64(#"{"alg":"none"}"#) + "." + Self.b64(#"{"sub":"a"}"#) + "."] {
            #expect(throws: TokenError.badSignature, "\(token)") { try verifier.verifyUserToken(token, now: now) }
        }
        #expect(throws: TokenError.malformed) { try verifier.verifyUserToken("a.b", now: now) }
        #expect(throws: TokenError.malformed) { try verifier.verifyUserToken("a.b.c.d", now: now) }
        #expect(throws: TokenError.malformed) { try verifier.verifyUserToken("abc", now: now) }
        // Non-ASCII around the dots: parts split on bytes, the signature over the exact header.payload bytes.
        #expect(throws: TokenError.badSignature) { try verifier.verifyUserToken("é\u{301}.🙂.c2ln", now: now) }
        #expect(throws: TokenError.malformed) { try verifier.verifyUserToken("e30.e30.c2ln.", now: now) }
    }

    /// Tokens over 4 KiB are refused before any work, with a message that names the cap.
    @Test func oversizeTokenIsRefusedByLength() {
        let big = String(repeating: "a", count: 4097)
        #expect(throws: TokenError.tooLong) { try verifier.principal(authorization: "Bearer " + big, now: now) }
        #expect(TokenError.tooLong.detail == "the bearer token is longer than 4096 bytes")
        let atCap = String(repeating: "a", count: 4089) + ".b.c2ln"
        #expect(throws: TokenError.badSignature) { try verifier.principal(authorization: "Bearer " + atCap, now: now) }
    }

    /// `exp`, `nbf` and `iat` at the ends of Int64 (once a trap: `now <= exp + skew` overflowed) or
    /// outside 1970-9999 are a 401 naming the claim.
    @Test(arguments: [
        #"{"sub":"alice","exp":9223372036854775807}"#, #"{"sub":"alice","exp":9223372036854775800}"#,
        #"{"sub":"alice","exp":-9223372036854775808}"#, #"{"sub":"alice","exp":1e300}"#, #"{"sub":"alice","exp":-1}"#,
        #"{"sub":"alice","exp":1900000000,"nbf":-9223372036854775808}"#, #"{"sub":"alice","exp":1900000000,"nbf":9223372036854775807}"#,
        #"{"sub":"alice","exp":1900000000,"iat":9223372036854775807}"#, #"{"sub":"alice","exp":1900000000,"iat":"yesterday"}"#,
        #"{"sub":"alice","exp":253402300800}"#, #"{"sub":"alice","exp":99999999999999999999}"#,
    ])
    func outOfRangeTimesAreRefused(_ payload: String) {
        let token = Self.signed(payload: payload)
        do {
            _ = try verifier.principal(authorization: "Bearer " + token, now: now)
            Issue.record("accepted \(payload)")
        } catch {
            guard case .invalidClaims(let why) = error else { Issue.record("\(payload): \(error)"); return }
            #expect(why.contains("NumericDate from 0 to 253402300799"), "\(why)")
        }
    }

    /// The time checks compare without overflow whatever the stored values and the clock say.
    @Test func timeChecksNeverOverflow() throws {
        for (exp, nbf) in [(Int64.max, Int64.min), (Int64.min, Int64.max), (Int64.max, Int64.max), (0, Int64.min)] {
            for now in [Int64.min, 0, now, Int64.max] {
                for skew in [Int64(0), 60, Int64.max] {
                    _ = try? VerifiedTokenCache.Entry(subject: "a", exp: exp, nbf: nbf).check(now: now, skew: skew)
                }
            }
        }
        #expect(TokenVerifier.isExpired(exp: 100, now: 161, leeway: 60))
        #expect(!TokenVerifier.isExpired(exp: 100, now: 160, leeway: 60))
        #expect(!TokenVerifier.isExpired(exp: .max, now: .max, leeway: 60))
        #expect(TokenVerifier.isNotYetValid(nbf: 100, now: 39, leeway: 60))
        #expect(!TokenVerifier.isNotYetValid(nbf: .min, now: .min, leeway: 60))
    }

    /// The leeway is a setting: with 0, a token is refused the second after `exp`. (`--jwt-leeway`:
    /// `Tests/sheetdTests/ConfigurationTests.swift`.)
    @Test func leewayIsASetting() throws {
        let strict = TokenVerifier(jwtSecret: Self.secret, adminToken: "x", clockSkewSeconds: 0)
        let token = strict.issueUserToken(sub: "alice", now: now, ttl: 10)
        #expect(try strict.verifyUserToken(token, now: now + 10) == "alice")
        #expect(throws: TokenError.expired) { try strict.verifyUserToken(token, now: now + 11) }
        #expect(try verifier.verifyUserToken(token, now: now + 70) == "alice")
    }

    /// A header without the `Bearer ` scheme says what the header must look like.
    @Test func missingBearerPrefixSaysWhatToSend() {
        for header in ["eyJhbGciOi.abc.def", "Basic YTpi", "Bearer", "Bearer    "] {
            #expect(throws: TokenError.notBearer, "\(header)") { try verifier.principal(authorization: header, now: now) }
        }
        #expect(TokenError.notBearer.detail.contains("Authorization: Bearer <token>"))
    }

    /// Mutated and generated tokens never trap the verifier, and each is refused or accepted as a whole.
    @Test func fuzzedTokensNeverTrap() {
        var rng = SplitMix64(seed: 0x70C3_0019)
        let valid = verifier.issueUserToken(sub: "alice", now: now, ttl: 3600)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ".utf8)
        let payloads = [
            #"{"sub":"alice","exp":1800003600}"#, #"{"sub":"alice","exp":1800003600,"sub":"bob"}"#, #"{"sub":"alice","exp":1e400}"#,
            #"{"sub":"alice","exp":1800003600,}"#, #"{"sub":"\ud800","exp":1800003600}"#, #"{"sub":"alice","exp":"1800003600"}"#,
            "[" + String(repeating: "{\"a\":", count: 40), #"{"sub":"alice","exp":1800003600.5,"nbf":-0.5}"#, "null", "",
        ]
        var accepted = 0
        for round in 0..<20_000 {
            var token: [UInt8]
            switch round % 3 {
            case 0:
                token = Array(valid.utf8)
                for _ in 0..<rng.int(in: 1...4) {
                    let at = rng.int(in: 0...(token.count - 1))
                    if rng.chance(50) { token[at] = rng.pick(alphabet) } else { token.insert(UInt8(truncatingIfNeeded: rng.next()), at: at) }
                }
            case 1:
                token = Array(Self.signed(payload: rng.pick(payloads)).utf8)
            default:
                token = (0..<rng.int(in: 0...rng.pick([40, 400, 5000]))).map { _ in rng.pick(alphabet) }
            }
            let header = "Bearer " + String(decoding: token, as: UTF8.self)
            if (try? verifier.principal(authorization: header, now: now)) != nil { accepted += 1 }
        }
        #expect(accepted > 0)
    }
}

/// Request bodies: UTF-8 only, exact integers, messages that name the field and the range.
@Suite struct RequestBodyTests {
    static func problem(_ body: () throws -> Void) -> Problem? {
        do { try body(); return nil } catch { return (error as? Problem) ?? (error as? WireError).map(Problems.wire) }
    }

    /// UTF-16 and UTF-32 (with or without a byte order mark) and a UTF-8 BOM are refused by name.
    @Test(arguments: [("UTF-16LE", false), ("UTF-16BE", false), ("UTF-32LE", false), ("UTF-32BE", false), ("UTF-16LE", true), ("UTF-16BE", true)])
    func otherEncodingsAreRefused(_ name: String, _ bom: Bool) throws {
        let text = (bom ? "\u{FEFF}" : "") + #"{"count":1,"count":7}"#
        let encoding: String.Encoding =
            switch name {
            case "UTF-16LE": .utf16LittleEndian
            case "UTF-16BE": .utf16BigEndian
            case "UTF-32LE": .utf32LittleEndian
            default: .utf32BigEndian
            }
        let bytes = try #require(text.data(using: encoding).map(Array.init))
        let p = Self.problem { _ = try RequestBody.object(bytes) }
        #expect(p?.status == 400)
        #expect(p?.detail.contains("must be UTF-8") == true, "\(p?.detail ?? "")")
        #expect(p?.detail.contains(name) == true, "\(p?.detail ?? "")")
        let bomProblem = Self.problem { _ = try RequestBody.object([0xEF, 0xBB, 0xBF] + Array(#"{"count":1}"#.utf8)) }
        #expect(bomProblem?.detail.contains("byte order mark") == true)
    }

    /// Nesting 400 levels in 817 bytes (a second of CPU before) is refused at level 33, at once.
    @Test func deepBodyIsRefusedCheaply() {
        let body = Array((String(repeating: #"{"a":"#, count: 400).prefix(817 - 1) + "1").utf8)
        var p: Problem?
        let seconds = HostileInputTests.cpuSeconds { p = Self.problem { _ = try RequestBody.object(body) } }
        #expect(seconds < 0.05)
        #expect(p?.detail.contains("nested more than 32 levels") == true, "\(p?.detail ?? "")")
    }

    /// Count reports: the integer is exact, the range is said when the value is an integer out of it.
    @Test(arguments: [
        (#"{"count":1e20}"#, "count must be an integer from 0 to 1000000"),
        (#"{"count":123456789012345678901234567890}"#, "count must be an integer from 0 to 1000000"),
        (#"{"count":-1}"#, "count must be an integer from 0 to 1000000"),
        (#"{"count":2.9999999999999999999}"#, "count must be an integer"),
        (#"{"count":1e-400}"#, "count must be an integer"),
        (#"{"count":1.5}"#, "count must be an integer"),
        (#"{"count":"3"}"#, "count must be an integer"),
        (#"{"seq":1}"#, "count is required"),
        (#"{"count":1,"count":2}"#, "count appears more than once in the same object"),
        (#"{"count":1,"colour":2}"#, "colour is not a known member"),
    ])
    func countReportNamesTheField(_ body: String, _ detail: String) {
        let p = Self.problem { _ = try CountReport(try RequestBody.object(Array(body.utf8))) }
        #expect(p?.detail == detail)
    }

    /// A thousand unknown members are answered with 20 names and a count, not a thousand entries;
    /// beyond `RequestBody.maximumMembers` the body is refused where the limit is passed, unparsed.
    @Test func unknownMembersAreNamedUpToALimit() throws {
        let body = "{" + (0..<1000).map { #""k\#($0)":0"# }.joined(separator: ",") + #","count":1}"#
        do {
            _ = try CountReport(try JSONBody.object(Array(body.utf8)))
            Issue.record("accepted")
        } catch {
            #expect(error.invalidParams.count == 20)
            #expect(error.invalidParams.last?.reason == "is not a known member (nor are 980 more)")
        }
        let wide = "{" + (0..<5000).map { #""k\#($0)":0"# }.joined(separator: ",") + #","count":1}"#
        let p = Self.problem { _ = try CountReport(try RequestBody.object(Array(wide.utf8))) }
        #expect(p?.status == 400)
        #expect(p?.detail.contains("more than 1024 members") == true, "\(p?.detail ?? "")")
    }

    /// Well-formed bodies decode into typed values (1.0 counts as the integer 1, as in JSON Schema).
    @Test func bodiesDecodeIntoTypedValues() throws {
        let count = try CountReport(try RequestBody.object(Array(#"{"count":1.0,"seq":7,"filter":"new","eventId":"e1"}"#.utf8)))
        #expect(count.count == 1 && count.seq == 7 && count.filter == "new" && count.eventId == "e1")
        let dismissal = try Dismissal(try RequestBody.object(Array(#"{"sheetId":"s","method":"swipe"}"#.utf8)))
        #expect(dismissal.sheetId == "s" && dismissal.method == .swipe && dismissal.eventId == nil)
        let presentation = try PresentationReport(try RequestBody.object(Array(#"{"sheetId":"s","mode":"push","parentSheetId":"p"}"#.utf8)))
        #expect(presentation.mode == .push && presentation.parentSheetId == "p")
        let height = try ContentHeightReport(try RequestBody.object(Array(#"{"height":312.5,"platform":"android"}"#.utf8)))
        #expect(height.height == 312.5 && height.platform == .android)
        #expect(Self.problem { _ = try Dismissal([:]) }?.detail == "sheetId is required; method is required")
        #expect(
            Self.problem { _ = try ContentHeightReport(["height": .largeInteger(.infinity), "platform": .string("ios")]) }?.detail
                == "height must be a finite number from 1 to 10000")
    }

    /// Malformed JSON is described in words with a line and column, never a byte offset.
    @Test func malformedBodiesSayWhatAndWhere() {
        #expect(
            Self.problem { _ = try RequestBody.object(Array(#"{"count":1,}"#.utf8)) }?.detail
                == "the request body is not valid JSON: a trailing comma before '}' (line 1, column 12)")
        #expect(
            Self.problem { _ = try RequestBody.object(Array(#"{"count":01}"#.utf8)) }?.detail
                == "the request body is not valid JSON: a number starts with a superfluous 0 (line 1, column 10)")
        #expect(Self.problem { _ = try RequestBody.object(Array("[1]".utf8)) }?.detail == "the request body must be a JSON object")
    }

    /// A charset other than UTF-8 is 415; UTF-8 spelled any way passes.
    @Test(
        arguments: [
            ("application/json; charset=utf-16", "utf-16"), ("application/json;charset=\"UTF-32\"", "UTF-32"),
            ("application/json; charset=latin1", "latin1"), ("application/json; charset=utf-8", nil),
            ("application/json; CHARSET=\"UTF-8\"", nil), ("application/json", nil), ("application/json; foo=bar", nil),
        ] as [(String, String?)])
    func foreignCharsetsAreNamed(_ contentType: String, _ charset: String?) {
        #expect(RequestBody.foreignCharset(contentType) == charset)
    }

    /// Over HTTP: the UTF-16LE body with duplicate members (200 before) is 400 and changes nothing;
    /// a declared UTF-16 charset is 415.
    @Test func utf16BodiesAreRefusedOverHTTP() throws {
        let live = try LiveService()
        let path = "/v1/users/u16/containers/c1/count"
        let utf16 = Array(#"{"count":1,"count":7}"#.data(using: .utf16LittleEndian)!)
        let headers = [("Authorization", "Bearer \(LiveService.adminToken)"), ("Content-Type", "application/json"), ("Connection", "close")]
        let refused = try fetch(live.server.port, "PUT", path, headers: headers, body: utf16)
        #expect(refused.status == 400)
        #expect(refused.text.contains("UTF-16LE"))
        let declared = try fetch(
            live.server.port, "PUT", path,
            headers: [
                ("Authorization", "Bearer \(LiveService.adminToken)"), ("Content-Type", "application/json; charset=utf-16"), ("Connection", "close"),
            ],
            body: Array(#"{"count":1}"#.utf8))
        #expect(declared.status == 415)
        #expect(declared.text.contains("charset=utf-16"))
        let state = try live.get("/v1/users/u16/state").json
        #expect((state["containers"] as? [Any])?.isEmpty == true)
        #expect(try live.put(path, #"{"count":1.0}"#).status == 200)
    }
}
