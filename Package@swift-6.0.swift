// swift-tools-version: 6.0
import PackageDescription

// The manifest Swift 6.0 and 6.1 toolchains (Xcode 16.0 to 16.4) read: an app adding this package
// gets the Swift client. Package.swift needs tools 6.2 for the server's `treatAllWarnings`; Swift 6.2
// and later read it instead (SwiftPM picks the newest manifest its toolchain supports), so this file
// declares only the client's products and must list the same client targets (PackageBoundaryTests
// checks that it loads and names them).
let package = Package(
    name: "sheetd",
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .library(name: "SheetdClient", targets: ["SheetdClient"]),
        .library(name: "SheetdClientTesting", targets: ["SheetdClientTesting"]),
        .library(name: "SheetdAdminClient", targets: ["SheetdAdmin"]),
    ],
    targets: [
        .target(name: "SheetdClient", exclude: ["CHANGELOG.md"], resources: [.copy("PrivacyInfo.xcprivacy")], swiftSettings: clientSettings),
        .target(name: "SheetdClientTesting", dependencies: ["SheetdClient"], swiftSettings: clientSettings),
        .target(name: "SheetdAdmin", dependencies: ["SheetdClient"], swiftSettings: clientSettings),
        // The client's own logic, no server: what the macOS workflow runs (`swift test`).
        .testTarget(name: "SheetdClientUnitTests", dependencies: ["SheetdClient", "SheetdClientTesting"], swiftSettings: clientSettings),
    ]
)

var clientSettings: [SwiftSetting] {
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
