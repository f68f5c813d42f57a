public import JSONKit
public import SheetPolicy

extension Decision: JSONWritable {
    /// The API's response body: compact JSON, members in a fixed order, absent values as `null`.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 1024 + 1536 * stack.count)
        writeJSON(into: &writer)
        return writer.bytes
    }

    /// Writes `present`, `reason`, `stack`, `sheet`, `yielded`, `trace`, in that order.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("present", present)
            o.member("reason", reason.rawValue)
            o.member("stack", stack)
            o.member("sheet", sheet)
            o.member("yielded", yielded)
            o.member("trace", trace)
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
    /// `{"title", "height", "sticky"}`.
    public func writeJSON(into writer: inout JSONWriter) {
        writer.object { o in
            o.member("title", title)
            o.member("height", height)
            o.member("sticky", sticky)
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
        }
    }
}
