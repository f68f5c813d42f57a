extension SheetPolicy {
    /// Presentations for a live stack, bottom to top; rules 5 to 12 are traced for the presented top.
    static func present(
        _ stack: [StackEntry], catalog: Catalog, state: UserState, context: ClientContext, trace: inout [String]
    ) -> [Presentation] {
        var presentations: [Presentation] = []
        presentations.reserveCapacity(stack.count)
        for (index, entry) in stack.enumerated() {
            guard let sheet = catalog[entry.sheetId] else { continue }
            let isTop = index == stack.count - 1
            let below = index > 0 ? stack[index - 1].sheetId : nil
            var lines: [String] = []
            presentations.append(
                presentation(
                    of: sheet, entry: entry, below: below, isTop: isTop, catalog: catalog, state: state,
                    context: context, trace: &lines))
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

        // Rule 5: variants.
        var detents: [Detent]
        var selected: DetentID
        var scrollable: Bool
        var awaitingContentHeight = false
        switch variant {
        case .content:
            if let height = state.contentHeights[HeightKey(sheetId: sheet.id, platform: platform)] {
                if let viewport = context.viewportHeight, height >= viewport {
                    detents = [Detent(id: .large)]
                    selected = .large
                    scrollable = true
                    trace.append(
                        "variant: content, measured \(points(height)) pt reaches the \(points(viewport)) pt viewport: "
                            + "large detent, scrollable")
                } else {
                    detents = [Detent(id: .content, height: height)]
                    selected = .content
                    scrollable = false
                    trace.append("variant: content, \(points(height)) pt measured on \(platform.rawValue)")
                }
            } else {
                detents = [Detent(id: .medium)]
                selected = .medium
                scrollable = false
                awaitingContentHeight = true
                trace.append("variant: content, height not measured on \(platform.rawValue) yet: resting at medium")
            }
        case .large:
            detents = [Detent(id: .large)]
            selected = .large
            scrollable = true
            trace.append("variant: large, the parent scales behind, scrollable")
        case .medium:
            detents = [Detent(id: .medium), Detent(id: .large)]
            selected = .medium
            scrollable = true
            trace.append("variant: medium, resizable to large, scrollable")
        }

        // Rule 6: the keyboard raises the sheet to large until it hides.
        if context.keyboardVisible {
            if !detents.contains(where: { $0.id == .large }) { detents.append(Detent(id: .large)) }
            selected = .large
            trace.append("keyboard: visible, large detent selected")
        }

        // Rule 7: grabber.
        let grabberVisible = platform == .android || variant == .medium
        switch platform {
        case .ios: trace.append("grabber: \(grabberVisible ? "shown, the sheet is resizable" : "hidden, the sheet is not resizable")")
        case .android: trace.append("grabber: drag handle shown, every Android sheet is resizable")
        }

        // Rule 8: dismissal.
        let affordance = sheet.dismissAffordance ?? defaultAffordance(for: sheet.kind)
        let swipeToDismiss = sheet.swipeToDismiss ?? true
        let tapScrimToDismiss = sheet.tapScrimToDismiss ?? true
        // `dirty` describes the presented sheet, so only the top can ask for confirmation.
        let confirmBeforeDismiss = isTop && sheet.confirmDismissWhenDirty && context.dirty
        trace.append(
            "dismissal: \(affordance.rawValue), swipe \(swipeToDismiss ? "on" : "off"), scrim tap \(tapScrimToDismiss ? "on" : "off")"
                + (confirmBeforeDismiss ? ", unsaved input: confirm first" : ""))

        // Rule 9: scrim.
        let largestUndimmed = sheet.nonModalUpTo
        trace.append("scrim: " + (largestUndimmed.map { "undimmed up to \($0.rawValue)" } ?? "dimmed at every detent"))

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
                    "transition: \(transition.mode.rawValue) from '\(transition.from)'"
                        + (transition.waitForContentHeight ? ", waiting for the content height" : ""))
            } else {
                trace.append("transition: none, a root")
            }
        }

        // Rule 12: anatomy.
        let header = sheet.style == .strict ? SheetHeader(title: sheet.title ?? "") : nil
        let button = sheet.primaryButton.map {
            PrimaryButtonSlot(label: $0.label, size: sheet.style == .strict ? .medium : .small)
        }
        trace.append(
            "anatomy: \(sheet.style.rawValue), "
                + (header.map { "56 pt sticky header '\($0.title)'" } ?? "no header")
                + (button.map { ", \($0.size.rawValue) sticky primary button '\($0.label)'" } ?? ""))

        let expands = sheet.expandsOnScrollToEdge ?? (variant == .medium)
        let platformConfiguration: PlatformConfiguration
        switch platform {
        case .ios:
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
                    isModalInPresentation: confirmBeforeDismiss || !swipeToDismiss))
        case .android:
            let skipPartiallyExpanded = variant != .medium
            platformConfiguration = .android(
                AndroidSheetConfiguration(
                    skipPartiallyExpanded: skipPartiallyExpanded,
                    initialValue: !skipPartiallyExpanded && selected == .medium ? .partiallyExpanded : .expanded,
                    dragHandle: true,
                    sheetGesturesEnabled: swipeToDismiss,
                    shouldDismissOnClickOutside: tapScrimToDismiss,
                    shouldDismissOnBackPress: swipeToDismiss || tapScrimToDismiss || affordance != .none,
                    confirmValueChangeRequiresDialog: confirmBeforeDismiss))
        }

        return Presentation(
            id: sheet.id, kind: sheet.kind, variant: variant, detents: detents, selectedDetent: selected,
            grabberVisible: grabberVisible, swipeToDismiss: swipeToDismiss, tapScrimToDismiss: tapScrimToDismiss,
            largestUndimmedDetent: largestUndimmed, dismissAffordance: affordance,
            confirmBeforeDismiss: confirmBeforeDismiss, expandsOnScrollToEdge: expands,
            parentScalesBehind: variant == .large, awaitingContentHeight: awaitingContentHeight,
            scrollable: scrollable, scrimAccessibleAsClose: tapScrimToDismiss, header: header, primaryButton: button,
            presentationStyle: style, transition: transition, platform: platformConfiguration)
    }

    /// Rule 8's affordance by kind.
    static func defaultAffordance(for kind: SheetKind) -> DismissAffordance {
        switch kind {
        case .informational: .closeIcon
        case .input: .cancelButton
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
            let sameVariant = entry.replacedSheetId != nil
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
