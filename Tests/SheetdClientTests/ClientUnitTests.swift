import Foundation
import SheetdClient
import Testing

/// The Server-Sent Events parser: pure, fed in arbitrary chunks.
@Suite struct ServerSentEventParserTests {
    /// A retry hint, an event with an id, a heartbeat comment and a shutdown event, as sheetd sends them.
    @Test func parsesWhatSheetdSends() {
        var parser = ServerSentEventParser()
        let text = "retry: 2000\n\nid: \"abc\"\nevent: decision\ndata: {\"present\":false}\n\n: heartbeat\n\nevent: shutdown\ndata: {}\n\n"
        let events = parser.feed(Array(text.utf8))
        #expect(parser.retryMilliseconds == 2000)
        #expect(
            events == [
                ServerSentEvent(event: "decision", data: #"{"present":false}"#, id: #""abc""#),
                ServerSentEvent(event: "shutdown", data: "{}", id: #""abc""#),
            ])
        #expect(parser.lastEventId == #""abc""#)
    }

    /// Lines may end with CRLF or CR, split anywhere across chunks; data lines join with newlines.
    @Test func handlesEveryLineEndingAcrossChunks() {
        let text = "data: one\r\ndata: two\r\rdata:three\n\n"
        for split in 0...text.utf8.count {
            var parser = ServerSentEventParser()
            let bytes = Array(text.utf8)
            let events = parser.feed(bytes[..<split]) + parser.feed(bytes[split...])
            #expect(events == [ServerSentEvent(data: "one\ntwo"), ServerSentEvent(data: "three")], "split at \(split)")
        }
    }

    /// A block with no data dispatches nothing; an unknown field is ignored.
    @Test func ignoresEmptyBlocksAndUnknownFields() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("event: decision\n\nfoo: bar\ndata\n\n".utf8)) == [ServerSentEvent(data: "")])
    }
}

/// The retry delays: exponential, capped, jittered in the upper half, never below Retry-After (itself capped).
@Suite struct RetryPolicyTests {
    /// The delay doubles per retry up to maxDelay, jittered in its upper half; Retry-After is the floor up to maxRetryAfter.
    @Test func delaysGrowAreCappedAndJittered() {
        let policy = RetryPolicy(maxAttempts: 6, baseDelay: 0.2, maxDelay: 1, maxRetryAfter: 5)
        #expect(policy.delay(beforeRetry: 1, unit: 1) == 0.2)
        #expect(policy.delay(beforeRetry: 1, unit: 0) == 0.1)
        #expect(policy.delay(beforeRetry: 2, unit: 1) == 0.4)
        #expect(policy.delay(beforeRetry: 3, unit: 1) == 0.8)
        #expect(policy.delay(beforeRetry: 4, unit: 1) == 1)
        #expect(policy.delay(beforeRetry: 60, unit: 0.5) == 0.75)
        #expect(policy.delay(beforeRetry: 1, retryAfter: 3, unit: 0.5) == 3)
        #expect(policy.delay(beforeRetry: 1, retryAfter: 3600, unit: 0.5) == 5)
        #expect(RetryPolicy.none.maxAttempts == 1)
    }

    /// Retried as Alamofire's RetryPolicy retries: 408, 429, 500, 502, 503, 504. No other status (401 is the token's business).
    @Test(arguments: [
        (408, true), (429, true), (500, true), (502, true), (503, true), (504, true),
        (400, false), (401, false), (403, false), (404, false), (409, false), (501, false), (505, false),
    ])
    func theRetryableStatusesAreAlamofires(status: Int, retryable: Bool) {
        #expect(SheetdError(kind: .server, status: status, message: "").isRetryable == retryable)
        #expect(RetryPolicy(retryableStatuses: [409]).retries(SheetdError(kind: .server, status: 409, message: "")))
    }

    /// Transport failures are retried by their URLError code: lost, refused, timed out and offline are; a cancellation, a bad URL or an untrusted certificate is not.
    @Test func transportFailuresAreRetriedByTheirCode() {
        func failure(_ code: URLError.Code?) -> SheetdError { SheetdError(kind: .transport, message: "", urlError: code.map { URLError($0) }) }
        for code in [URLError.Code.networkConnectionLost, .cannotConnectToHost, .timedOut, .notConnectedToInternet, .dnsLookupFailed] {
            #expect(failure(code).isRetryable, "\(code.rawValue)")
        }
        for code in [URLError.Code.cancelled, .badURL, .unsupportedURL, .serverCertificateUntrusted, .userAuthenticationRequired] {
            #expect(!failure(code).isRetryable, "\(code.rawValue)")
        }
        #expect(failure(nil).isRetryable, "a stream cut mid-way has no URLError")
        #expect(!SheetdError(kind: .token, message: "").isRetryable)
    }
}

/// `Retry-After` as delay-seconds and as every HTTP-date form RFC 9110 makes recipients accept.
@Suite struct RetryAfterTests {
    static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    /// Seconds are read as is; the three date forms as their distance from now; a past date is 0; garbage is nil.
    @Test func readsSecondsAndHTTPDates() {
        #expect(RetryAfter.seconds("120", now: Self.now) == 120)
        #expect(RetryAfter.seconds(" 0 ", now: Self.now) == 0)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:50:07 GMT", now: Self.now) == 30)
        #expect(RetryAfter.seconds("Sunday, 06-Nov-94 08:50:07 GMT", now: Self.now) == 30)
        #expect(RetryAfter.seconds("Sun Nov  6 08:50:07 1994", now: Self.now) == 30)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:00:00 GMT", now: Self.now) == 0)
        for garbage in ["", "-1", "1.5", "soon", "Sun, 06 Nov 1994"] { #expect(RetryAfter.seconds(garbage, now: Self.now) == nil, "\(garbage)") }
        #expect(RetryAfter.httpDate(Self.now) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}

/// The context's query: every parameter the decision route takes, and the app's version and language read safely.
@Suite struct SheetContextTests {
    /// All ten parameters, in the API's order; nil members are left out.
    @Test func everyParameterReachesTheQuery() {
        let context = SheetContext(
            screen: "home", tab: "accounts", platform: .ios, idiom: .pad, orientation: .landscape, keyboardVisible: true, dirty: false,
            viewportHeight: 700, appVersion: "2.10.0", locale: "de-CH")
        #expect(
            context.queryItems.map { "\($0.name)=\($0.value ?? "")" } == [
                "screen=home", "tab=accounts", "platform=ios", "idiom=pad", "orientation=landscape", "keyboard=true", "dirty=false",
                "viewportHeight=700", "appVersion=2.10.0", "locale=de-CH",
            ])
        #expect(SheetContext(screen: "home").queryItems.map(\.name) == ["screen", "platform"])
        #expect(context != SheetContext(screen: "home", tab: "accounts", platform: .ios), "the cache keys on targeting too")
    }

    /// Only values the server accepts pass (a 400 would end a live decision): dotted numbers, BCP 47 tags.
    @Test func appVersionAndLocaleAreValidated() {
        for valid in ["2", "2.10", "2.10.0", "1.2.3.4.5.6.7.8", "123456789.0"] { #expect(SheetContext.appVersion(valid) == valid) }
        for invalid in ["", "2.", ".2", "2..1", "2.10.0-beta", "v2", "1.2.3.4.5.6.7.8.9", "1234567890", "2.10 (1)"] {
            #expect(SheetContext.appVersion(invalid) == nil, "\(invalid)")
        }
        #expect(SheetContext.appVersion(nil) == nil)
        for valid in ["de", "de-CH", "zh-Hant-TW", "es-419"] { #expect(SheetContext.locale(valid) == valid) }
        #expect(SheetContext.locale("de_CH") == "de-CH", "Locale.identifier's underscore")
        for invalid in ["", "d", "1a", "de-", "de--CH", "de-CHEESEFONDUE", "x-private", "de CH"] {
            #expect(SheetContext.locale(invalid) == nil, "\(invalid)")
        }
    }
}

/// Forward compatibility: values and members a newer server adds decode without failing.
@Suite struct ForwardCompatibilityTests {
    @Test func unknownEnumValuesAndMembersDecode() throws {
        let json = #"""
            {"present":true,"reason":"quiet-hours","sheet":null,"stack":[],"yielded":[],"trace":[],"campaign":{"id":"x"}}
            """#
        let decision = try JSONDecoder().decode(Decision.self, from: Data(json.utf8))
        #expect(decision.reason == DecisionReason(rawValue: "quiet-hours"))
        #expect(!decision.reason.isKnown)
        #expect(DecisionReason.noSheetForScreen.rawValue == "no-sheet-for-screen")
        #expect(DecisionReason.cardsAvailable.isKnown)
        #expect(try JSONEncoder().encode(DetentId.content) == Data(#""content""#.utf8))
    }
}

/// The presentation plan of a decision's ios block.
@Suite struct SheetPresentationPlanTests {
    static func ios(
        detents: [DetentId], heights: [String: Double] = [:], selected: DetentId, undimmed: DetentId? = nil,
        grabber: Bool = false, radius: Double? = nil, modal: Bool = false
    ) -> IosSheet {
        IosSheet(
            detents: detents, customDetentHeights: heights, selectedDetentIdentifier: selected, largestUndimmedDetentIdentifier: undimmed,
            prefersGrabberVisible: grabber, prefersScrollingExpandsWhenScrolledToEdge: false, prefersEdgeAttachedInCompactHeight: true,
            widthFollowsPreferredContentSizeWhenEdgeAttached: true, preferredCornerRadius: radius, isModalInPresentation: modal)
    }

    /// A content-sized card sheet: one custom detent of the measured height, the corner radius.
    @Test func contentDetentUsesTheMeasuredHeight() {
        let plan = SheetPresentationPlan(ios: Self.ios(detents: [.content], heights: ["content": 312], selected: .content, radius: 16))
        #expect(plan.detents == [.custom(identifier: "content", height: 312)])
        #expect(plan.selectedDetent == .custom(identifier: "content", height: 312))
        #expect(plan.preferredCornerRadius == 16)
        #expect(plan.prefersEdgeAttachedInCompactHeight)
        #expect(!plan.isResizable && !plan.allowsBackgroundInteraction)
        #expect(plan.modalPresentationStyle == .pageSheet)
        // No dismissal or swiftui object (an older server): derived from the UIKit members.
        #expect(plan.dismissal == .init(swipe: true, tapScrim: true, requiresDelegate: false))
        #expect(!plan.needsDismissalDelegate)
        #expect(plan.swiftUI.detents == plan.detents && plan.swiftUI.selection == plan.selectedDetent)
        #expect(plan.swiftUI.cornerRadius == 16 && !plan.swiftUI.interactiveDismissDisabled)
    }

    /// A medium-resizable, non-modal-up-to-medium sheet with a grabber, modal in presentation.
    @Test func resizableSheetWithUndimmedMedium() {
        let plan = SheetPresentationPlan(
            ios: Self.ios(detents: [.medium, .large], selected: .medium, undimmed: .medium, grabber: true, modal: true), presentationStyle: .popover)
        #expect(plan.detents == [.medium, .large])
        #expect(plan.selectedDetent == .medium)
        #expect(plan.largestUndimmedDetent == .medium)
        #expect(plan.prefersGrabberVisible && plan.isModalInPresentation && plan.isResizable && plan.allowsBackgroundInteraction)
        #expect(plan.modalPresentationStyle == .popover)
        #expect(plan.swiftUI.backgroundInteractionUpThrough == .medium && plan.swiftUI.interactiveDismissDisabled)
    }

    /// Unknown detents, and a custom detent without a height, are left out; nothing left means large.
    @Test func unknownOrUnmeasuredDetentsFallBack() {
        let plan = SheetPresentationPlan(
            ios: Self.ios(detents: [DetentId(rawValue: "tiny"), .content], selected: .content, undimmed: DetentId(rawValue: "tiny")),
            presentationStyle: PresentationStyle(rawValue: "fullScreen"))
        #expect(plan.detents == [.large])
        #expect(plan.selectedDetent == .large)
        #expect(plan.largestUndimmedDetent == nil)
        #expect(plan.modalPresentationStyle == .pageSheet)
        let kept = SheetPresentationPlan(ios: Self.ios(detents: [.medium, .large], selected: DetentId(rawValue: "tiny")))
        #expect(kept.selectedDetent == .large)
    }

    /// The block's own modalPresentationStyle, dismissal and swiftui objects win: a form sheet whose
    /// swipe dismisses but whose scrim tap does not needs the delegate, which answers by gesture.
    @Test func blockMembersWin() {
        var ios = Self.ios(detents: [.content, .large], heights: ["content": 300], selected: .content, grabber: true, modal: true)
        ios.modalPresentationStyle = .formSheet
        ios.dismissal = IosDismissal(swipe: true, tapScrim: false, requiresDelegate: true)
        ios.swiftui = SwiftUISheet(
            presentationDetents: [SwiftUIDetent(kind: .height, height: 300), SwiftUIDetent(kind: .large)],
            selection: SwiftUIDetent(kind: .height, height: 300), presentationDragIndicator: .visible,
            presentationBackgroundInteraction: SwiftUIBackgroundInteraction(kind: .disabled), presentationContentInteraction: .resizes,
            presentationCornerRadius: 12, interactiveDismissDisabled: false)
        let plan = SheetPresentationPlan(ios: ios, presentationStyle: .popover, confirmBeforeDismiss: false)
        #expect(plan.modalPresentationStyle == .formSheet)
        #expect(plan.needsDismissalDelegate)
        #expect(plan.shouldDismiss(whileDragging: true))
        #expect(!plan.shouldDismiss(whileDragging: false))
        #expect(plan.swiftUI.detents == [.custom(identifier: "content", height: 300), .large])
        #expect(plan.swiftUI.selection == .custom(identifier: "content", height: 300))
        #expect(plan.swiftUI.dragIndicatorVisible && plan.swiftUI.contentInteractionResizes && !plan.swiftUI.interactiveDismissDisabled)
        #expect(plan.swiftUI.backgroundInteractionUpThrough == nil && plan.swiftUI.cornerRadius == 12)
        ios.modalPresentationStyle = ModalPresentationStyle(rawValue: "overFullScreen")
        #expect(SheetPresentationPlan(ios: ios, presentationStyle: .popover).modalPresentationStyle == .popover)
        #expect(SheetPresentationPlan(ios: ios, presentationStyle: .sheet, confirmBeforeDismiss: true).needsDismissalDelegate)
    }
}
