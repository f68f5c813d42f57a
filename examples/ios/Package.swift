// swift-tools-version: 6.0
// The sheetd example app: a Swift Playgrounds / Xcode app package (open this folder in Xcode 16 or
// later, or in Swift Playgrounds 4.5+, and run it on an iPhone simulator). Not built by `make test`.
import AppleProductTypes
import PackageDescription

let package = Package(
    name: "SheetdExample",
    platforms: [.iOS("16.4")],
    products: [
        .iOSApplication(
            name: "SheetdExample",
            targets: ["SheetdExample"],
            bundleIdentifier: "com.example.sheetd",
            teamIdentifier: "",
            displayVersion: "2.10.0",
            bundleVersion: "1",
            appIcon: .placeholder(icon: .calendar),
            accentColor: .presetColor(.indigo),
            supportedDeviceFamilies: [.phone, .pad],
            supportedInterfaceOrientations: [.portrait, .landscapeRight, .landscapeLeft],
            appCategory: .finance
        )
    ],
    dependencies: [
        // This repository; an app of your own depends on a release instead: .package(url: "…/sheetd.git", from: "0.3.0").
        .package(name: "sheetd", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "SheetdExample",
            dependencies: [.product(name: "SheetdClient", package: "sheetd")],
            path: "Sources"
        )
    ]
)
