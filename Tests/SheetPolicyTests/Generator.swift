import SheetPolicy
import TestSupport

/// One generated input to the policy.
struct GeneratedCase {
    var catalog: Catalog
    var definitions: [SheetDefinition]
    var state: UserState
    var context: ClientContext
}

/// Generates small catalogs over two screens and tabs, states built by folding random events
/// (plus a little raw damage: unknown stack entries, stray latches), and random contexts.
enum Generator {
    static let screens = ["home", "settings"]
    static let tabs: [String?] = [nil, "a", "b"]
    static let containers = ["c1", "c2"]
    static let filters = ["", "f"]

    static func make(seed: UInt64) -> GeneratedCase {
        var rng = SplitMix64(seed: seed)
        var definitions: [SheetDefinition] = []
        for index in 0..<rng.int(in: 1...8) {
            let kind = rng.pick(SheetKind.allCases)
            let style = rng.pick(SheetStyle.allCases)
            let filter = rng.pick(filters)
            definitions.append(
                SheetDefinition(
                    id: "s\(index)", kind: kind, size: rng.maybe(60) { $0.pick(SheetSize.allCases) }, style: style,
                    title: style == .strict ? "Title \(index)" : rng.maybe(30) { _ in "T\"\(index)\n" },
                    screen: rng.pick(screens), tab: rng.pick(tabs),
                    containerId: kind == .cards ? rng.pick(containers) : nil,
                    containerFilter: kind == .cards && !filter.isEmpty ? filter : nil,
                    priority: rng.int(in: -1...3), inputCount: rng.int(in: 1...3),
                    confirmDismissWhenDirty: rng.chance(50),
                    primaryButton: rng.maybe(40) { _ in PrimaryButton(label: "Go \(index)") },
                    nonModalUpTo: rng.maybe(20) { $0.pick([DetentID.medium, .large]) },
                    dismissAffordance: rng.maybe(15) { $0.pick(DismissAffordance.allCases) },
                    swipeToDismiss: rng.maybe(15) { $0.chance(50) },
                    tapScrimToDismiss: rng.maybe(15) { $0.chance(50) },
                    expandsOnScrollToEdge: rng.maybe(15) { $0.chance(50) },
                    cornerRadius: rng.maybe(15) { Double($0.int(in: 0...64)) / 2 }))
        }
        let catalog = Catalog(definitions)
        let ids = definitions.map(\.id)

        var state = UserState()
        for _ in 0..<rng.int(in: 0...30) {
            let event: UserEvent
            switch rng.int(in: 0...9) {
            case 0...3:
                event = .countReported(
                    containerId: rng.pick(containers), filter: rng.pick(filters), count: rng.int(in: 0...3),
                    seq: rng.maybe(50) { $0.int(in: 0...12) })
            case 4...5:
                event = .sheetDismissed(sheetId: rng.pick(ids), method: rng.pick(DismissMethod.allCases))
            case 6...8:
                event = .sheetOpened(
                    sheetId: rng.pick(ids), mode: rng.pick(OpenMode.allCases),
                    parentSheetId: rng.maybe(30) { $0.pick(ids) })
            default:
                event = .contentHeightMeasured(
                    sheetId: rng.pick(ids), platform: rng.pick(Platform.allCases), height: Double(rng.int(in: 100...1200)) / 2)
            }
            _ = SheetPolicy.apply(event, to: &state, catalog: catalog, now: Fixtures.now)
        }
        // Raw damage the store could hold: entries of removed sheets, latches the events never made.
        if rng.chance(20) { state.stack.insert(StackEntry(sheetId: "gone", mode: .push), at: rng.int(in: 0...state.stack.count)) }
        if rng.chance(20) { state.stack.append(StackEntry(sheetId: rng.pick(ids), mode: rng.pick(OpenMode.allCases))) }
        if rng.chance(20) { state.latches[rng.pick(ids)] = rng.int(in: 0...3) }

        let context = ClientContext(
            screen: rng.pick(screens), tab: rng.pick(tabs), platform: rng.pick(Platform.allCases),
            idiom: rng.pick(Idiom.allCases), orientation: rng.pick(Orientation.allCases),
            keyboardVisible: rng.chance(30), dirty: rng.chance(30),
            viewportHeight: rng.maybe(50) { Double($0.int(in: 300...900)) })
        return GeneratedCase(catalog: catalog, definitions: definitions, state: state, context: context)
    }
}
