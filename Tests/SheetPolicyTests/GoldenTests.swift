import Foundation
import JSONKit
import SheetPolicy
import SheetWire
import Testing

/// A decision whose exact JSON is kept in `Golden/<name>.json`, so any change in the output is a visible diff.
///
/// The files hold the response body re-indented (two spaces, one member per line); the test re-indents
/// the actual bytes the same way, so equal files mean equal bytes.
///
/// To regenerate after an intended change, run
/// `SHEETD_UPDATE_GOLDEN=1 swift test --filter SheetPolicyTests.GoldenTests`
/// and review the diff by eye before committing.
struct GoldenCase: Sendable, CustomTestStringConvertible {
    var name: String
    var events: [UserEvent]
    var context: ClientContext
    /// Campaign cases (issue 15): the catalog, the user's campaign state and the clock.
    var catalog: Catalog = Fixtures.catalog
    var campaign: CampaignState? = nil
    var now: Timestamp = Fixtures.now
    var testDescription: String { name }

    static let all: [GoldenCase] = [
        GoldenCase(
            name: "cards-ios-phone-content-measured",
            events: [.count("offers", 3), .count("promo", 1), .height("offers", 280)],
            context: Fixtures.context()),
        GoldenCase(
            name: "cards-android-awaiting-height",
            events: [.count("offers", 2), .height("offers", 300)],
            context: Fixtures.context(platform: .android)),
        GoldenCase(
            name: "nested-over-card-ipad",
            events: [.count("offers", 2), .height("offers", 280), .push("offer-detail", parent: "offers")],
            context: Fixtures.context(idiom: .pad)),
        GoldenCase(
            name: "flow-large-steps-iphone-landscape",
            events: [.push("transfer-amount"), .replace("transfer-payee")],
            context: Fixtures.context("transfer", tab: nil, orientation: .landscape)),
        GoldenCase(
            name: "dirty-form-keyboard-android",
            events: [.push("filters")],
            context: Fixtures.context(platform: .android, keyboard: true, dirty: true)),
        GoldenCase(
            name: "medium-actions-nonmodal-ios",
            events: [.push("account-actions")],
            context: Fixtures.context(viewport: 780)),
        GoldenCase(
            name: "latched",
            events: [.count("offers", 3), .dismiss("offers")],
            context: Fixtures.context()),
        GoldenCase(
            name: "nested-other-screen-over-root",
            events: [.push("filters"), .push("transfer-done"), .height("transfer-done", 360)],
            context: Fixtures.context()),
        GoldenCase(
            name: "no-swipe-android",
            events: [.push("no-swipe")],
            context: Fixtures.context("more", tab: nil, platform: .android)),
        GoldenCase(
            name: "no-scrim-tap-ios-keyboard",
            events: [.push("no-scrim-tap")],
            context: Fixtures.context("more", tab: nil, keyboard: true)),
        GoldenCase(
            name: "no-sheet-for-screen",
            events: [.count("offers", 3)],
            context: Fixtures.context("settings", tab: nil)),
        // Campaign rules: each held reason, and held sheets beside a presented one and under the stack.
        GoldenCase(
            name: "campaign-outside-schedule",
            events: [.count("offers", 3)], context: Fixtures.context(),
            catalog: Campaign.catalog(offers: .init(schedule: .init(start: Campaign.at(3600), end: Campaign.at(7200))))),
        GoldenCase(
            name: "campaign-not-in-audience-promo-presented",
            events: [.count("offers", 3), .count("promo", 1)],
            context: ClientContext(screen: "home", tab: "accounts", platform: .ios, appVersion: "2.9.1", locale: "de-CH"),
            catalog: Campaign.catalog(offers: .init(audience: .init(minAppVersion: "2.10.0", locales: ["de"])))),
        GoldenCase(
            name: "campaign-cooling-down-under-stack",
            events: [.count("offers", 3), .push("filters")], context: Fixtures.context(),
            catalog: Campaign.catalog(offers: .init(cooldownSeconds: 86_400)),
            campaign: CampaignState(lastDismissals: ["offers": Campaign.at(-600)])),
        GoldenCase(
            name: "campaign-frequency-capped",
            events: [.count("offers", 3)], context: Fixtures.context(platform: .android),
            catalog: Campaign.catalog(offers: .init(frequency: .init(max: 2, periodSeconds: 86_400))),
            campaign: CampaignState(
                impressions: ["offers": [Campaign.at(-7200), Campaign.at(-3600)]], impressionTotals: ["offers": 5],
                lastDismissals: ["offers": Campaign.at(-3000)])),
        GoldenCase(
            name: "campaign-global-cap-and-min-interval",
            events: [.count("offers", 3), .count("promo", 2)], context: Fixtures.context(),
            catalog: Campaign.catalog(
                settings: .init(globalCap: .init(max: 1, periodSeconds: 3600), minIntervalSeconds: 600)),
            campaign: CampaignState(
                impressions: ["tip-cards": [Campaign.at(-60)]], lastDismissals: ["tip-cards": Campaign.at(-30)])),
        GoldenCase(
            name: "campaign-on-screen-stays",
            events: [.count("offers", 3)], context: Fixtures.context(),
            catalog: Campaign.catalog(
                offers: .init(frequency: .init(max: 1, periodSeconds: 86_400)), settings: .init(minIntervalSeconds: 600)),
            campaign: CampaignState(impressions: ["offers": [Campaign.at(-5)]])),
    ]
}

struct GoldenTests {
    /// Each golden decision's bytes match the reviewed file exactly.
    @Test(arguments: GoldenCase.all)
    func matchesTheReviewedFile(_ golden: GoldenCase) throws {
        var state = fold(golden.events, catalog: golden.catalog)
        if let campaign = golden.campaign { state.campaign = campaign }
        let bytes = SheetPolicy.decide(catalog: golden.catalog, state: state, context: golden.context, now: golden.now).jsonBytes()
        _ = try JSONSerialization.jsonObject(with: Data(bytes))
        let actual = Self.indented(bytes)

        if ProcessInfo.processInfo.environment["SHEETD_UPDATE_GOLDEN"] == "1" {
            let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
            try actual.write(to: directory.appendingPathComponent("\(golden.name).json"), atomically: true, encoding: .utf8)
            return
        }
        let url = try #require(
            Bundle.module.url(forResource: "Golden/\(golden.name)", withExtension: "json"),
            "missing golden; run with SHEETD_UPDATE_GOLDEN=1 to write it")
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(actual == expected)
    }

    /// Compact JSON re-indented by two spaces per level, one member or element per line.
    static func indented(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var depth = 0
        var inString = false
        var escaped = false
        func newline() { out.append(0x0A); out.append(contentsOf: repeatElement(0x20, count: depth * 2)) }
        for (index, byte) in bytes.enumerated() {
            if inString {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                out.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                out.append(byte)
                let next = index + 1 < bytes.count ? bytes[index + 1] : 0
                if next != UInt8(ascii: "}") && next != UInt8(ascii: "]") { depth += 1; newline() }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                let previous = bytes[index - 1]
                if previous != UInt8(ascii: "{") && previous != UInt8(ascii: "[") { depth -= 1; newline() }
                out.append(byte)
            case UInt8(ascii: ","):
                out.append(byte)
                newline()
            case UInt8(ascii: ":"):
                out.append(contentsOf: [byte, 0x20])
            default:
                out.append(byte)
            }
        }
        out.append(0x0A)
        return String(decoding: out, as: UTF8.self)
    }
}
