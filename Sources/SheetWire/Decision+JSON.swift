public import JSONKit
public import SheetPolicy

extension Decision: JSONWritable {
    /// The API's response body: compact JSON, members in a fixed order, absent values as `null`.
    public func jsonBytes() -> [UInt8] {
        // One buffer, no regrowth: an iOS presentation with its UIKit and SwiftUI blocks is about 1.5 KB,
        // `sheet` repeats the top, the trace takes under 1 KB.
        var writer = JSONWriter(reservingCapacity: 1024 + 1600 * (stack.count + 1))
        writeJSON(into: &writer)
        return writer.bytes
    }

    /// Writes `present`, `reason`, `stack`, `sheet`, `yielded`, `held`, `trace`, in that order
    /// (`validUntil` is not part of the body).
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("present", present)
            o.member("reason", reason.rawValue)
            o.member("stack", stack)
            o.member("sheet", sheet)
            o.member("yielded", yielded)
            o.member("held", held)
            o.member("trace", trace)
        }
    }
}

extension HeldSheet: JSONWritable {
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("sheetId", sheetId)
            o.member("reason", reason.rawValue)
        }
    }
}

extension Presentation: JSONWritable {
    /// Writes the members in the order issue 3 lists them, then the platform block (`ios` or `android`).
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("id", id)
            o.member("kind", kind.rawValue)
            o.member("variant", variant.rawValue)
            o.member("detents", detents)
            o.member("selectedDetent", selectedDetent.rawValue)
            o.member("grabberVisible", grabberVisible)
            o.member("swipeToDismiss", swipeToDismiss)
            o.member("tapScrimToDismiss", tapScrimToDismiss)
            o.member("largestUndimmedDetent", largestUndimmedDetent?.rawValue)
            o.member("dismissAffordance", dismissAffordance.rawValue)
            o.member("confirmBeforeDismiss", confirmBeforeDismiss)
            o.member("expandsOnScrollToEdge", expandsOnScrollToEdge)
            o.member("parentScalesBehind", parentScalesBehind)
            o.member("awaitingContentHeight", awaitingContentHeight)
            o.member("scrollable", scrollable)
            o.member("scrimAccessibleAsClose", scrimAccessibleAsClose)
            o.member("header", header)
            o.member("primaryButton", primaryButton)
            o.member("presentationStyle", presentationStyle.rawValue)
            o.member("transition", transition)
            o.member("keyboardAdjustment", keyboardAdjustment.rawValue)
            switch platform {
            case .ios(let ios): o.member("ios", ios)
            case .android(let android): o.member("android", android)
            }
        }
    }
}

extension Detent: JSONWritable {
    /// `{"id": …, "height": points or null}`.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("id", id.rawValue)
            o.member("height", height)
        }
    }
}

extension SheetHeader: JSONWritable {
    /// `{"title", "height", "sticky", "cancelButton"}`.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("title", title)
            o.member("height", height)
            o.member("sticky", sticky)
            o.member("cancelButton", cancelButton)
        }
    }
}

extension PrimaryButtonSlot: JSONWritable {
    /// `{"label", "size", "sticky"}`.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("label", label)
            o.member("size", size.rawValue)
            o.member("sticky", sticky)
        }
    }
}

extension Transition: JSONWritable {
    /// `{"from", "mode", "waitForContentHeight"}`.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("from", from)
            o.member("mode", mode.rawValue)
            o.member("waitForContentHeight", waitForContentHeight)
        }
    }
}

extension IOSSheetConfiguration: JSONWritable {
    /// UIKit's names; `customDetentHeights` is an object keyed by detent identifier.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("detents", detents.map(\.rawValue))
            o.objectMember("customDetentHeights") { heights in
                for custom in customDetentHeights { heights.member(custom.identifier.rawValue, custom.height) }
            }
            o.member("selectedDetentIdentifier", selectedDetentIdentifier.rawValue)
            o.member("largestUndimmedDetentIdentifier", largestUndimmedDetentIdentifier?.rawValue)
            o.member("prefersGrabberVisible", prefersGrabberVisible)
            o.member("prefersScrollingExpandsWhenScrolledToEdge", prefersScrollingExpandsWhenScrolledToEdge)
            o.member("prefersEdgeAttachedInCompactHeight", prefersEdgeAttachedInCompactHeight)
            o.member("widthFollowsPreferredContentSizeWhenEdgeAttached", widthFollowsPreferredContentSizeWhenEdgeAttached)
            o.member("preferredCornerRadius", preferredCornerRadius)
            o.member("isModalInPresentation", isModalInPresentation)
            o.member("modalPresentationStyle", modalPresentationStyle.rawValue)
            o.objectMember("dismissal") { d in
                d.member("swipe", dismissal.swipe)
                d.member("tapScrim", dismissal.tapScrim)
                d.member("requiresDelegate", dismissal.requiresDelegate)
            }
            o.member("swiftui", swiftui)
        }
    }
}

extension SwiftUIDetent: JSONWritable {
    /// `{"kind": "medium" | "large" | "height", "height": points or null}`.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("kind", kind.rawValue)
            o.member("height", height)
        }
    }
}

extension SwiftUISheetConfiguration: JSONWritable {
    /// SwiftUI's modifier names.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("presentationDetents", presentationDetents)
            o.member("selection", selection)
            o.member("presentationDragIndicator", presentationDragIndicator.rawValue)
            o.objectMember("presentationBackgroundInteraction") { b in
                b.member("kind", presentationBackgroundInteraction.kind.rawValue)
                b.member("upThrough", presentationBackgroundInteraction.upThrough)
            }
            o.member("presentationContentInteraction", presentationContentInteraction.rawValue)
            o.member("presentationCornerRadius", presentationCornerRadius)
            o.member("interactiveDismissDisabled", interactiveDismissDisabled)
        }
    }
}

extension AndroidSheetConfiguration: JSONWritable {
    /// Material 3's names.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("skipPartiallyExpanded", skipPartiallyExpanded)
            o.member("initialValue", initialValue.rawValue)
            o.member("dragHandle", dragHandle)
            o.member("sheetGesturesEnabled", sheetGesturesEnabled)
            o.member("shouldDismissOnClickOutside", shouldDismissOnClickOutside)
            o.member("shouldDismissOnBackPress", shouldDismissOnBackPress)
            o.member("confirmValueChangeRequiresDialog", confirmValueChangeRequiresDialog)
            o.objectMember("confirmValueChange") { c in c.member("hidden", confirmValueChange.hidden.rawValue) }
            o.objectMember("scrim") { c in
                c.arrayMember("dimmedAt") { a in for value in scrim.dimmedAt { a.element(value.rawValue) } }
            }
            o.objectMember("shape") { c in c.member("topCornerRadius", shape.topCornerRadius) }
            o.objectMember("properties") { c in
                c.member("shouldDismissOnBackPress", properties.shouldDismissOnBackPress)
                c.member("shouldDismissOnClickOutside", properties.shouldDismissOnClickOutside)
            }
            o.member("imePadding", imePadding)
        }
    }
}
