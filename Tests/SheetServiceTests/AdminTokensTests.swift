import Foundation
import TestSupport
import Testing

@testable import SheetService

/// Named admin tokens (`SHEETD_ADMIN_TOKENS_FILE`): parsing, rights, and names instead of tokens in
/// revisions and the access log.
@Suite(.serialized) struct AdminTokensTests {
    /// Each named token has admin rights under its name, and the single admin token keeps working as
    /// `admin`. (Reading the file: `Tests/sheetdTests/ConfigurationTests.swift`.)
    @Test func namedTokensAreAdminsWithTheirNames() throws {
        let tokens = [AdminToken(name: "alice", token: AdminTokensFiles.aliceToken), AdminToken(name: "bob", token: AdminTokensFiles.bobToken)]
        let verifier = TokenVerifier(jwtSecret: "s", adminToken: "plain", adminTokens: tokens)
        #expect(try verifier.principal(authorization: "Bearer \(AdminTokensFiles.bobToken)", now: 0) == .admin)
        #expect(verifier.adminName(authorization: "Bearer \(AdminTokensFiles.aliceToken)") == "alice")
        #expect(verifier.adminName(authorization: "Bearer \(AdminTokensFiles.bobToken)") == "bob")
        #expect(verifier.adminName(authorization: "Bearer plain") == "admin")
        #expect(verifier.adminName(authorization: "Bearer nobody") == nil)
        #expect(throws: TokenError.self) { try verifier.principal(authorization: "Bearer nobody", now: 0) }
    }

    /// A bad file is one line on stderr naming the line, never a token; exit 2.
    @Test(arguments: AdminTokensFiles.bad)
    func aBadFileNamesTheLineNotTheToken(_ text: String) throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-tokens-bad")
        defer { dir.remove() }
        let path = try AdminTokensFiles.write(text, in: dir)
        let run = try ProcessTests.run(["serve", "--admin-tokens-file", path, "--db", dir.file()])
        #expect(run.status == 2 && run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
    }

    /// The access log of a catalog write names the token's name as `actor`, and no line holds a token.
    @Test func theAccessLogNamesTheActorNeverTheToken() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-tokens-log")
        defer { dir.remove() }
        let path = try AdminTokensFiles.write("alice \(AdminTokensFiles.aliceToken)\n", in: dir)
        let sheetd = try LaunchedSheetd(["--admin-tokens-file", path])
        let socket = try RawSocket(port: sheetd.port)
        let body = #"{"kind":"informational","screen":"home"}"#
        try socket.send(
            "PUT /v1/sheets/logged HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(AdminTokensFiles.aliceToken)\r\nSheetd-Comment: logged change\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(try socket.receiveAll().hasPrefix("HTTP/1.1 201"))
        let line = try #require(sheetd.reader.waitFor("\"route\":\"/v1/sheets/{sheetId}\"", seconds: 5))
        #expect(line.contains("\"actor\":\"alice\""), "\(line)")
        sheetd.stop()
        #expect(!sheetd.reader.all.contains { $0.contains(AdminTokensFiles.aliceToken) })
    }
}
