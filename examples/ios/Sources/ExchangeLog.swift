import Combine
import SheetdClient

/// The client's HTTP exchanges, newest last, for the screen (what `onExchange` reports; never the token).
@MainActor
final class ExchangeLog: ObservableObject {
    struct Entry: Identifiable {
        let id: Int
        let line: String
    }

    @Published private(set) var entries: [Entry] = []
    private var next = 0

    func append(_ exchange: SheetdConfiguration.Exchange) {
        let status = exchange.status.map(String.init) ?? "no answer"
        next += 1
        entries.append(Entry(id: next, line: "\(exchange.method) \(exchange.target) → \(status)"))
        if entries.count > 50 { entries.removeFirst() }
    }
}
