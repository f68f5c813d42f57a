import SheetdClient
import SwiftUI

/// The accounts tab of the home screen: follows its decision live and presents what it says.
struct HomeView: View {
    let client: any SheetdClientProtocol
    let outbox: SheetdOutbox?
    @ObservedObject var log: ExchangeLog
    @State private var decision: SheetDecision?
    @State private var cards = 0
    @State private var failure: String?

    /// The decision's context, with the app's version and language so targeted sheets show.
    private let context = SheetContext(
        screen: "home", tab: "accounts", platform: .ios, appVersion: SheetContext.mainBundleAppVersion,
        locale: SheetContext.preferredLocale)

    var body: some View {
        NavigationStack {
            List {
                Section("Offers container") {
                    Stepper("Cards available: \(cards)", value: $cards, in: 0...9)
                        .onChange(of: cards) { count in Task { await report(count) } }
                }
                Section("Decision") {
                    Text(decision.map { "\($0.reason.rawValue)\($0.sheet.map { ": \($0.id)" } ?? "")" } ?? "waiting for the stream…")
                    if let failure { Text(failure).foregroundStyle(.red) }
                }
                Section("Exchanges") {
                    ForEach(log.entries.reversed()) { entry in
                        Text(entry.line).font(.caption.monospaced())
                    }
                }
            }
            .navigationTitle("Accounts")
        }
        .task { await follow() }
        .sheetd(decision, client: client, outbox: outbox, onError: { error in print("sheetd report failed: \(error)") }) { sheet in
            OfferCardSheet(sheet: sheet)
        }
    }

    /// The decision, live: the stream survives restarts and blips; it ends only on an error retrying
    /// cannot fix (shown).
    private func follow() async {
        do {
            for try await next in client.decisions(for: context) { decision = next }
        } catch {
            failure = "\(error)"
        }
    }

    /// Through the outbox when there is one: kept until the server has it, in order with the sheet's reports.
    private func report(_ count: Int) async {
        do {
            if let outbox {
                try await outbox.record(.count(container: "offers-home", count: count, seq: nil, filter: nil))
            } else {
                try await client.reportCount(count, container: "offers-home")
            }
        } catch {
            failure = "\(error)"
        }
    }
}
