import Observation
import SheetdClient

/// The client's HTTP exchanges, newest last, for the screen (what `onExchange` reports; never the token).
@MainActor @Observable
final class ExchangeLog {
    struct Entry: Identifiable {
        let id: Int
        let line: String
    }

    private(set) var entries: [Entry] = []

    func append(_ exchange: SheetdConfiguration.Exchange) {
        let status = exchange.status.map(String.init) ?? "no answer"
        entries.append(Entry(id: entries.count, line: "\(exchange.method) \(exchange.target) → \(status)"))
        if entries.count > 50 { entries.removeFirst() }
    }
}
