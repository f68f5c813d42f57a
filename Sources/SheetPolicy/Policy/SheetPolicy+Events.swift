/// What folding one event into a user's state did.
public struct EventEffect: Sendable, Equatable {
    /// Count reports: false when `seq` is at or below the last applied one (the state is untouched then).
    /// Other events are always applied.
    public var applied: Bool
    /// Count reports: the stored count changed (none stored reads as 0). Other events: the state changed.
    public var changed: Bool
    /// Count reports: the stored count after the event. Dismissals of a card sheet: the count it is
    /// latched at. Otherwise 0.
    public var count: Int
    /// Dismissals: the dismissed sheet is latched now (card sheets only).
    public var latched: Bool
    /// Sheet ids of the stack after the event, bottom to top.
    public var stack: [String]

    public init(applied: Bool, changed: Bool, count: Int, latched: Bool, stack: [String]) {
        self.applied = applied; self.changed = changed; self.count = count; self.latched = latched; self.stack = stack
    }
}

extension SheetPolicy {
    /// Folds one event into the state (latch, stack, counts, heights, dismissal times) and says what
    /// happened. `now` is when the event happened: its `occurredAt` when it was reported late, which can
    /// be before events already applied. Times only move forward (the latest dismissal stays the latest);
    /// counts follow `seq`, and the stack and latches the order events arrive in.
    /// The caller has already checked that every sheet id in the event exists in the catalog.
    public static func apply(_ event: UserEvent, to state: inout UserState, catalog: Catalog, now: Timestamp) -> EventEffect {
        let before = state
        switch event {
        case .countReported(let containerId, let filter, let count, let seq):
            let key = ContainerKey(containerId: containerId, filter: filter)
            let stored = state.containers[key]
            // A late report never undoes a newer one.
            if let seq, let storedSeq = stored?.seq, storedSeq >= seq {
                return EventEffect(
                    applied: false, changed: false, count: stored?.count ?? 0, latched: false,
                    stack: state.stack.map(\.sheetId))
            }
            let previous = stored?.count ?? 0
            state.containers[key] = ContainerCount(count: count, seq: max(seq, stored?.seq))
            // Rule 2: the first differing count releases the latch for good; a count of 0 closes (and releases).
            if count != previous || count <= 0 {
                for sheet in catalog.sortedByID where sheet.isCardSheet && sheet.containerKey == key {
                    state.latches[sheet.id] = nil
                }
            }
            state.stack = settledStack(state.stack, catalog: catalog, state: state)
            return EventEffect(
                applied: true, changed: count != previous, count: count, latched: false,
                stack: state.stack.map(\.sheetId))

        case .sheetDismissed(let sheetId, let method):
            var latched = false
            var latchCount = 0
            // Rule 2: dismissing a card sheet latches it at its count, shown or not; the count stays.
            // 004: "When the customer dismisses the sheet, keep it closed": the customer's gestures and controls
            // latch; `programmatic` (the app closing it, e.g. to show another sheet) does not.
            if method != .programmatic, let sheet = catalog[sheetId], sheet.isCardSheet, let key = sheet.containerKey {
                latchCount = state.count(for: key)
                state.latches[sheetId] = latchCount
                latched = true
            }
            // Cooldowns and "a sheet on screen stays on screen" read the latest dismissal of a card sheet,
            // by any method (the app closing it takes it off the screen too). A dismissal reported late
            // starts its cooldown from when it happened, and never replaces a later one.
            if catalog[sheetId]?.isCardSheet == true, state.campaign.lastDismissals[sheetId].map({ now > $0 }) ?? true {
                state.campaign.lastDismissals[sheetId] = now
            }
            // Rule 4: dismissing a sheet removes it and everything above it (the root: the whole stack).
            if let index = state.stack.firstIndex(where: { $0.sheetId == sheetId }) {
                state.stack.removeSubrange(index...)
            }
            state.stack = settledStack(state.stack, catalog: catalog, state: state)
            return EventEffect(
                applied: true, changed: state != before, count: latchCount, latched: latched,
                stack: state.stack.map(\.sheetId))

        case .sheetOpened(let sheetId, let mode, let parentSheetId):
            var stack = state.stack
            if let parentSheetId {
                if let parent = stack.firstIndex(where: { $0.sheetId == parentSheetId }) {
                    // Cut back to the sheet the user is looking at.
                    stack.removeSubrange((parent + 1)...)
                } else {
                    // A new stack rooted on that sheet (a nested sheet opening over a card sheet).
                    stack = [StackEntry(sheetId: parentSheetId, mode: .push)]
                }
            }
            if let open = stack.firstIndex(where: { $0.sheetId == sheetId }) {
                // Opening a sheet already in the stack returns to it rather than stacking it twice.
                stack.removeSubrange((open + 1)...)
            } else {
                switch mode {
                case .push:
                    stack.append(StackEntry(sheetId: sheetId, mode: .push))
                case .replace:
                    if let top = stack.popLast() {
                        stack.append(StackEntry(sheetId: sheetId, mode: .replace, replacedSheetId: top.sheetId))
                    } else {
                        stack.append(StackEntry(sheetId: sheetId, mode: .push))
                    }
                }
            }
            state.stack = settledStack(stack, catalog: catalog, state: state)
            return EventEffect(
                applied: true, changed: state != before, count: 0, latched: false, stack: state.stack.map(\.sheetId))

        case .contentHeightMeasured(let sheetId, let platform, let height):
            state.contentHeights[HeightKey(sheetId: sheetId, platform: platform)] = height
            return EventEffect(
                applied: true, changed: state != before, count: 0, latched: false, stack: state.stack.map(\.sheetId))
        }
    }

    /// The stack after an event: what `decide` would show of it (see `liveStack`), so the stored
    /// stack never holds a closed card sheet or a lone card sheet.
    static func settledStack(_ stack: [StackEntry], catalog: Catalog, state: UserState) -> [StackEntry] {
        var notes: [String] = []
        return liveStack(stack, catalog: catalog, state: state, notes: &notes)
    }
}

/// The larger of two optional values; `nil` only when both are.
private func max(_ a: Int?, _ b: Int?) -> Int? {
    switch (a, b) {
    case (let a?, let b?): Swift.max(a, b)
    case (let a?, nil): a
    case (nil, let b): b
    }
}
