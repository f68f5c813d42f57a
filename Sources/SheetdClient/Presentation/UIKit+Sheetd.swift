// UIKit adapter: compiled only on iOS (and Mac Catalyst) — by the macOS workflow
// (.github/workflows/apple.yml), never by `make test` on Linux. It only translates: SheetPresenter's
// commands onto UIKit, UIKit's callbacks into SheetPresenter's events. Every decision (what to present,
// replace or close, which method a dismissal reports, the detent, the keyboard rule, the popover's
// fallback) is made by the tested plain types. Keep it that short.
#if os(iOS)
public import UIKit

@available(iOS 16.0, macCatalyst 16.0, *)
extension SheetPresentationPlan.Detent {
    /// The UIKit detent.
    @MainActor public var uiKitDetent: UISheetPresentationController.Detent {
        switch self {
        case .medium: .medium()
        case .large: .large()
        case .custom(let identifier, let height):
            .custom(identifier: .init(identifier)) { context in min(CGFloat(height), context.maximumDetentValue) }
        }
    }

    /// The identifier UIKit knows the detent by.
    @MainActor public var uiKitIdentifier: UISheetPresentationController.Detent.Identifier {
        switch self {
        case .medium: .medium
        case .large: .large
        case .custom(let identifier, _): .init(identifier)
        }
    }

    /// sheetd's identifier of a UIKit detent identifier (`medium`, `large`, or the custom one's).
    @MainActor static func sheetdIdentifier(_ identifier: UISheetPresentationController.Detent.Identifier) -> String {
        switch identifier {
        case .medium: "medium"
        case .large: "large"
        default: identifier.rawValue
        }
    }
}

/// Presents what a decision says over `host` and reports what happens, through ``SheetPresenter``:
///
/// ```swift
/// let sheets = SheetdUIKitPresenter(host: self, client: client, outbox: outbox) { sheet in OffersViewController(sheet) }
/// for try await decision in client.decisions(for: context) { sheets.show(decision) }
/// // in OffersViewController:  dismissSheetd(with: .closeButton)    (plain dismiss(animated:) is reported too, as programmatic)
/// ```
///
/// Each sheet is presented inside a container controller (your controller is its child, a navigation
/// controller included), which sees every way the sheet can go: a swipe or scrim tap
/// (`presentationControllerWillDismiss`, told apart by the sheet's pan), `dismissSheetd(with:)`, a
/// plain `dismiss` from the content or any child of it, or the presenter's own. The container also
/// reports its content's height (Auto Layout's fitting height, or `preferredContentSize` when you set
/// it) and re-applies new detents in `animateChanges`.
@available(iOS 16.0, macCatalyst 16.0, *)
@MainActor public final class SheetdUIKitPresenter {
    /// The presentation logic and the reports.
    public let driver: SheetdSheetDriver
    /// The popover's anchor on iPad (nil: a `popover` decision is presented as a page sheet there).
    public var popoverSource: (() -> UIView?)?
    /// Asks the user whether to discard unsaved input; call `answer(true)` to close. The default shows
    /// an action sheet ("Discard changes" / "Keep editing").
    public var confirm: @MainActor (UIViewController, _ answer: @escaping @MainActor @Sendable (Bool) -> Void) -> Void = {
        SheetdUIKitPresenter.defaultConfirm($0, answer: $1)
    }

    private weak var host: UIViewController?
    private let makeContent: @MainActor (SheetPresentation) -> UIViewController
    private var containers: [String: SheetdSheetContainer] = [:]
    private let keyboard = SheetdKeyboardObserver()

    /// A presenter over `host` making each sheet's controller with `content`, reporting through
    /// `outbox` when given (events kept across launches and network loss), else through `client`.
    public init(
        host: UIViewController, client: any SheetdClientProtocol, outbox: SheetdOutbox? = nil,
        onError: @escaping @Sendable (any Error) -> Void = { _ in }, content: @escaping @MainActor (SheetPresentation) -> UIViewController
    ) {
        self.host = host
        self.makeContent = content
        driver = SheetdSheetDriver(client: client, outbox: outbox, onError: onError)
        driver.perform = { [weak self] effect in self?.perform(effect) }
        keyboard.onChange = { [weak driver] visible in driver?.handle(.keyboard(visible: visible)) }
    }

    /// Shows what `decision` says (call it with every decision of the screen's live sequence).
    public func show(_ decision: Decision?) { driver.handle(.decision(decision)) }

    /// Opens `sheetId` from the top sheet (`push` nests it, `replace` is a flow's next step): reported
    /// to the server, then presented when the server's decision stacks it.
    public func open(_ sheetId: String, mode: OpenMode = .push) { driver.handle(.open(sheetId: sheetId, mode: mode, from: nil)) }

    private func perform(_ effect: SheetPresenter.Effect) {
        switch effect {
        case .present(let shown, let over):
            let parent: UIViewController? = if let over { containers[over] } else { host }
            guard let presenting = parent else { return driver.handle(.gone(shown.id)) }
            let container = SheetdSheetContainer(shown: shown, content: makeContent(shown.sheet), driver: driver)
            containers[shown.id] = container
            container.prepare(source: popoverSource?())
            presenting.present(container, animated: true) { [weak driver] in driver?.handle(.appeared(shown.id)) }
        case .replace(let old, let shown):
            guard let container = containers.removeValue(forKey: old) else { return }
            containers[shown.id] = container
            container.replace(with: shown, content: makeContent(shown.sheet))
            driver.handle(.appeared(shown.id))
        case .update(let shown):
            containers[shown.id]?.update(shown)
        case .dismiss(let id):
            // Asked of the controller that presented it: it closes this sheet and every one above it.
            guard let container = containers[id], let presenting = container.presentingViewController else { return driver.handle(.gone(id)) }
            presenting.dismiss(animated: true)
        case .confirm(let id):
            guard let container = containers[id] else { return }
            confirm(container) { [weak driver] discard in driver?.handle(discard ? .confirmed(id) : .confirmationCancelled(id)) }
        case .report:
            break  // the driver sends reports
        }
        let live = Set(driver.presenter.presented.map(\.id))
        containers = containers.filter { live.contains($0.key) }
    }

    /// An action sheet over `controller`: "Discard changes" (destructive) or "Keep editing".
    public static func defaultConfirm(_ controller: UIViewController, answer: @escaping @MainActor @Sendable (Bool) -> Void) {
        let alert = UIAlertController(title: nil, message: nil, preferredStyle: .actionSheet)
        alert.addAction(UIAlertAction(title: "Discard changes", style: .destructive) { _ in answer(true) })
        alert.addAction(UIAlertAction(title: "Keep editing", style: .cancel) { _ in answer(false) })
        alert.popoverPresentationController?.sourceView = controller.view
        alert.popoverPresentationController?.sourceRect = CGRect(x: controller.view.bounds.midX, y: controller.view.bounds.midY, width: 0, height: 0)
        controller.present(alert, animated: true)
    }
}

/// The controller a sheetd sheet is presented in: your content is its child. It is the presentation
/// controller's delegate and turns every callback into a ``SheetPresenter`` event.
@available(iOS 16.0, macCatalyst 16.0, *)
@MainActor final class SheetdSheetContainer: UIViewController, UISheetPresentationControllerDelegate, UIPopoverPresentationControllerDelegate {
    private(set) var shown: SheetPresenter.Shown
    private weak var driver: SheetdSheetDriver?
    private var content: UIViewController
    private(set) var isGone = false
    var shownId: String { shown.id }

    init(shown: SheetPresenter.Shown, content: UIViewController, driver: SheetdSheetDriver) {
        self.shown = shown
        self.content = content
        self.driver = driver
        super.init(nibName: nil, bundle: nil)
    }

    @available(*, unavailable) required init?(coder: NSCoder) { fatalError("not from a storyboard") }

    override func viewDidLoad() {
        super.viewDidLoad()
        embed(content)
    }

    private func embed(_ child: UIViewController) {
        addChild(child)
        child.view.frame = view.bounds
        child.view.autoresizingMask = [.flexibleWidth, .flexibleHeight]
        view.addSubview(child.view)
        child.didMove(toParent: self)
    }

    /// Before the presentation: the style (a popover only with an anchor), modal-in-presentation, the
    /// sheet's settings, and this controller as the delegate.
    func prepare(source: UIView?) {
        guard let plan = shown.plan else { return }
        switch plan.modalPresentationStyle(hasPopoverSource: source != nil) {
        case .popover:
            modalPresentationStyle = .popover
            popoverPresentationController?.sourceView = source
            popoverPresentationController?.delegate = self
        case .formSheet: modalPresentationStyle = .formSheet
        default: modalPresentationStyle = .pageSheet
        }
        isModalInPresentation = plan.isModalInPresentation
        presentationController?.delegate = self
        apply(plan)
    }

    /// The sheet on screen got a new presentation: detents and selection change inside `animateChanges`.
    func update(_ shown: SheetPresenter.Shown) {
        self.shown = shown
        guard let plan = shown.plan else { return }
        isModalInPresentation = plan.isModalInPresentation
        if let sheet { sheet.animateChanges { self.apply(plan) } } else { apply(plan) }
    }

    /// A flow's next step: the new content in the same sheet.
    func replace(with shown: SheetPresenter.Shown, content next: UIViewController) {
        let previous = content
        previous.willMove(toParent: nil)
        previous.view.removeFromSuperview()
        previous.removeFromParent()
        content = next
        embed(next)
        update(shown)
    }

    private var sheet: UISheetPresentationController? {
        modalPresentationStyle == .popover ? popoverPresentationController?.adaptiveSheetPresentationController : sheetPresentationController
    }

    private func apply(_ plan: SheetPresentationPlan) {
        guard let sheet else { return }
        sheet.delegate = self
        sheet.detents = plan.detents.map(\.uiKitDetent)
        sheet.selectedDetentIdentifier = (shown.selection ?? plan.selectedDetent).uiKitIdentifier
        sheet.largestUndimmedDetentIdentifier = plan.largestUndimmedDetent?.uiKitIdentifier
        sheet.prefersGrabberVisible = plan.prefersGrabberVisible
        sheet.prefersScrollingExpandsWhenScrolledToEdge = plan.prefersScrollingExpandsWhenScrolledToEdge
        sheet.prefersEdgeAttachedInCompactHeight = plan.prefersEdgeAttachedInCompactHeight
        sheet.widthFollowsPreferredContentSizeWhenEdgeAttached = plan.widthFollowsPreferredContentSizeWhenEdgeAttached
        if let radius = plan.preferredCornerRadius { sheet.preferredCornerRadius = CGFloat(radius) }
    }

    // MARK: - Content height

    override func viewDidLayoutSubviews() {
        super.viewDidLayoutSubviews()
        let width = view.bounds.width
        guard width > 0 else { return }
        let preferred = content.preferredContentSize.height
        let fitting =
            preferred > 0
            ? preferred
            : content.view.systemLayoutSizeFitting(
                CGSize(width: width, height: UIView.layoutFittingCompressedSize.height), withHorizontalFittingPriority: .required,
                verticalFittingPriority: .fittingSizeLevel
            ).height
        driver?.handle(.contentMeasured(shown.id, height: Double(fitting)))
    }

    // MARK: - How it goes

    /// Every way out ends here: a gesture, `dismissSheetd`, a plain `dismiss` from the content or a
    /// child of it, the presenter's own, or the controller below closing.
    override func viewDidDisappear(_ animated: Bool) {
        super.viewDidDisappear(animated)
        if isBeingDismissed || presentingViewController == nil { gone() }
    }

    private func gone() {
        guard !isGone else { return }
        isGone = true
        driver?.handle(.gone(shown.id))
    }

    func presentationControllerShouldDismiss(_ controller: UIPresentationController) -> Bool {
        guard let plan = shown.plan else { return true }
        if shown.sheet.confirmBeforeDismiss { return false }  // presentationControllerDidAttemptToDismiss asks
        return plan.shouldDismiss(whileDragging: Self.isDragging(controller))
    }

    func presentationControllerWillDismiss(_ controller: UIPresentationController) {
        let id = shown.id
        driver?.handle(.interactiveDismissalBegan(id, Self.isDragging(controller) ? .swipe : .scrim))
        transitionCoordinator?.animate(alongsideTransition: nil) { [weak driver] context in
            if context.isCancelled { driver?.handle(.interactiveDismissalCancelled(id)) }
        }
    }

    func presentationControllerDidDismiss(_ controller: UIPresentationController) { gone() }

    func presentationControllerDidAttemptToDismiss(_ controller: UIPresentationController) {
        driver?.handle(.dismissalAttempted(shown.id, Self.isDragging(controller) ? .swipe : .scrim))
    }

    func sheetPresentationControllerDidChangeSelectedDetentIdentifier(_ sheet: UISheetPresentationController) {
        guard let identifier = sheet.selectedDetentIdentifier else { return }
        driver?.handle(.detentChanged(shown.id, identifier: SheetPresentationPlan.Detent.sheetdIdentifier(identifier)))
    }

    /// UIKit does not say which gesture asks: the sheet's pan under way means a swipe, else a scrim tap.
    static func isDragging(_ controller: UIPresentationController) -> Bool {
        var view = controller.presentedView
        while let v = view, v !== controller.containerView {
            if v.gestureRecognizers?.contains(where: { $0 is UIPanGestureRecognizer && [.began, .changed].contains($0.state) }) == true {
                return true
            }
            view = v.superview
        }
        return false
    }

    /// Closes this sheet through its presenter, reporting `method`.
    func close(with method: DismissalMethod) { driver?.handle(.close(shown.id, method)) }
}

@available(iOS 16.0, macCatalyst 16.0, *)
extension UIViewController {
    /// Closes the sheetd sheet this controller is in (it, or any child of it, a navigation controller's
    /// included) and reports `method`: `closeButton`, `cancelButton`, `action`, or `programmatic`. A
    /// sheet whose input must be confirmed asks first for `closeButton` and `cancelButton`.
    @MainActor public func dismissSheetd(with method: DismissalMethod = .programmatic) {
        var controller: UIViewController? = self
        while let current = controller {
            if let container = current as? SheetdSheetContainer { return container.close(with: method) }
            controller = current.parent
        }
        dismiss(animated: true)  // not in a sheetd sheet
    }
}

/// The software keyboard's showing and hiding, for the presenter's keyboard rule.
@MainActor final class SheetdKeyboardObserver {
    var onChange: (Bool) -> Void = { _ in }
    nonisolated(unsafe) private var tokens: [any NSObjectProtocol] = []  // read once more, by deinit

    init() {
        let center = NotificationCenter.default
        for (name, visible) in [(UIResponder.keyboardWillShowNotification, true), (UIResponder.keyboardWillHideNotification, false)] {
            tokens.append(
                center.addObserver(forName: name, object: nil, queue: .main) { [weak self] _ in
                    MainActor.assumeIsolated { self?.onChange(visible) }
                })
        }
    }

    deinit { for token in tokens { NotificationCenter.default.removeObserver(token) } }
}
#endif
