/// The request methods the router knows. Anything else is answered 405 (known path) or 404.
public enum HTTPMethod: String, Sendable, CaseIterable {
    case GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS

    /// Position in `allCases`; indexes the per-node handler table.
    @inline(__always) var ordinal: Int {
        switch self {
        case .GET: 0
        case .HEAD: 1
        case .POST: 2
        case .PUT: 3
        case .DELETE: 4
        case .PATCH: 5
        case .OPTIONS: 6
        }
    }

    /// Parses the method token MHD hands over, without creating a String.
    static func parse(_ p: UnsafePointer<CChar>) -> HTTPMethod? {
        func eq(_ lit: StaticString) -> Bool {
            lit.withUTF8Buffer { l in
                var i = 0
                while i < l.count {
                    if UInt8(bitPattern: p[i]) != l[i] { return false }
                    i += 1
                }
                return p[i] == 0
            }
        }
        switch UInt8(bitPattern: p[0]) {
        case UInt8(ascii: "G"): return eq("GET") ? .GET : nil
        case UInt8(ascii: "H"): return eq("HEAD") ? .HEAD : nil
        case UInt8(ascii: "P"): return eq("POST") ? .POST : eq("PUT") ? .PUT : eq("PATCH") ? .PATCH : nil
        case UInt8(ascii: "D"): return eq("DELETE") ? .DELETE : nil
        case UInt8(ascii: "O"): return eq("OPTIONS") ? .OPTIONS : nil
        default: return nil
        }
    }
}
