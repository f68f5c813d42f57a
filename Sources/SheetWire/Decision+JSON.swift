public import JSONKit
public import SheetPolicy

// The decision body is rendered by hand into one `JSONBuffer`: each member's name and punctuation is one
// static run (`,"grabberVisible":`), enum raw values are copied without an escape scan, and no closure
// or generic witness sits on the path. The bytes are compact JSON, as `JSONWriter` writes it (the
// golden tests hold them).

extension Decision {
    /// The API's response body: compact JSON, members in a fixed order, absent values as `null`.
    public func jsonBytes() -> [UInt8] {
        // An iOS presentation with its UIKit and SwiftUI blocks is about 1.5 KB, `sheet` repeats the
        // top, the trace takes under 1 KB: one allocation in the usual case.
        var out = JSONBuffer(capacity: 1024 + 1600 * (stack.count + 1))
        write(to: &out)
        return out.bytes
    }

    /// The body, as `jsonBytes()` returns it: `present`, `reason`, `stack`, `sheet`, `yielded`,
    /// `held`, `trace`, in that order (`validUntil` is not part of it).
    public func write(to out: inout JSONBuffer) {
        out.append("{\"present\":")
        out.bool(present)
        out.append(",\"reason\":")
        out.safeString(reason.rawValue)
        out.append(",\"stack\":[")
        // `sheet` is the top of `stack` again: rendered once, copied.
        var top = 0..<0
        for (index, presentation) in stack.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            let start = out.count
            presentation.write(to: &out)
            top = start..<out.count
        }
        out.append("],\"sheet\":")
        if stack.isEmpty { out.append("null") } else { out.appendCopy(of: top) }
        out.append(",\"yielded\":")
        Self.write(yielded, to: &out)
        out.append(",\"held\":[")
        for (index, sheet) in held.enumerated() {
            out.append(index > 0 ? ",{\"sheetId\":" : "{\"sheetId\":")
            out.string(sheet.sheetId)
            out.append(",\"reason\":")
            out.safeString(sheet.reason.rawValue)
            out.append(UInt8(ascii: "}"))
        }
        out.append("],\"trace\":")
        Self.write(trace, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// An array of strings.
    static func write(_ strings: [String], to out: inout JSONBuffer) {
        out.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.string(string)
        }
        out.append(UInt8(ascii: "]"))
    }
}

extension Presentation {
    /// The presentation object: the members in the documented order (openapi.yaml), then the platform
    /// block (`ios` or `android`).
    public func write(to out: inout JSONBuffer) {
        out.append("{\"id\":")
        out.string(id)
        out.append(",\"kind\":")
        out.safeString(kind.rawValue)
        out.append(",\"variant\":")
        out.safeString(variant.rawValue)
        out.append(",\"detents\":[")
        for (index, detent) in detents.enumerated() {
            out.append(index > 0 ? ",{\"id\":" : "{\"id\":")
            out.safeString(detent.id.rawValue)
            out.append(",\"height\":")
            out.double(detent.height)
            out.append(UInt8(ascii: "}"))
        }
        out.append("],\"selectedDetent\":")
        out.safeString(selectedDetent.rawValue)
        out.append(",\"grabberVisible\":")
        out.bool(grabberVisible)
        out.append(",\"swipeToDismiss\":")
        out.bool(swipeToDismiss)
        out.append(",\"tapScrimToDismiss\":")
        out.bool(tapScrimToDismiss)
        out.append(",\"largestUndimmedDetent\":")
        out.safeString(largestUndimmedDetent?.rawValue)
        out.append(",\"dismissAffordance\":")
        out.safeString(dismissAffordance.rawValue)
        out.append(",\"confirmBeforeDismiss\":")
        out.bool(confirmBeforeDismiss)
        out.append(",\"expandsOnScrollToEdge\":")
        out.bool(expandsOnScrollToEdge)
        out.append(",\"parentScalesBehind\":")
        out.bool(parentScalesBehind)
        out.append(",\"awaitingContentHeight\":")
        out.bool(awaitingContentHeight)
        out.append(",\"scrollable\":")
        out.bool(scrollable)
        out.append(",\"scrimAccessibleAsClose\":")
        out.bool(scrimAccessibleAsClose)
        out.append(",\"header\":")
        if let header {
            out.append("{\"title\":")
            out.string(header.title)
            out.append(",\"height\":")
            out.double(header.height)
            out.append(",\"sticky\":")
            out.bool(header.sticky)
            out.append(",\"cancelButton\":")
            out.bool(header.cancelButton)
            out.append(UInt8(ascii: "}"))
        } else {
            out.append("null")
        }
        out.append(",\"primaryButton\":")
        if let primaryButton {
            out.append("{\"label\":")
            out.string(primaryButton.label)
            out.append(",\"size\":")
            out.safeString(primaryButton.size.rawValue)
            out.append(",\"sticky\":")
            out.bool(primaryButton.sticky)
            out.append(UInt8(ascii: "}"))
        } else {
            out.append("null")
        }
        out.append(",\"presentationStyle\":")
        out.safeString(presentationStyle.rawValue)
        out.append(",\"transition\":")
        if let transition {
            out.append("{\"from\":")
            out.string(transition.from)
            out.append(",\"mode\":")
            out.safeString(transition.mode.rawValue)
            out.append(",\"waitForContentHeight\":")
            out.bool(transition.waitForContentHeight)
            out.append(UInt8(ascii: "}"))
        } else {
            out.append("null")
        }
        out.append(",\"keyboardAdjustment\":")
        out.safeString(keyboardAdjustment.rawValue)
        out.append(",\"experiment\":")
        if let experiment {
            out.append("{\"id\":")
            out.string(experiment.id)
            out.append(",\"arm\":")
            out.string(experiment.arm)
            out.append(",\"payload\":")
            if let payload = experiment.payloadJSON { out.append(payload) } else { out.append("null") }
            out.append(UInt8(ascii: "}"))
        } else {
            out.append("null")
        }
        switch platform {
        case .ios(let ios):
            out.append(",\"ios\":")
            ios.write(to: &out)
        case .android(let android):
            out.append(",\"android\":")
            android.write(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension IOSSheetConfiguration {
    /// The `ios` block: UIKit's names; `customDetentHeights` is an object keyed by detent identifier.
    public func write(to out: inout JSONBuffer) {
        out.append("{\"detents\":[")
        for (index, detent) in detents.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.safeString(detent.rawValue)
        }
        out.append("],\"customDetentHeights\":{")
        for (index, custom) in customDetentHeights.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.safeString(custom.identifier.rawValue)
            out.append(UInt8(ascii: ":"))
            out.double(custom.height)
        }
        out.append("},\"selectedDetentIdentifier\":")
        out.safeString(selectedDetentIdentifier.rawValue)
        out.append(",\"largestUndimmedDetentIdentifier\":")
        out.safeString(largestUndimmedDetentIdentifier?.rawValue)
        out.append(",\"prefersGrabberVisible\":")
        out.bool(prefersGrabberVisible)
        out.append(",\"prefersScrollingExpandsWhenScrolledToEdge\":")
        out.bool(prefersScrollingExpandsWhenScrolledToEdge)
        out.append(",\"prefersEdgeAttachedInCompactHeight\":")
        out.bool(prefersEdgeAttachedInCompactHeight)
        out.append(",\"widthFollowsPreferredContentSizeWhenEdgeAttached\":")
        out.bool(widthFollowsPreferredContentSizeWhenEdgeAttached)
        out.append(",\"preferredCornerRadius\":")
        out.double(preferredCornerRadius)
        out.append(",\"isModalInPresentation\":")
        out.bool(isModalInPresentation)
        out.append(",\"modalPresentationStyle\":")
        out.safeString(modalPresentationStyle.rawValue)
        out.append(",\"dismissal\":{\"swipe\":")
        out.bool(dismissal.swipe)
        out.append(",\"tapScrim\":")
        out.bool(dismissal.tapScrim)
        out.append(",\"requiresDelegate\":")
        out.bool(dismissal.requiresDelegate)
        out.append("},\"swiftui\":")
        swiftui.write(to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

extension SwiftUIDetent {
    /// The detent object.
    func write(to out: inout JSONBuffer) {
        out.append("{\"kind\":")
        out.safeString(kind.rawValue)
        out.append(",\"height\":")
        out.double(height)
        out.append(UInt8(ascii: "}"))
    }
}

extension SwiftUISheetConfiguration {
    /// The `swiftui` block.
    func write(to out: inout JSONBuffer) {
        out.append("{\"presentationDetents\":[")
        for (index, detent) in presentationDetents.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            detent.write(to: &out)
        }
        out.append("],\"selection\":")
        selection.write(to: &out)
        out.append(",\"presentationDragIndicator\":")
        out.safeString(presentationDragIndicator.rawValue)
        out.append(",\"presentationBackgroundInteraction\":{\"kind\":")
        out.safeString(presentationBackgroundInteraction.kind.rawValue)
        out.append(",\"upThrough\":")
        if let upThrough = presentationBackgroundInteraction.upThrough {
            upThrough.write(to: &out)
        } else {
            out.append("null")
        }
        out.append("},\"presentationContentInteraction\":")
        out.safeString(presentationContentInteraction.rawValue)
        out.append(",\"presentationCornerRadius\":")
        out.double(presentationCornerRadius)
        out.append(",\"interactiveDismissDisabled\":")
        out.bool(interactiveDismissDisabled)
        out.append(UInt8(ascii: "}"))
    }
}

extension AndroidSheetConfiguration {
    /// The `android` block.
    public func write(to out: inout JSONBuffer) {
        out.append("{\"skipPartiallyExpanded\":")
        out.bool(skipPartiallyExpanded)
        out.append(",\"initialValue\":")
        out.safeString(initialValue.rawValue)
        out.append(",\"dragHandle\":")
        out.bool(dragHandle)
        out.append(",\"sheetGesturesEnabled\":")
        out.bool(sheetGesturesEnabled)
        out.append(",\"shouldDismissOnClickOutside\":")
        out.bool(shouldDismissOnClickOutside)
        out.append(",\"shouldDismissOnBackPress\":")
        out.bool(shouldDismissOnBackPress)
        out.append(",\"confirmValueChangeRequiresDialog\":")
        out.bool(confirmValueChangeRequiresDialog)
        out.append(",\"confirmValueChange\":{\"hidden\":")
        out.safeString(confirmValueChange.hidden.rawValue)
        out.append("},\"scrim\":{\"dimmedAt\":[")
        for (index, value) in scrim.dimmedAt.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.safeString(value.rawValue)
        }
        out.append("]},\"shape\":{\"topCornerRadius\":")
        out.double(shape.topCornerRadius)
        out.append("},\"properties\":{\"shouldDismissOnBackPress\":")
        out.bool(properties.shouldDismissOnBackPress)
        out.append(",\"shouldDismissOnClickOutside\":")
        out.bool(properties.shouldDismissOnClickOutside)
        out.append("},\"imePadding\":")
        out.bool(imePadding)
        out.append(UInt8(ascii: "}"))
    }
}
