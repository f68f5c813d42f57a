/// The Prometheus text exposition format (version 0.0.4), written family by family: a `# HELP` and
/// `# TYPE` header, then its samples with escaped label values. Serve with
/// `Content-Type: text/plain; version=0.0.4; charset=utf-8`.
public struct PrometheusText: Sendable {
    public enum MetricType: String, Sendable {
        case counter, gauge, histogram
    }

    /// What was written so far, ending in a newline once anything was.
    public private(set) var text: String

    public init(reservingCapacity capacity: Int = 1024) {
        text = ""
        text.reserveCapacity(capacity)
    }

    /// Starts a family: its help line and type.
    public mutating func family(_ name: String, type: MetricType, help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type.rawValue)\n"
    }

    /// One sample line: `name{label="value",…} value`.
    public mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Int) {
        sample(name, labels, String(value))
    }

    /// One sample line with a value already formatted (e.g. `seconds`).
    public mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{"
            for (i, (label, labelValue)) in labels.enumerated() {
                if i > 0 { text += "," }
                text += label + "=\"" + Self.escape(labelValue) + "\""
            }
            text += "}"
        }
        text += " " + value + "\n"
    }

    /// Microseconds as a decimal number of seconds without exponent ("0.0005", "2.5", "12.345678").
    public static func seconds(_ micros: Int) -> String {
        let whole = micros / 1_000_000
        var frac = micros % 1_000_000
        if frac == 0 { return String(whole) }
        var digits = 6
        while frac % 10 == 0 {
            frac /= 10
            digits -= 1
        }
        let f = String(frac)
        return "\(whole)." + String(repeating: "0", count: digits - f.count) + f
    }

    /// A label value escaped: backslash, double quote and line feed.
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
