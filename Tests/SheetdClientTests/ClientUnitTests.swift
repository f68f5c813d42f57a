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

/// The retry delays: exponential, capped, jittered in the upper half, never below Retry-After.
@Suite struct RetryPolicyTests {
    @Test func delaysGrowAreCappedAndJittered() {
        let policy = RetryPolicy(maxAttempts: 6, baseDelay: 0.2, maxDelay: 1)
        #expect(policy.delay(beforeRetry: 1, unit: 1) == 0.2)
        #expect(policy.delay(beforeRetry: 1, unit: 0) == 0.1)
        #expect(policy.delay(beforeRetry: 2, unit: 1) == 0.4)
        #expect(policy.delay(beforeRetry: 3, unit: 1) == 0.8)
        #expect(policy.delay(beforeRetry: 4, unit: 1) == 1)
        #expect(policy.delay(beforeRetry: 60, unit: 0.5) == 0.75)
        #expect(policy.delay(beforeRetry: 1, retryAfter: 3, unit: 0.5) == 3)
        #expect(RetryPolicy.none.maxAttempts == 1)
    }

    /// Retryable: transport failures, 503, 429. Not: any other 4xx, nor a 500.
    @Test(arguments: [(503, true), (429, true), (400, false), (401, false), (403, false), (404, false), (409, false), (500, false)])
    func onlyUnavailableAndTooManyAreRetryable(status: Int, retryable: Bool) {
        #expect(SheetdError(kind: .server, status: status, message: "").isRetryable == retryable)
        #expect(SheetdError(kind: .transport, message: "refused").isRetryable)
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
