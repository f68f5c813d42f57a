// SwiftUI adapter: compiled only on iOS (and Mac Catalyst), so never built by `make test` on Linux and
// not compiled by anyone yet: review it against the SwiftUI documentation. It copies the tested
// SheetPresentationPlan.SwiftUI onto SwiftUI's modifiers; what to present (SheetPresentationGate), where
// it starts (resolvedSelection) and what to report (SheetdSheetSession) are decided by tested plain types.
#if os(iOS)
public import SwiftUI

@available(iOS 16.4, macCatalyst 16.4, *)
extension SheetPresentationPlan.Detent {
    /// The SwiftUI detent (`.custom` is `.height`).
    public var presentationDetent: PresentationDetent {
        switch self {
        case .medium: .medium
        case .large: .large
        case .custom(_, let height): .height(CGFloat(height))
        }
    }
}

/// Closes the presented sheetd sheet and reports how: read it from the sheet content's environment
/// (`@Environment(\.sheetdClose) private var close`) and call `close(.closeButton)`.
public struct SheetdCloseAction: Sendable {
    let action: @MainActor @Sendable (DismissalMethod) -> Void
    /// Closes the sheet, reporting `method` (`closeButton`, `cancelButton`, `action`, `programmatic`).
    @MainActor public func callAsFunction(_ method: DismissalMethod = .closeButton) { action(method) }
}

private struct SheetdCloseKey: EnvironmentKey {
    static let defaultValue = SheetdCloseAction { _ in }
}

private struct SheetdSessionKey: EnvironmentKey {
    static let defaultValue: SheetdSheetSession? = nil
}

extension EnvironmentValues {
    /// Closes the sheetd sheet this view is in (does nothing elsewhere).
    public var sheetdClose: SheetdCloseAction {
        get { self[SheetdCloseKey.self] }
        set { self[SheetdCloseKey.self] = newValue }
    }

    /// The session of the sheetd sheet this view is in.
    public var sheetdSession: SheetdSheetSession? {
        get { self[SheetdSessionKey.self] }
        set { self[SheetdSessionKey.self] = newValue }
    }
}

@available(iOS 16.4, macCatalyst 16.4, *)
extension View {
    /// Presents `content` as a sheet while `decision` presents one, with the `ios.swiftui` modifiers,
    /// and reports through `client`: the impression when the sheet appears, its dismissal with the
    /// method (a swipe or scrim tap, or what `\.sheetdClose` was called with). A sheet the user
    /// dismissed is not presented again until the server answers anew; the detent selection starts
    /// inside the decision's detents. A sheet the decision withdraws is not reported (the server knows).
    public func sheetd<Content: View>(
        _ decision: SheetDecision?, client: any SheetdClientProtocol, onError: @escaping @Sendable (any Error) -> Void = { _ in },
        @ViewBuilder content: @escaping (SheetPresentation) -> Content
    ) -> some View {
        modifier(SheetdModifier(decision: decision, client: client, onError: onError, sheetContent: content))
    }

    /// Measures this view's ideal height and reports it for the sheetd sheet it is in, when the
    /// decision waits for it (`awaitingContentHeight`) or it changed (``ContentHeightReporter``).
    /// Apply it to the sheet's content, not a view that fills the sheet (that would measure the sheet).
    public func sheetdReportsContentHeight() -> some View { modifier(ContentHeightModifier()) }
}

/// The modifier's state: the gate and the selection re-render; the session and how it ends do not need to.
@MainActor private final class SheetdState: ObservableObject {
    @Published var gate = SheetPresentationGate()
    @Published var selection: SheetPresentationPlan.Detent?
    var session: SheetdSheetSession?
    /// How the shown sheet is ending: nil while shown, or when the decision withdrew it.
    var ending: Bool?

    /// This presentation's session (a new one for a new sheet).
    func session(for sheet: SheetPresentation, make: () -> SheetdSheetSession) -> SheetdSheetSession {
        if let session, session.sheet.id == sheet.id { return session }
        let created = make()
        session = created
        return created
    }
}

@available(iOS 16.4, macCatalyst 16.4, *)
private struct SheetdModifier<SheetContent: View>: ViewModifier {
    let decision: SheetDecision?
    let client: any SheetdClientProtocol
    let onError: @Sendable (any Error) -> Void
    let sheetContent: (SheetPresentation) -> SheetContent
    @StateObject private var state = SheetdState()

    func body(content: Content) -> some View {
        let sheet = state.gate.sheet(for: decision)
        let plan = sheet.flatMap(SheetPresentationPlan.init)?.swiftUI
        let state = self.state
        return content.sheet(
            isPresented: Binding(get: { plan != nil }, set: { shown in if !shown, let sheet { end(sheet, interactive: true) } }),
            onDismiss: finish
        ) {
            if let sheet, let plan {
                let session = state.session(for: sheet) { SheetdSheetSession(sheet: sheet, client: client, onError: onError) }
                sheetContent(sheet)
                    .presentationDetents(
                        Set(plan.detents.map(\.presentationDetent)),
                        selection: Binding(
                            get: { plan.resolvedSelection(state.selection).presentationDetent },
                            set: { new in state.selection = plan.detents.first { $0.presentationDetent == new } })
                    )
                    .presentationDragIndicator(plan.dragIndicatorVisible ? .visible : .hidden)
                    .presentationBackgroundInteraction(
                        plan.backgroundInteractionUpThrough.map { .enabled(upThrough: $0.presentationDetent) } ?? .disabled
                    )
                    .presentationContentInteraction(plan.contentInteractionResizes ? .resizes : .scrolls)
                    .presentationCornerRadius(plan.cornerRadius.map { CGFloat($0) })
                    .interactiveDismissDisabled(plan.interactiveDismissDisabled)
                    .environment(\.sheetdSession, session)
                    .environment(
                        \.sheetdClose,
                        SheetdCloseAction { method in
                            session.willClose(with: method)
                            end(sheet, interactive: false)
                        }
                    )
                    .onAppear { session.appeared() }
            }
        }
        .onChange(of: decision) { state.gate.observe($0) }
    }

    /// The user or a control ended it: hold it back until the server answers anew.
    private func end(_ sheet: SheetPresentation, interactive: Bool) {
        state.ending = interactive
        state.gate.dismissed(sheet.id, under: decision)
    }

    /// The sheet is gone: report how (unless the decision withdrew it), then let the gate honour a
    /// new decision presenting it.
    private func finish() {
        let state = self.state
        defer {
            state.session = nil
            state.selection = nil
            state.ending = nil
        }
        guard let interactive = state.ending, let session = state.session else { return }
        let id = session.sheet.id
        session.dismissed(interactive: interactive) { Task { @MainActor in state.gate.dismissalReported(id) } }
    }
}

@available(iOS 16.4, macCatalyst 16.4, *)
private struct ContentHeightModifier: ViewModifier {
    @Environment(\.sheetdSession) private var session

    func body(content: Content) -> some View {
        content
            .fixedSize(horizontal: false, vertical: true)
            .background(GeometryReader { proxy in Color.clear.preference(key: ContentHeightKey.self, value: proxy.size.height) })
            .onPreferenceChange(ContentHeightKey.self) { [session] height in session?.measured(height: Double(height)) }
    }
}

private struct ContentHeightKey: PreferenceKey {
    static let defaultValue: CGFloat = 0
    static func reduce(value: inout CGFloat, nextValue: () -> CGFloat) { value = max(value, nextValue()) }
}
#endif
