import Foundation
import TestSupport
import Testing

/// `SHEETD_ADMIN_TOKENS_FILE` as `sheetd serve` reads it: bad files stop start-up with one line naming
/// the line (never a token), and the access log names the actor (the parsing itself:
/// ConfigurationTests).
@Suite(.serialized) struct AdminTokensFileTests {
    /// A bad file is one line on stderr naming the line, never a token; exit 2.
    @Test(arguments: AdminTokensFiles.bad)
    func aBadFileNamesTheLineNotTheToken(_ text: String) throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-tokens-bad")
        defer { dir.remove() }
        let path = try AdminTokensFiles.write(text, in: dir)
        let run = try SheetdBinary.run(["serve", "--admin-tokens-file", path, "--db", dir.file()])
        #expect(run.status == 2 && run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
    }

    /// The access log of a catalog write names the token's name as `actor`, and no line holds a token.
    @Test func theAccessLogNamesTheActorNeverTheToken() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-tokens-log")
        defer { dir.remove() }
        let path = try AdminTokensFiles.write("alice \(AdminTokensFiles.aliceToken)\n", in: dir)
        let sheetd = try LaunchedSheetd(["--admin-tokens-file", path])
        let socket = try RawConnection(port: sheetd.port)
        let body = #"{"kind":"informational","screen":"home"}"#
        try socket.send(
            "PUT /v1/sheets/logged HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(AdminTokensFiles.aliceToken)\r\nSheetd-Comment: logged change\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(String(decoding: socket.readToEnd(), as: UTF8.self).hasPrefix("HTTP/1.1 201"))
        let line = try #require(sheetd.reader.waitFor("\"route\":\"/v1/sheets/{sheetId}\"", seconds: 5))
        #expect(line.contains("\"actor\":\"alice\""), "\(line)")
        sheetd.stop()
        #expect(!sheetd.reader.all.contains { $0.contains(AdminTokensFiles.aliceToken) })
    }

    /// Each refusal of the file at start-up, with its message: a carriage return inside a line, a second
    /// `admin` beside SHEETD_ADMIN_TOKEN, a token the server's 4 096-byte limit would always refuse.
    @Test(arguments: [
        ("ops token-1\nalice tok\ren-2\n", [String: String](), "line 2 of", "carriage return"),
        ("ops token-1\nadmin token-2\n", ["SHEETD_ADMIN_TOKEN": "plain-admin-token"], "line 2:", "the name admin is SHEETD_ADMIN_TOKEN's"),
        ("ops token-" + String(repeating: "x", count: 4091) + "\n", [:], "line 1:", "the token is 4097 bytes"),
    ])
    func startUpStopsNamingTheLine(text: String, environment: [String: String], line: String, why: String) throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-tokens-refused")
        defer { dir.remove() }
        let path = try AdminTokensFiles.write(text, in: dir)
        let run = try SheetdBinary.run(["serve", "--admin-tokens-file", path, "--db", dir.file()], environment: environment)
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("SHEETD_ADMIN_TOKENS_FILE: \(line)") && run.stderr.contains(why), "\(run.stderr)")
        #expect(!run.stderr.contains("token-"), "a token in the message: \(run.stderr)")
    }

    /// SHEETD_ADMIN_TOKEN itself over the limit stops start-up too; `admin` in the file without it is fine.
    @Test func anAdminTokenOverTheLimitOrTheNameAdminAlone() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-token-long")
        defer { dir.remove() }
        let long = try SheetdBinary.run(
            ["serve", "--db", dir.file()], environment: ["SHEETD_ADMIN_TOKEN": String(repeating: "y", count: 4097), "SHEETD_JWT_SECRET": "s"])
        #expect(long.status == 2)
        #expect(long.stderr.contains("SHEETD_ADMIN_TOKEN: the token is 4097 bytes"), "\(long.stderr)")
        let path = try AdminTokensFiles.write("admin \(AdminTokensFiles.aliceToken)\n", in: dir)
        let sheetd = try LaunchedSheetd(["--admin-tokens-file", path], environment: ["SHEETD_JWT_SECRET": "secret"])
        defer { sheetd.stop() }
        let r = try fetch(sheetd.port, "GET", "/v1/sheets", headers: [("Authorization", "Bearer \(AdminTokensFiles.aliceToken)")])
        #expect(r.status == 200, "\(r.text)")
    }

    /// A file saved with CRLF line endings serves its tokens as written, without the CR.
    @Test func aCRLFFileWorks() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-tokens-crlf")
        defer { dir.remove() }
        let path = try AdminTokensFiles.write(
            "# ops\r\nalice \(AdminTokensFiles.aliceToken)\r\nbob \(AdminTokensFiles.bobToken)\r\n", in: dir)
        let sheetd = try LaunchedSheetd(["--admin-tokens-file", path])
        defer { sheetd.stop() }
        for token in [AdminTokensFiles.aliceToken, AdminTokensFiles.bobToken] {
            let r = try fetch(sheetd.port, "GET", "/v1/sheets", headers: [("Authorization", "Bearer \(token)")])
            #expect(r.status == 200, "\(r.text)")
        }
    }
}
