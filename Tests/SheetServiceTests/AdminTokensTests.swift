import Foundation
import TestSupport
import Testing

@testable import SheetService

/// Named admin tokens (`SHEETD_ADMIN_TOKENS_FILE`): their rights and names (the file and the access
/// log: sheetdTests/AdminTokensFileTests.swift).
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
}
