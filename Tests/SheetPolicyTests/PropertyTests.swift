import Foundation
import JSONKit
import SheetPolicy
import SheetWire
import TestSupport
import Testing

/// Properties of issue 3, each checked over thousands of generated catalogs, states and contexts.
struct PropertyTests {
    static let seeds: [UInt64] = Array(1...3000)

    static func cases() -> [(GeneratedCase, Decision)] {
        seeds.map { seed in
            let c = Generator.make(seed: seed)
            return (c, SheetPolicy.decide(catalog: c.catalog, state: c.state, context: c.context, now: Fixtures.now))
        }
    }

    /// A latched card sheet never presents while its count is unchanged.
    @Test func latchedSheetNeverPresentsWhileItsCountIsUnchanged() {
        var checked = 0
        for (c, decision) in Self.cases() {
            for sheet in c.definitions where sheet.kind == .cards {
                guard let key = sheet.containerKey, let latch = c.state.latches[sheet.id], latch == c.state.count(for: key)
                else { continue }
                checked += 1
                #expect(!decision.stack.contains { $0.id == sheet.id }, "\(c.context) \(sheet.id)")
            }
        }
        #expect(checked > 300, "the generator must produce latched sheets")
    }

    /// Nothing is presented unless the bottom of the stack (its root, or the lone card sheet) is owned by
    /// the screen and tab; sheets nested over it may belong elsewhere ("it belongs to its root sheet's screen").
    @Test func presentsOnlyStacksRootedOnTheScreenAndTab() throws {
        let cases = Self.cases()
        #expect(cases.filter { $0.1.present }.count > 500, "the generator must produce presentations")
        var nestedElsewhere = 0
        for (c, decision) in cases {
            guard let bottom = decision.stack.first else { continue }
            let root = try #require(c.catalog[bottom.id])
            #expect(root.isOwned(by: c.context))
            nestedElsewhere += decision.stack.dropFirst().filter { c.catalog[$0.id]?.isOwned(by: c.context) == false }.count
        }
        #expect(nestedElsewhere > 20, "the generator must nest sheets of other screens")
    }

    /// With a live stack on this screen, its top is presented, and the whole stack with it.
    @Test func presentsTheTopOfAStackOnThisScreen() {
        var checked = 0
        for (c, decision) in Self.cases() {
            let known = c.state.stack.filter { c.catalog[$0.sheetId] != nil }
            guard !known.isEmpty else { continue }
            let sheets = known.compactMap { c.catalog[$0.sheetId] }
            let cardsLive = sheets.allSatisfy { sheet in
                guard sheet.kind == .cards else { return true }
                let count = sheet.containerKey.map(c.state.count(for:)) ?? 0
                return count > 0 && c.state.latches[sheet.id] != count
            }
            let loneCard = sheets.count == 1 && sheets[0].kind == .cards
            guard cardsLive, !loneCard, sheets[0].isOwned(by: c.context) else { continue }
            checked += 1
            #expect(decision.reason == .stack)
            #expect(decision.sheet?.id == known.last?.sheetId)
            #expect(decision.stack.map(\.id) == known.map(\.sheetId))
        }
        #expect(checked > 100, "the generator must produce stacks on the context's screen")
    }

    /// `sheet` is always the last element of `stack`, in the value and in the JSON.
    @Test func sheetIsTheLastElementOfStack() throws {
        for (_, decision) in Self.cases() {
            #expect(decision.sheet == decision.stack.last)
            #expect(decision.present == !decision.stack.isEmpty)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(decision.jsonBytes())) as? NSDictionary)
            let stack = try #require(json["stack"] as? [NSDictionary])
            if let last = stack.last {
                #expect((json["sheet"] as? NSDictionary) == last)
            } else {
                #expect(json["sheet"] is NSNull)
            }
        }
    }

    /// The selected detent is always one of the detents, on both platform blocks too.
    @Test func selectedDetentIsAlwaysOneOfTheDetents() {
        for (_, decision) in Self.cases() {
            for p in decision.stack {
                #expect(p.detents.contains { $0.id == p.selectedDetent })
                switch p.platform {
                case .ios(let ios):
                    #expect(ios.detents.contains(ios.selectedDetentIdentifier))
                    #expect(ios.detents == p.detents.map(\.id))
                case .android(let android):
                    #expect(android.initialValue == .expanded || p.selectedDetent == .medium)
                }
            }
        }
    }

    /// The platform blocks agree with the neutral facts and with each other, for every sheet of every stack.
    @Test func platformBlocksAgreeWithTheNeutralFacts() {
        for (_, decision) in Self.cases() {
            for p in decision.stack {
                // The grabber is hidden only on a one-detent sheet that cannot be swiped away (Android: never).
                #expect(p.grabberVisible || (p.detents.count == 1 && !p.swipeToDismiss))
                #expect(p.header != nil || p.dismissAffordance != .cancelButton, "a Cancel button needs a header")
                #expect(p.header?.cancelButton ?? false == (p.dismissAffordance == .cancelButton))
                switch p.platform {
                case .ios(let ios):
                    #expect(ios.swiftui.presentationDetents.count == p.detents.count)
                    #expect(ios.swiftui.presentationDetents.contains(ios.swiftui.selection))
                    #expect((ios.swiftui.presentationDragIndicator == .visible) == ios.prefersGrabberVisible)
                    #expect(ios.swiftui.presentationCornerRadius == ios.preferredCornerRadius)
                    if ios.isModalInPresentation {
                        #expect(!ios.dismissal.swipe && !ios.dismissal.tapScrim && !ios.dismissal.requiresDelegate)
                    } else {
                        #expect(ios.dismissal.swipe == p.swipeToDismiss && ios.dismissal.tapScrim == p.tapScrimToDismiss)
                        #expect(ios.dismissal.requiresDelegate == (p.swipeToDismiss != p.tapScrimToDismiss))
                    }
                case .android(let android):
                    #expect(android.sheetGesturesEnabled && android.shouldDismissOnBackPress && android.dragHandle)
                    #expect(android.properties.shouldDismissOnBackPress && android.properties.shouldDismissOnClickOutside == p.tapScrimToDismiss)
                    #expect(android.confirmValueChangeRequiresDialog == (android.confirmValueChange.hidden == .confirm))
                    // A sheet nothing else closes is left through the dialog (Back always offers a way out).
                    if !p.swipeToDismiss && !p.tapScrimToDismiss && p.dismissAffordance == .none {
                        #expect(android.confirmValueChange.hidden == .confirm)
                    }
                    #expect(android.skipPartiallyExpanded == !(p.detents.contains { $0.id == .medium } && p.detents.contains { $0.id == .large }))
                }
            }
        }
    }

    /// The same input gives byte-identical output, however the dictionaries were filled.
    @Test func sameInputGivesByteIdenticalOutput() {
        for seed in Self.seeds {
            let c = Generator.make(seed: seed)
            let first = SheetPolicy.decide(catalog: c.catalog, state: c.state, context: c.context, now: Fixtures.now).jsonBytes()
            let second = SheetPolicy.decide(catalog: c.catalog, state: c.state, context: c.context, now: Fixtures.now).jsonBytes()
            #expect(first == second)
            // Same facts, inserted in the reverse order.
            let catalog = Catalog(c.definitions.reversed())
            var state = UserState(stack: c.state.stack)
            for (key, value) in c.state.containers.sorted(by: { $0.key > $1.key }) { state.containers[key] = value }
            for (key, value) in c.state.latches.sorted(by: { $0.key > $1.key }) { state.latches[key] = value }
            for (key, value) in c.state.contentHeights.sorted(by: { $0.key > $1.key }) { state.contentHeights[key] = value }
            #expect(SheetPolicy.decide(catalog: catalog, state: state, context: c.context, now: Fixtures.now).jsonBytes() == first)
        }
    }

    /// Every decision is valid JSON with the members in the documented order.
    @Test func jsonIsValidAndOrdered() throws {
        for (_, decision) in Self.cases().prefix(500) {
            let bytes = decision.jsonBytes()
            _ = try JSONSerialization.jsonObject(with: Data(bytes))
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix(#"{"present":"#))
            let order = [#""reason":"#, #""stack":"#, #""yielded":"#, #""trace":"#].compactMap { text.range(of: $0)?.lowerBound }
            #expect(order.count == 4 && order == order.sorted())
        }
    }

    /// A count report at or below the last applied seq leaves the state untouched, and dismissals never change counts.
    @Test func staleReportsAndDismissalsLeaveCountsAlone() {
        for seed in Self.seeds.prefix(1000) {
            let c = Generator.make(seed: seed)
            var rng = SplitMix64(seed: seed ^ 0xABCD)
            for (key, stored) in c.state.containers {
                guard let seq = stored.seq else { continue }
                var state = c.state
                let effect = SheetPolicy.apply(
                    .countReported(
                        containerId: key.containerId, filter: key.filter, count: rng.int(in: 0...9),
                        seq: seq - rng.int(in: 0...2)),
                    to: &state, catalog: c.catalog, now: Fixtures.now)
                #expect(!effect.applied && effect.count == stored.count && state == c.state)
            }
            for sheet in c.definitions {
                var state = c.state
                let effect = SheetPolicy.apply(.sheetDismissed(sheetId: sheet.id, method: .swipe), to: &state, catalog: c.catalog, now: Fixtures.now)
                #expect(state.containers == c.state.containers)
                #expect(effect.latched == (sheet.kind == .cards && sheet.containerKey != nil))
                #expect(!state.stack.contains { $0.sheetId == sheet.id })
                if effect.latched {
                    let decision = SheetPolicy.decide(catalog: c.catalog, state: state, context: c.context, now: Fixtures.now)
                    #expect(!decision.stack.contains { $0.id == sheet.id })
                }
            }
        }
    }
}
