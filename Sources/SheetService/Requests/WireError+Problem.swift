import JSONKit
import MicroHTTP
import SheetPolicy
import SheetWire

extension Problems {
    /// A request body the wire format refuses: 400 naming each invalid member, or saying why the
    /// document cannot be read.
    static func wire(_ error: WireError) -> Problem {
        error.invalidParams.isEmpty ? badRequest(error.detail) : invalidParams(error.invalidParams)
    }

    /// Runs a wire decoder; what it refuses is the route's 400.
    static func decoding<T>(_ decode: () throws(WireError) -> T) throws(Problem) -> T {
        do {
            return try decode()
        } catch {
            throw wire(error)
        }
    }
}

/// Request bodies (and stored or configured documents) as JSON objects (`JSONBody`), refused as
/// problems; and the `charset` a request declares.
enum RequestBody {
    /// Members one object of a request body may have (`JSONBody.maximumMembers`).
    static let maximumMembers = JSONBody.maximumMembers

    /// Parses a body into an object, or a 400 problem that says what is wrong with it and where.
    static func object(_ body: [UInt8], subject: String = "the request body") throws(Problem) -> [String: JSONValue] {
        try Problems.decoding { () throws(WireError) in try JSONBody.object(body, subject: subject) }
    }

    /// The `charset` parameter of a `Content-Type`, when it names something other than UTF-8.
    static func foreignCharset(_ contentType: String) -> String? {
        guard contentType.utf8.contains(UInt8(ascii: ";")) else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmed().lowercased() == "charset" else { continue }
            var value = pair[1].trimmed()
            if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return value.lowercased() == "utf-8" || value.lowercased() == "utf8" ? nil : value
        }
        return nil
    }
}

extension SheetDefinition {
    /// Validates one catalog definition (`SheetDefinition.decode`), refused as a 400 problem.
    static func parse(_ object: [String: JSONValue], pathId: String?) throws(Problem) -> SheetDefinition {
        try Problems.decoding { () throws(WireError) in try SheetDefinition.decode(object, pathId: pathId) }
    }

    /// Refuses what the design documents forbid (writes only: stored definitions keep loading).
    func checkedAgainstDesignRules() throws(Problem) -> SheetDefinition {
        try Problems.decoding { () throws(WireError) in try checkingDesignRules() }
    }
}
