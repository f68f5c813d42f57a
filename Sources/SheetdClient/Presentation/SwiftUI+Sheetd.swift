// SwiftUI adapter: compiled only on iOS (and Mac Catalyst) — by the macOS workflow
// (.github/workflows/apple.yml), never by `make test` on Linux. It only translates: each stack level
// is a `sheet(item:)` bound to SheetPresenter's presentation at that level, and SwiftUI's callbacks
// become SheetPresenter events. What to present, replace or close, what to report, the detent and the
// keyboard rule are decided by the tested plain types.
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
/// (`@Environment(\.sheetdClose) private var close`) and call `close(.closeButton)`. A sheet whose
/// input must be confirmed asks first (for `closeButton` and `cancelButton`).
public struct SheetdCloseAction: Sendable {
    let action: @MainActor @Sendable (DismissalMethod) -> Void
    /// Closes the sheet, reporting `method` (`closeButton`, `cancelButton`, `action`, `programmatic`).
    @MainActor public func callAsFunction(_ method: DismissalMethod = .closeButton) { action(method) }
}

/// Opens another sheet from the presented sheetd sheet (`@Environment(\.sheetdOpen)`): reported, then
/// presented over it (`push`) or in its place (`replace`) once the server's decision stacks it.
public struct SheetdOpenAction: Sendable {
    let action: @MainActor @Sendable (String, OpenMode) -> Void
    /// Opens `sheetId`.
    @MainActor public func callAsFunction(_ sheetId: String, mode: OpenMode = .push) { action(sheetId, mode) }
}

private struct SheetdCloseKey: EnvironmentKey {
    static let defaultValue = SheetdCloseAction { _ in }
}

private struct SheetdOpenKey: EnvironmentKey {
    static let defaultValue = SheetdOpenAction { _, _ in }
}

private struct SheetdHeightKey: EnvironmentKey {
    static let defaultValue: @MainActor @Sendable (Double) -> Void = { _ in }
}

extension EnvironmentValues {
    /// Closes the sheetd sheet this view is in (does nothing elsewhere).
    public var sheetdClose: SheetdCloseAction {
        get { self[SheetdCloseKey.self] }
        set { self[SheetdCloseKey.self] = newValue }
    }

    /// Opens a sheet from the sheetd sheet this view is in (does nothing elsewhere).
    public var sheetdOpen: SheetdOpenAction {
        get { self[SheetdOpenKey.self] }
        set { self[SheetdOpenKey.self] = newValue }
    }

    var sheetdMeasured: @MainActor @Sendable (Double) -> Void {
        get { self[SheetdHeightKey.self] }
        set { self[SheetdHeightKey.self] = newValue }
    }
}

@available(iOS 16.4, macCatalyst 16.4, *)
extension View {
    /// Presents what `decision` says (its whole stack, one sheet over the other) with the `ios.swiftui`
    /// modifiers, and reports through `outbox` (kept across launches and network loss) or `client`:
    /// the impression of each presentation, its dismissal with the method, and the content height
    /// (`.sheetdReportsContentHeight()` on the content). See ``SheetPresenter`` for the rules; SwiftUI
    /// does not name the gesture that dismissed a sheet, so a sheet that may not be dismissed by both
    /// swipe and scrim tap is dismissed by neither (``SheetPresentationPlan/swiftUIRefusesInteractiveDismissal``).
    public func sheetd<Content: View>(
        _ decision: SheetDecision?, client: any SheetdClientProtocol, outbox: SheetdOutbox? = nil,
        onError: @escaping @Sendable (any Error) -> Void = { _ in }, @ViewBuilder content: @escaping (SheetPresentation) -> Content
    ) -> some View {
        modifier(SheetdRootModifier(decision: decision, client: client, outbox: outbox, onError: onError, sheetContent: content))
    }

    /// Measures this view's ideal height and reports it for the sheetd sheet it is in when the decision
    /// waits for it (`awaitingContentHeight`) or it changed (``ContentHeightReporter``). Apply it to
    /// the sheet's content, not a view that fills the sheet (that would measure the sheet).
    public func sheetdReportsContentHeight() -> some View { modifier(ContentHeightModifier()) }
}

/// The presenter for SwiftUI: re-renders on each event; remembers which presentation each level shows
/// (SwiftUI's `onDismiss` does not say) and which level SwiftUI is dismissing on a gesture.
@MainActor final class SheetdSwiftUIModel: ObservableObject {
    let driver: SheetdSheetDriver
    @Published var confirming: String?
    private var shownAt: [Int: String] = [:]
    private var userDismissing: Set<Int> = []
    private let keyboard = SheetdKeyboardObserver()

    init(client: any SheetdClientProtocol, outbox: SheetdOutbox?, onError: @escaping @Sendable (any Error) -> Void) {
        driver = SheetdSheetDriver(client: client, outbox: outbox, onError: onError)
        driver.onChange = { [weak self] in self?.objectWillChange.send() }
        driver.perform = { [weak self] effect in
            if case .confirm(let id) = effect { self?.confirming = id }  // present, replace, update, dismiss: the bindings read the state
        }
        keyboard.onChange = { [weak driver] visible in driver?.handle(.keyboard(visible: visible)) }
    }

    /// What `sheet(item:)` at `level` binds: the presentation there, nil while it leaves.
    func binding(level: Int) -> Binding<SheetdSlot?> {
        Binding(
            get: { [self] in
                guard !userDismissing.contains(level), let shown = driver.presenter.presentation(atLevel: level) else { return nil }
                return SheetdSlot(level: level, shown: shown)
            },
            set: { [self] slot in
                // SwiftUI sets nil only when the user dismissed the sheet (a gesture it does not name).
                guard slot == nil, let id = shownAt[level] ?? driver.presenter.presentation(atLevel: level)?.id else { return }
                userDismissing.insert(level)
                driver.handle(.interactiveDismissalBegan(id, .unknown))
            })
    }

    func appeared(_ id: String, level: Int) {
        shownAt[level] = id
        driver.handle(.appeared(id))
    }

    /// SwiftUI's `onDismiss` of `level`: whatever closed it, it is gone (the levels above with it).
    func dismissed(level: Int) {
        userDismissing.remove(level)
        guard let id = shownAt.removeValue(forKey: level) else { return }
        driver.handle(.gone(id))
    }
}

/// One stack level's `sheet(item:)` identity: stable per level, so a flow's next step (a replaced
/// presentation) swaps the content in the same sheet.
struct SheetdSlot: Identifiable {
    let level: Int
    let shown: SheetPresenter.Shown
    var id: Int { level }
}

@available(iOS 16.4, macCatalyst 16.4, *)
private struct SheetdRootModifier<SheetContent: View>: ViewModifier {
    let decision: SheetDecision?
    let sheetContent: (SheetPresentation) -> SheetContent
    @StateObject private var model: SheetdSwiftUIModel

    init(
        decision: SheetDecision?, client: any SheetdClientProtocol, outbox: SheetdOutbox?, onError: @escaping @Sendable (any Error) -> Void,
        sheetContent: @escaping (SheetPresentation) -> SheetContent
    ) {
        self.decision = decision
        self.sheetContent = sheetContent
        _model = StateObject(wrappedValue: SheetdSwiftUIModel(client: client, outbox: outbox, onError: onError))
    }

    func body(content: Content) -> some View {
        let (model, decision) = (self.model, self.decision)
        return
            content
            .modifier(SheetdLevelModifier(level: 0, model: model, sheetContent: sheetContent))
            .onAppear { model.driver.handle(.decision(decision)) }
            .onChange(of: decision) { model.driver.handle(.decision($0)) }
    }
}

/// The sheet at `level`, and inside it the level above.
@available(iOS 16.4, macCatalyst 16.4, *)
private struct SheetdLevelModifier<SheetContent: View>: ViewModifier {
    let level: Int
    @ObservedObject var model: SheetdSwiftUIModel
    let sheetContent: (SheetPresentation) -> SheetContent

    func body(content: Content) -> some View {
        let (model, level) = (self.model, self.level)
        return content.sheet(item: model.binding(level: level), onDismiss: { model.dismissed(level: level) }) { slot in
            // AnyView: a level holds the next one, and an opaque type cannot contain itself.
            AnyView(levelSheet(slot.shown).modifier(SheetdLevelModifier(level: level + 1, model: model, sheetContent: sheetContent)))
        }
    }

    private func levelSheet(_ shown: SheetPresenter.Shown) -> some View {
        let (model, level) = (self.model, self.level)
        let plan = shown.plan
        let swiftUI = plan?.swiftUI
        let driver = model.driver
        let id = shown.id
        let detents = swiftUI?.detents ?? [.large]
        let selection = shown.selection.flatMap { s in detents.first { $0.identifier == s.identifier } } ?? swiftUI?.selection ?? .large
        return sheetContent(shown.sheet)
            .presentationDetents(
                Set(detents.map(\.presentationDetent)),
                selection: Binding(
                    get: { selection.presentationDetent },
                    set: { new in
                        if let detent = detents.first(where: { $0.presentationDetent == new }) {
                            driver.handle(.detentChanged(id, identifier: detent.identifier))
                        }
                    })
            )
            .presentationDragIndicator(swiftUI?.dragIndicatorVisible == false ? .hidden : .visible)
            .presentationBackgroundInteraction(
                swiftUI?.backgroundInteractionUpThrough.map { .enabled(upThrough: $0.presentationDetent) } ?? .disabled
            )
            .presentationContentInteraction(swiftUI?.contentInteractionResizes == true ? .resizes : .scrolls)
            .presentationCornerRadius(swiftUI?.cornerRadius.map { CGFloat($0) })
            .interactiveDismissDisabled(plan?.swiftUIRefusesInteractiveDismissal ?? false)
            .environment(\.sheetdClose, SheetdCloseAction { method in driver.handle(.close(id, method)) })
            .environment(\.sheetdOpen, SheetdOpenAction { sheetId, mode in driver.handle(.open(sheetId: sheetId, mode: mode, from: id)) })
            .environment(\.sheetdMeasured, { height in driver.handle(.contentMeasured(id, height: height)) })
            .task(id: id) { @MainActor in model.appeared(id, level: level) }  // on appear, and again when a flow step replaces the content
            .confirmationDialog(
                "Discard changes?",
                isPresented: Binding(get: { model.confirming == id }, set: { if !$0, model.confirming == id { model.confirming = nil } }),
                titleVisibility: .hidden
            ) {
                Button("Discard changes", role: .destructive) {
                    model.confirming = nil
                    driver.handle(.confirmed(id))
                }
                Button("Keep editing", role: .cancel) {
                    model.confirming = nil
                    driver.handle(.confirmationCancelled(id))
                }
            }
    }
}

@available(iOS 16.4, macCatalyst 16.4, *)
private struct ContentHeightModifier: ViewModifier {
    @Environment(\.sheetdMeasured) private var measured

    func body(content: Content) -> some View {
        let measured = self.measured
        return
            content
            .fixedSize(horizontal: false, vertical: true)
            .background(GeometryReader { proxy in Color.clear.preference(key: ContentHeightKey.self, value: proxy.size.height) })
            .onPreferenceChange(ContentHeightKey.self) { height in
                MainActor.assumeIsolated { measured(Double(height)) }
            }
    }
}

private struct ContentHeightKey: PreferenceKey {
    static let defaultValue: CGFloat = 0
    static func reduce(value: inout CGFloat, nextValue: () -> CGFloat) { value = max(value, nextValue()) }
}
#endif
