/// The sheet policy: pure functions from the catalog, one user's state and the client's context to a decision.
///
/// No I/O, no clock, no randomness: the same input gives the same output, byte for byte.
public enum SheetPolicy {
    /// The decision for one user on one screen at `now` (the campaign rules read the time; nothing
    /// else does). `experiments` places the user in the catalog's experiments; without it (or without
    /// any experiment in the catalog) sheets are presented as defined and nothing is hashed.
    public static func decide(
        catalog: Catalog, state: UserState, context: ClientContext, now: Timestamp, experiments assigner: ExperimentAssigner? = nil
    ) -> Decision {
        // A line per card sheet of the screen and about ten for the presented sheet: reserved once
        // rather than regrown five times.
        let cardSheets = catalog.cardSheets(ownedBy: context)
        var trace: [String] = []
        trace.reserveCapacity(cardSheets.count + 16)
        var stack = liveStack(state.stack, catalog: catalog, state: state, notes: &trace)
        var held: [HeldSheet] = []
        var arms: ExperimentArms? = nil
        if catalog.hasExperiments, let assigner {
            arms = ExperimentArms(assigner: assigner, pins: state.experiments.pins)
            cutAtHoldout(&stack, catalog: catalog, context: context, arms: &arms!, held: &held, trace: &trace)
        }
        let stackRoot = stack.isEmpty ? nil : catalog[stack[0].sheetId]
        let stackShown = stackRoot?.isOwned(by: context) == true

        // Rules 1 and 2: the card sheets of this screen, and which of them may present; then the
        // campaign rules for those with cards, unless they are part of the stack shown.
        let settingsOn = !catalog.settings.isOff
        var eligible: [SheetDefinition] = []
        eligible.reserveCapacity(cardSheets.count)
        var heldOut: [SheetDefinition] = []
        var topHeld: (sheet: SheetDefinition, reason: DecisionReason)? = nil
        var validUntil: Timestamp? = nil
        var global: GlobalImpressions? = nil
        var latchedWithCards = false
        for sheet in cardSheets {
            let count = cardCount(of: sheet, in: state)
            if count <= 0 {
                trace.append(sheet.noCardsLine)
            } else if isLatched(sheet, in: state) {
                latchedWithCards = true
                trace.append("latch: '\(sheet.id)' stays closed, dismissed at count \(count) and the count is unchanged")
            } else if settingsOn || sheet.campaign.hasRules, !(stackShown && stack.contains { $0.sheetId == sheet.id }),
                let reason = campaignHold(
                    of: sheet, state: state, context: context, catalog: catalog, now: now, global: &global,
                    boundary: &validUntil, trace: &trace)
            {
                held.append(HeldSheet(sheetId: sheet.id, reason: reason))
                if topHeld.map({ outranks(sheet, $0.sheet) }) ?? true { topHeld = (sheet, reason) }
            } else if sheet.experiment != nil, arms != nil, let (resolved, holdsOut) = arms!.resolve(sheet, trace: &trace), holdsOut {
                // The holdout is not shown the sheet: as if it were not eligible (another may win).
                held.append(HeldSheet(sheetId: sheet.id, reason: .holdout))
                heldOut.append(resolved)
                if topHeld.map({ outranks(resolved, $0.sheet) }) ?? true { topHeld = (resolved, .holdout) }
            } else {
                let resolved = sheet.experiment != nil ? arms?.resolved[sheet.id] ?? sheet : sheet
                eligible.append(resolved)
                trace.append(
                    TraceLine.join("eligibility: '", sheet.id, "' has ", String(count), count == 1 ? " card on this screen" : " cards on this screen")
                )
            }
        }

        // Rule 4: "A user has one stack; it belongs to its root sheet's screen (and tab)": nested sheets
        // defined for other screens show over the root wherever the root is owned.
        if let root = stackRoot {
            if stackShown {
                trace.append(
                    "stack: \(stack.count) sheet\(stack.count == 1 ? "" : "s") open on this screen, "
                        + "root '\(stack[0].sheetId)', top '\(stack[stack.count - 1].sheetId)' presented")
                let open = Set(stack.map(\.sheetId))
                let yielded = eligible.map(\.id).filter { !open.contains($0) }
                if !yielded.isEmpty {
                    trace.append("stack: card sheets yield to the stack: \(yielded.joined(separator: ", "))")
                }
                let presentations = present(stack, catalog: catalog, state: state, context: context, trace: &trace, arms: &arms)
                var decision = Decision(
                    present: true, reason: .stack, stack: presentations, yielded: yielded, held: sortedHeld(held, arms), trace: trace,
                    validUntil: validUntil)
                decision.exposures = arms?.exposures ?? []
                return decision
            }
            trace.append(
                "stack: kept but not shown, it belongs to screen '\(root.screen)'"
                    + (root.tab.map { " tab '\($0)'" } ?? ""))
        }

        // Rule 3: the highest priority among eligible card sheets; ties go to the smallest id.
        // The holdout sheet that would have won is exposed (for its holdout arm), the others not.
        if !heldOut.isEmpty, let top = heldOut.min(by: outranks), eligible.min(by: outranks).map({ outranks(top, $0) }) ?? true {
            arms?.exposeHoldout(top)
        }
        if let winner = eligible.min(by: outranks) {
            let yielded = eligible.map(\.id).filter { $0 != winner.id }
            trace.append(
                yielded.isEmpty
                    ? TraceLine.join("priority: '", winner.id, "' (priority ", String(winner.priority), ") is presented")
                    : TraceLine.join(
                        "priority: '", winner.id, "' (priority ", String(winner.priority), ") is presented; ",
                        yielded.joined(separator: ", "), yielded.count == 1 ? " yields" : " yield"))
            let presentations = present(
                [StackEntry(sheetId: winner.id, mode: .push)], catalog: catalog, state: state, context: context,
                trace: &trace, arms: &arms)
            var decision = Decision(
                present: true, reason: .cardsAvailable, stack: presentations, yielded: yielded, held: sortedHeld(held, arms), trace: trace,
                validUntil: validUntil)
            decision.exposures = arms?.exposures ?? []
            return decision
        }

        let reason: DecisionReason
        if let topHeld {
            // Nothing is presented because of the campaign rules: the reason of the held sheet that would win.
            reason = topHeld.reason
            trace.append(
                "\(reason == .holdout ? "experiment" : "campaign"): nothing presented, "
                    + "'\(topHeld.sheet.id)' (priority \(topHeld.sheet.priority)) is held (\(reason.rawValue))")
        } else if latchedWithCards {
            reason = .latched
        } else if !cardSheets.isEmpty {
            reason = .noCards
        } else {
            reason = .noSheetForScreen
            trace.append(
                "screen: no card sheet belongs to screen '\(context.screen)'"
                    + (context.tab.map { " tab '\($0)'" } ?? ""))
        }
        var decision = Decision(
            present: false, reason: reason, stack: [], yielded: [], held: sortedHeld(held, arms), trace: trace, validUntil: validUntil)
        decision.exposures = arms?.exposures ?? []
        return decision
    }

    // MARK: - Shared facts

    /// The count a card sheet sees: its container under its own filter (none stored reads as 0).
    static func cardCount(of sheet: SheetDefinition, in state: UserState) -> Int {
        guard let key = sheet.containerKey else { return 0 }
        return state.count(for: key)
    }

    /// The user dismissed the sheet at the count its container still has.
    static func isLatched(_ sheet: SheetDefinition, in state: UserState) -> Bool {
        guard let latch = state.latches[sheet.id] else { return false }
        return latch == cardCount(of: sheet, in: state)
    }

    /// A card sheet lives while it has cards and is not latched (screen aside).
    static func isLive(_ sheet: SheetDefinition, in state: UserState) -> Bool {
        cardCount(of: sheet, in: state) > 0 && !isLatched(sheet, in: state)
    }

    /// Rule 3's order: higher priority first, then the smaller id in byte order.
    static func outranks(_ a: SheetDefinition, _ b: SheetDefinition) -> Bool {
        if a.priority != b.priority { return a.priority > b.priority }
        return a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
    }

    /// The stack as it may be shown: entries whose sheet left the catalog are ignored, the stack is cut
    /// at the first card sheet that no longer lives (count 0 or latched), and a stack left holding only a
    /// card sheet is dropped (the card rules present that sheet).
    static func liveStack(
        _ stack: [StackEntry], catalog: Catalog, state: UserState, notes: inout [String]
    ) -> [StackEntry] {
        var live: [StackEntry] = []
        for entry in stack {
            guard let sheet = catalog[entry.sheetId] else {
                notes.append("stack: ignored '\(entry.sheetId)', no longer in the catalog")
                continue
            }
            if sheet.isCardSheet && !isLive(sheet, in: state) {
                let why = cardCount(of: sheet, in: state) <= 0 ? "its count is 0" : "it is latched"
                notes.append(
                    live.isEmpty
                        ? "stack: cleared, its root card sheet '\(sheet.id)' is closed (\(why))"
                        : "stack: cut below card sheet '\(sheet.id)', closed (\(why))")
                return live
            }
            live.append(entry)
        }
        if live.count == 1, let root = catalog[live[0].sheetId], root.isCardSheet {
            notes.append("stack: dropped, it holds only card sheet '\(root.id)' (the card rules present it)")
            return []
        }
        return live
    }

    static func describe(_ key: ContainerKey?) -> String {
        guard let key else { return "no container" }
        return key.filter.isEmpty
            ? TraceLine.join("container '", key.containerId, "'")
            : TraceLine.join("container '", key.containerId, "' filter '", key.filter, "'")
    }
}
