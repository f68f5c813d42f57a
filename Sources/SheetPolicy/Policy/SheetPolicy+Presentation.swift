extension SheetPolicy {
    /// Presentations for a live stack, bottom to top; rules 5 to 12 are traced for the presented top.
    static func present(
        _ stack: [StackEntry], catalog: Catalog, state: UserState, context: ClientContext, trace: inout [String],
        arms: inout ExperimentArms?
    ) -> [Presentation] {
        var presentations: [Presentation] = []
        presentations.reserveCapacity(stack.count)
        for (index, entry) in stack.enumerated() {
            guard var sheet = catalog[entry.sheetId] else { continue }
            var assignment: ArmAssignment? = nil
            if sheet.experiment != nil, arms != nil {
                // Holdout entries were cut from the stack already; this arm is shown.
                _ = arms!.resolve(sheet, trace: &trace)
                assignment = arms!.assignments[sheet.id]
                if let assignment {
                    sheet = assignment.arm.definition ?? sheet
                    arms!.expose(sheetId: sheet.id, assignment)
                }
            }
            let isTop = index == stack.count - 1
            let below = index > 0 ? stack[index - 1].sheetId : nil
            var lines: [String] = []
            lines.reserveCapacity(12)  // rules 5 to 12 write about ten
            var presentation = presentation(
                of: sheet, entry: entry, below: below, isTop: isTop, catalog: catalog, state: state,
                context: context, trace: &lines)
            if let assignment {
                presentation.experiment = PresentedExperiment(
                    id: assignment.experimentId, arm: assignment.arm.id, payloadJSON: assignment.arm.payloadJSON)
            }
            presentations.append(presentation)
            if isTop { trace += lines }
        }
        return presentations
    }

    /// How one sheet is presented in `context`.
    static func presentation(
        of sheet: SheetDefinition, entry: StackEntry, below: String?, isTop: Bool, catalog: Catalog,
        state: UserState, context: ClientContext, trace: inout [String]
    ) -> Presentation {
        let platform = context.platform
        let variant = sheet.resolvedSize
        // Android measures in dp, iOS in points: trace lines name the unit the client measured in.
        let unit = platform == .android ? "dp" : "pt"

        // Rule 5: variants.
        var rest = resting(sheet, state: state, context: context)
        trace.append(rest.note)
        let awaitingContentHeight = rest.awaiting
        // 000: "Do not resize the sheet until the size of the content is known": a flow step into an
        // unmeasured content sheet keeps the previous step's detents and selection meanwhile.
        if awaitingContentHeight, entry.mode == .replace, let previousID = entry.replacedSheetId,
            let previous = catalog[previousID]
        {
            let kept = resting(previous, state: state, context: context)
            rest.detents = kept.detents
            rest.selected = kept.selected
            trace.append("flow: keeping the detents of '\(previousID)' until the content height is known")
        }
        let detents = rest.detents
        var selected = rest.selected

        // Rule 6: the keyboard.
        var keyboard = KeyboardAdjustment.none
        if context.keyboardVisible {
            if detents.contains(where: { $0.id == .large }) {
                // 001: "if the sheet is in half-height mode and the keyboard slides up, it will automatically move to the top".
                selected = .large
                keyboard = .largeDetent
                trace.append("keyboard: visible, large detent selected")
            } else {
                // 000: "Bottom sheets should automatically resize to accommodate keyboards".
                keyboard = .growByKeyboard
                trace.append("keyboard: visible, the sheet keeps its detent and grows by the keyboard's height")
            }
        }

        // Rule 8: dismissal.
        let swipeToDismiss = sheet.swipeToDismiss ?? true
        let tapScrimToDismiss = sheet.tapScrimToDismiss ?? true
        var affordance = sheet.dismissAffordance ?? defaultAffordance(for: sheet.kind, style: sheet.style)
        if sheet.style == .strict && affordance == .closeIcon {
            // 003 strict: "no top-right close button"; a definition stored before that rule keeps a way out.
            affordance = .cancelButton
            trace.append("dismissal: strict sheets have no close icon, a Cancel button in the header instead")
        }
        // `dirty` describes the presented sheet, so only the top can ask for confirmation.
        let confirmBeforeDismiss = isTop && sheet.confirmDismissWhenDirty && context.dirty
        let noWayOut = !swipeToDismiss && !tapScrimToDismiss && affordance == .none
        trace.append(
            TraceLine.join(
                "dismissal: ", affordance.rawValue, swipeToDismiss ? ", swipe on" : ", swipe off",
                tapScrimToDismiss ? ", scrim tap on" : ", scrim tap off",
                confirmBeforeDismiss ? ", unsaved input: confirm first" : ""))

        // Rule 7: grabber. The documents' APIs default it on (000: `contentSizeSheet(prefersGrabberVisible:
        // Bool = true)`; 003: "the indicator is part of the contract"); the anatomy's "appears only when the
        // sheet is resizable" is kept where it matters: a sheet that can neither resize nor be swiped away
        // shows none, as a grabber would promise a drag that does nothing.
        let resizable = detents.count > 1
        let grabberVisible = platform == .android || resizable || swipeToDismiss
        switch platform {
        case .ios:
            trace.append(
                resizable
                    ? "grabber: shown, the sheet is resizable"
                    : grabberVisible
                        ? "grabber: shown, the sheet can be swiped away"
                        : "grabber: hidden, the sheet neither resizes nor swipes away")
        case .android: trace.append("grabber: drag handle shown, every Android sheet is resizable")
        }

        // Rule 9: scrim.
        let largestUndimmed = sheet.nonModalUpTo
        trace.append(largestUndimmed.map { TraceLine.join("scrim: undimmed up to ", $0.rawValue) } ?? "scrim: dimmed at every detent")

        // Rule 10: idiom and orientation.
        let style: PresentationStyle
        switch (platform, context.idiom, context.orientation) {
        case (.android, _, _):
            style = .sheet
            trace.append("idiom: Android, a bottom sheet")
        case (.ios, .pad, _):
            style = .popover
            trace.append("idiom: iPad, a popover adapting to a sheet in compact width")
        case (.ios, .phone, .landscape):
            style = .edgeAttached
            trace.append("idiom: iPhone landscape, an edge-attached sheet")
        case (.ios, .phone, .portrait):
            style = .sheet
            trace.append("idiom: iPhone portrait, a sheet")
        }

        // Rule 11: transitions (the top only).
        var transition: Transition? = nil
        if isTop {
            transition = arrival(
                of: sheet, entry: entry, below: below, catalog: catalog, awaitingContentHeight: awaitingContentHeight)
            if let transition {
                trace.append(
                    TraceLine.join(
                        "transition: ", transition.mode.rawValue, " from '", transition.from,
                        transition.waitForContentHeight ? "', waiting for the content height" : "'"))
            } else {
                trace.append("transition: none, a root")
            }
        }

        // Rule 12: anatomy. 000: "a 'Cancel' text button placed in the header": a Cancel button always
        // comes with a header to hold it, in flexible sheets too.
        let header =
            sheet.style == .strict || affordance == .cancelButton
            ? SheetHeader(title: sheet.title ?? "", cancelButton: affordance == .cancelButton) : nil
        let button = sheet.primaryButton.map {
            PrimaryButtonSlot(label: $0.label, size: sheet.style == .strict ? .medium : .small)
        }
        trace.append(
            TraceLine.join(
                "anatomy: ", sheet.style.rawValue,
                header.map { TraceLine.join(", 56 ", unit, " sticky header '", $0.title, $0.cancelButton ? "' with a Cancel button" : "'") }
                    ?? ", no header",
                button.map { TraceLine.join(", ", $0.size.rawValue, " sticky primary button '", $0.label, "'") } ?? ""))

        let expands = sheet.expandsOnScrollToEdge ?? (variant == .medium)
        let platformConfiguration: PlatformConfiguration
        switch platform {
        case .ios:
            // isModalInPresentation refuses swipe and scrim tap together; one of the two alone needs the delegate.
            let isModal = confirmBeforeDismiss || (!swipeToDismiss && !tapScrimToDismiss)
            let dismissal =
                isModal
                ? IOSDismissal(swipe: false, tapScrim: false, requiresDelegate: false)
                : IOSDismissal(
                    swipe: swipeToDismiss, tapScrim: tapScrimToDismiss,
                    requiresDelegate: swipeToDismiss != tapScrimToDismiss)
            if dismissal.requiresDelegate {
                trace.append("dismissal: UIKit needs the presentation delegate to tell a swipe from a scrim tap")
            }
            platformConfiguration = .ios(
                IOSSheetConfiguration(
                    detents: detents.map(\.id),
                    customDetentHeights: detents.compactMap { detent in
                        detent.height.map { CustomDetentHeight(identifier: detent.id, height: $0) }
                    },
                    selectedDetentIdentifier: selected,
                    largestUndimmedDetentIdentifier: largestUndimmed,
                    prefersGrabberVisible: grabberVisible,
                    prefersScrollingExpandsWhenScrolledToEdge: expands,
                    prefersEdgeAttachedInCompactHeight: context.idiom == .phone,
                    widthFollowsPreferredContentSizeWhenEdgeAttached: context.idiom == .phone,
                    preferredCornerRadius: sheet.cornerRadius,
                    isModalInPresentation: isModal,
                    modalPresentationStyle: modalStyle(of: sheet, idiom: context.idiom),
                    dismissal: dismissal,
                    swiftui: SwiftUISheetConfiguration(
                        presentationDetents: detents.map(swiftUIDetent),
                        selection: swiftUIDetent(detents.first { $0.id == selected } ?? detents[0]),
                        presentationDragIndicator: grabberVisible ? .visible : .hidden,
                        presentationBackgroundInteraction: largestUndimmed.map {
                            SwiftUIBackgroundInteraction(kind: .enabled, upThrough: swiftUIDetent(Detent(id: $0)))
                        } ?? SwiftUIBackgroundInteraction(kind: .disabled),
                        presentationContentInteraction: expands ? .resizes : .scrolls,
                        presentationCornerRadius: sheet.cornerRadius,
                        // One switch for both gestures: it follows the swipe, the gesture every sheet offers first.
                        interactiveDismissDisabled: confirmBeforeDismiss || !swipeToDismiss)))
        case .android:
            // The partially expanded state exists only where there is a medium and a large to move between.
            let skipPartiallyExpanded = !(detents.contains { $0.id == .medium } && detents.contains { $0.id == .large })
            // Back must always offer a way out: through the confirm dialog when nothing else closes the sheet.
            let hidden: HiddenChange = confirmBeforeDismiss || noWayOut ? .confirm : swipeToDismiss ? .allow : .veto
            if noWayOut { trace.append("dismissal: Back asks in the confirm dialog, nothing else closes the sheet") }
            platformConfiguration = .android(
                AndroidSheetConfiguration(
                    skipPartiallyExpanded: skipPartiallyExpanded,
                    initialValue: !skipPartiallyExpanded && selected == .medium ? .partiallyExpanded : .expanded,
                    dragHandle: true,
                    sheetGesturesEnabled: true,
                    shouldDismissOnClickOutside: tapScrimToDismiss,
                    shouldDismissOnBackPress: true,
                    confirmValueChangeRequiresDialog: hidden == .confirm,
                    confirmValueChange: AndroidConfirmValueChange(hidden: hidden),
                    scrim: AndroidScrim(dimmedAt: androidDimmedValues(largestUndimmed, skipPartiallyExpanded)),
                    shape: AndroidShape(topCornerRadius: sheet.cornerRadius),
                    properties: AndroidSheetProperties(
                        shouldDismissOnBackPress: true, shouldDismissOnClickOutside: tapScrimToDismiss),
                    imePadding: keyboard != .none))
        }

        return Presentation(
            id: sheet.id, kind: sheet.kind, variant: variant, detents: detents, selectedDetent: selected,
            grabberVisible: grabberVisible, swipeToDismiss: swipeToDismiss, tapScrimToDismiss: tapScrimToDismiss,
            largestUndimmedDetent: largestUndimmed, dismissAffordance: affordance,
            confirmBeforeDismiss: confirmBeforeDismiss, expandsOnScrollToEdge: expands,
            parentScalesBehind: variant == .large, awaitingContentHeight: awaitingContentHeight,
            scrollable: rest.scrollable, scrimAccessibleAsClose: tapScrimToDismiss, header: header, primaryButton: button,
            presentationStyle: style, transition: transition, keyboardAdjustment: keyboard,
            platform: platformConfiguration)
    }

    /// A sheet's resting detents in `context` before the keyboard and flows touch them (rule 5).
    struct Resting {
        var detents: [Detent]
        var selected: DetentID
        var scrollable: Bool
        var awaiting: Bool
        var note: String
    }

    /// Rule 5 for one sheet.
    static func resting(_ sheet: SheetDefinition, state: UserState, context: ClientContext) -> Resting {
        let platform = context.platform
        let unit = platform == .android ? "dp" : "pt"
        switch sheet.resolvedSize {
        case .content:
            guard let height = state.contentHeights[HeightKey(sheetId: sheet.id, platform: platform)] else {
                // Scrollable meanwhile: the content may exceed medium before it is measured.
                return Resting(
                    detents: [Detent(id: .medium)], selected: .medium, scrollable: true, awaiting: true,
                    note: "variant: content, height not measured on \(platform.rawValue) yet: resting at medium")
            }
            guard let viewport = context.viewportHeight else {
                // 000: "Allow for scrolling if sheet content exceeds the viewport": unknown viewport, so it could.
                return Resting(
                    detents: [Detent(id: .content, height: height)], selected: .content, scrollable: true,
                    awaiting: false,
                    note: "variant: content, \(points(height)) \(unit) measured on \(platform.rawValue), "
                        + "scrollable in case it exceeds the unknown viewport")
            }
            if height >= viewport {
                return Resting(
                    detents: [Detent(id: .large)], selected: .large, scrollable: true, awaiting: false,
                    note: "variant: content, measured \(points(height)) \(unit) reaches the \(points(viewport)) \(unit) "
                        + "viewport: large detent, scrollable")
            }
            return Resting(
                detents: [Detent(id: .content, height: height)], selected: .content, scrollable: false, awaiting: false,
                note: TraceLine.join("variant: content, ", points(height), " ", unit, " measured on ", platform.rawValue))
        case .large:
            return Resting(
                detents: [Detent(id: .large)], selected: .large, scrollable: true, awaiting: false,
                note: "variant: large, the parent scales behind, scrollable")
        case .medium:
            return Resting(
                detents: [Detent(id: .medium), Detent(id: .large)], selected: .medium, scrollable: true, awaiting: false,
                note: "variant: medium, resizable to large, scrollable")
        }
    }

    /// iPhone: a page sheet. iPad: a popover, anchored to the control that opened it; a card sheet appears
    /// because its count changed, with no control to anchor to (UIKit refuses a popover without a source),
    /// so it is a form sheet (001: its `sheetPresentationController` takes the same settings).
    static func modalStyle(of sheet: SheetDefinition, idiom: Idiom) -> ModalPresentationStyle {
        guard idiom == .pad else { return .pageSheet }
        return sheet.isCardSheet ? .formSheet : .popover
    }

    /// A neutral detent as SwiftUI spells it.
    static func swiftUIDetent(_ detent: Detent) -> SwiftUIDetent {
        switch detent.id {
        case .medium: SwiftUIDetent(kind: .medium)
        case .large: SwiftUIDetent(kind: .large)
        case .content: detent.height.map { SwiftUIDetent(kind: .height, height: $0) } ?? SwiftUIDetent(kind: .large)
        }
    }

    private static let dimmedBoth: [AndroidSheetValue] = [.partiallyExpanded, .expanded]
    private static let dimmedExpanded: [AndroidSheetValue] = [.expanded]
    private static let dimmedNone: [AndroidSheetValue] = []

    /// The Android values with a scrim (shared arrays: no allocation per decision).
    static func androidDimmedValues(_ largestUndimmed: DetentID?, _ skipPartiallyExpanded: Bool) -> [AndroidSheetValue] {
        switch largestUndimmed {
        case nil: skipPartiallyExpanded ? dimmedExpanded : dimmedBoth
        case .medium?, .content?: dimmedExpanded
        case .large?: dimmedNone
        }
    }

    /// Rule 8's affordance by kind and style.
    static func defaultAffordance(for kind: SheetKind, style: SheetStyle) -> DismissAffordance {
        switch kind {
        // 000: "A close system icon is used to dismiss"; 003 strict: "no top-right close button".
        case .informational: style == .strict ? .none : .closeIcon
        // 000: "a 'Cancel' text button placed in the header".
        case .input: .cancelButton
        // 000 action sheets: "Don't use an explicit button for dismissal"; 004: swiping the card sheet away.
        case .action, .cards: .none
        }
    }

    /// Rule 11: how the top arrived; `nil` for a root that replaced nothing.
    static func arrival(
        of sheet: SheetDefinition, entry: StackEntry, below: String?, catalog: Catalog, awaitingContentHeight: Bool
    ) -> Transition? {
        switch entry.mode {
        case .replace:
            // A flow step: same sheet, new content, when both steps share a variant other than content.
            guard let previous = entry.replacedSheetId ?? below else { return nil }
            let sameVariant =
                entry.replacedSheetId != nil
                && catalog[previous].map { $0.resolvedSize == sheet.resolvedSize && sheet.resolvedSize != .content } == true
            return Transition(
                from: previous, mode: sameVariant ? .replaceContent : .resize, waitForContentHeight: awaitingContentHeight)
        case .push:
            guard let below else { return nil }
            return Transition(from: below, mode: .push, waitForContentHeight: awaitingContentHeight)
        }
    }

    /// Points as the JSON prints them (`320`, `412.5`).
    static func points(_ value: Double) -> String {
        // Integral values without a fraction, others in Swift's shortest round-trip form: as the wire
        // format prints them (SheetWire), so a trace line quotes the same number the JSON carries.
        value.magnitude < 9_007_199_254_740_992 && Double(Int(value)) == value ? String(Int(value)) : value.description
    }
}
