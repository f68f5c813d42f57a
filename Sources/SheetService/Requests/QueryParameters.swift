import MicroHTTP
import SheetPolicy
import SheetWire

/// The query of a listing route, read in one pass: each known parameter's value goes to its reader,
/// which keeps it or says why it is invalid; any other name is invalid once. Every problem found is
/// one 400 naming each parameter.
struct QueryParameters {
    /// Reads a value (the first one given for the name) and keeps it, or returns why it is invalid.
    typealias Reader = (String?) -> String?

    /// Reads `request`'s query with `readers` (known names, in the order they are listed in messages).
    static func read(_ request: HTTPRequest, _ readers: KeyValuePairs<String, Reader>) throws(Problem) {
        var invalid: [(name: String, reason: String)] = []
        var seen: Set<String> = []
        for name in request.queryNames() {
            // One rule everywhere (as on the decision routes): a repeated parameter is refused, never
            // silently read as its first value.
            guard seen.insert(name).inserted else {
                if !invalid.contains(where: { $0.name == name }) { invalid.append((name, "is given more than once")) }
                continue
            }
            if let reader = readers.first(where: { $0.key == name })?.value {
                if let reason = reader(request.query(name)) { invalid.append((name, reason)) }
            } else if !invalid.contains(where: { $0.name == name }) {
                invalid.append((name, "is not a known parameter (\(readers.map(\.key).joined(separator: ", ")))"))
            }
        }
        if !invalid.isEmpty { throw Problems.invalidParams(invalid) }
    }

    /// A whole number in `range` (a page size, a sample size).
    static func wholeNumber(_ range: ClosedRange<Int>, _ keep: @escaping (Int) -> Void) -> Reader {
        { text in
            guard let text, let n = Int(text), range.contains(n) else {
                return "must be a whole number from \(range.lowerBound) to \(range.upperBound)"
            }
            keep(n)
            return nil
        }
    }

    /// An RFC 3339 date-time (finer than milliseconds rounds up), kept with its text as given.
    static func dateTime(_ keep: @escaping ((text: String, time: Timestamp)) -> Void) -> Reader {
        { text in
            guard let text, let time = Timestamp(rfc3339: text, finerFraction: .roundUp) else {
                return "must be an RFC 3339 date-time such as 2026-12-01T00:00:00Z"
            }
            keep((text, time))
            return nil
        }
    }

    /// An identifier (a sheet or user id to start after).
    static func identifier(_ keep: @escaping (String) -> Void) -> Reader {
        { text in
            guard let text, Identifier.isValid(text) else { return Identifier.rule }
            keep(text)
            return nil
        }
    }
}
