import JSONKit
import Testing

private func read(_ text: String) throws(JSONReadError) -> JSONValue { try JSONReader.read(Array(text.utf8)) }

private func failure(_ bytes: [UInt8], reader: JSONReader = JSONReader()) -> JSONReadError? {
    do {
        _ = try reader.read(bytes)
        return nil
    } catch {
        return error
    }
}

private func failure(_ text: String) -> JSONReadError? { failure(Array(text.utf8)) }

struct JSONReaderTests {
    /// Every kind of value reads as the node of its kind.
    @Test func readsEveryKindOfValue() throws {
        let value = try read(#" {"i":1,"f":1.5,"e":1e2,"s":"x","n":null,"t":true,"u":false,"o":{"a":[false,[]]},"big":1e19} "#)
        #expect(
            value
                == .object([
                    "i": .integer(1), "f": .number(1.5), "e": .integer(100), "s": .string("x"), "n": .null, "t": .bool(true),
                    "u": .bool(false), "o": .object(["a": .array([.bool(false), .array([])])]), "big": .largeInteger(1e19),
                ]))
        #expect(try read("[]") == .array([]))
        #expect(try read("{}") == .object([:]))
        #expect(try read("\"\"") == .string(""))
        #expect(try read("\t\r\n 0 \n") == .integer(0))
    }

    /// A number is classified by what its decimal text denotes, exactly: never rounded into an integer.
    @Test(arguments: [
        ("0", JSONValue.integer(0)), ("-0", .integer(0)), ("0.000", .integer(0)), ("0e99999", .integer(0)),
        ("1.0", .integer(1)), ("1.50e1", .integer(15)), ("100e-2", .integer(1)), ("12300e-2", .integer(123)),
        ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
        ("9223372036854775808", .largeInteger(0x1p63)), ("-9223372036854775809", .largeInteger(-0x1p63)),
        ("1e20", .largeInteger(1e20)), ("1e400", .largeInteger(.infinity)), ("-1e400", .largeInteger(-.infinity)),
        ("1e-400", .number(0)), ("2.9999999999999999999", .number(3)), ("1.5", .number(1.5)), ("-0.25", .number(-0.25)),
        ("123456789012345678901234567890", .largeInteger(1.2345678901234568e29)),
        ("1e999999999999999999999999", .largeInteger(.infinity)), ("1e-999999999999999999999999", .number(0)),
        ("10000000000000000000e-1", .integer(1_000_000_000_000_000_000)),
    ])
    func classifiesNumbersExactly(_ text: String, _ expected: JSONValue) throws {
        #expect(try read(text) == expected)
    }

    /// Strings: escapes decoded, surrogate pairs combined, UTF-8 passed through.
    @Test(arguments: [
        (#""a\"b\\c\/d\b\f\n\r\t""#, "a\"b\\c/d\u{08}\u{0C}\n\r\t"),
        (#""\u00e9\u20AC\ud83c\udf89""#, "é€🎉"), ("\"é€🎉\"", "é€🎉"), (#""\u0000""#, "\u{0}"),
        (#""x\u0041y""#, "xAy"),
    ])
    func decodesStrings(_ text: String, _ expected: String) throws {
        #expect(try read(text) == .string(expected))
    }

    /// What RFC 8259 does not allow, and what it leaves to the reader, is refused with a reason.
    @Test(arguments: [
        ("", JSONReadError.Reason.empty),
        ("  ", .empty),
        (#"{"a":1,}"#, .trailingComma(before: "}")),
        ("[1,]", .trailingComma(before: "]")),
        (#"{"a":1,"a":2}"#, .duplicateMember("a")),
        (#"{"count":1,"c\u006funt":2}"#, .duplicateMember("count")),
        ("[1 2]", .unexpected(found: "'2'", expected: "',' or ']'")),
        (#"{"a" 1}"#, .unexpected(found: "'1'", expected: "':' after a member name")),
        ("{'a':1}", .unexpected(found: "'''", expected: "a member name in double quotes")),
        ("NaN", .unexpected(found: "'NaN'", expected: "a value")),
        ("[Infinity]", .unexpected(found: "'Infinity'", expected: "a value")),
        ("-Infinity", .unexpected(found: "'Infinity'", expected: "a digit")),
        ("tru", .unexpectedEnd(expected: "'true'")),
        ("trux", .unexpected(found: "'trux'", expected: "a value")),
        ("007", .leadingZero), ("-01", .leadingZero),
        ("0x10", .trailingContent(found: "'x10'")),
        ("1.", .unexpectedEnd(expected: "a digit after '.'")),
        (".5", .unexpected(found: "'.'", expected: "a value")),
        ("1e", .unexpectedEnd(expected: "a digit in the exponent")),
        ("+1", .unexpected(found: "'+'", expected: "a value")),
        (#"{"a":1}{"a":2}"#, .trailingContent(found: "'{'")),
        (#"{"a":1} x"#, .trailingContent(found: "'x'")),
        ("[1] /* c */", .trailingContent(found: "'/'")),
        (#""\ud800""#, .loneSurrogate(0xD800)),
        (#""\udc00""#, .loneSurrogate(0xDC00)),
        (#""\ud800\u0041""#, .loneSurrogate(0xD800)),
        (#""\ud800x""#, .loneSurrogate(0xD800)),
        (#""\x""#, .invalidEscape("\\x")),
        (#""\u12G4""#, .invalidEscape("\\u12G4")),
        ("\"a\nb\"", .controlCharacter(0x0A)),
        ("\"a\u{0}b\"", .controlCharacter(0)),
        (#""abc"#, .unexpectedEnd(expected: "'\"' to close a string")),
        ("[", .unexpectedEnd(expected: "a value")),
        (#"{"a":"#, .unexpectedEnd(expected: "a value")),
        ("{", .unexpectedEnd(expected: "a member name in double quotes")),
    ])
    func refuses(_ text: String, _ reason: JSONReadError.Reason) {
        #expect(failure(text)?.reason == reason, "\(text)")
    }

    /// Invalid UTF-8 anywhere in a string is refused (overlongs, surrogates, truncated sequences, > U+10FFFF).
    @Test(
        arguments: [
            [0xFF], [0xC0, 0xAE], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF5, 0x80, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xF0, 0x9F, 0x8E],
        ] as [[UInt8]])
    func refusesInvalidUTF8(_ sequence: [UInt8]) {
        #expect(failure([0x22] + sequence + [0x22])?.reason == .invalidUTF8)
        #expect(failure([0x22] + sequence)?.reason == .invalidUTF8)
    }

    /// Outside strings, non-ASCII bytes, a byte order mark and UTF-16 are refused by name.
    @Test func refusesOtherEncodings() {
        #expect(failure([0xEF, 0xBB, 0xBF] + Array("{}".utf8))?.reason == .byteOrderMark)
        #expect(failure([0x7B, 0x00, 0x7D, 0x00])?.reason == .unexpected(found: "a NUL byte", expected: "a member name in double quotes"))
        #expect(failure([0xFF, 0xFE, 0x7B, 0x00])?.reason == .unexpected(found: "a non-ASCII character", expected: "a value"))
    }

    /// Nesting is limited (32 levels by default), and the limit is checked before going deeper.
    @Test func limitsTheDepth() throws {
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(try read(ok) != .null)
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(failure(deep)?.reason == .tooDeep(limit: 32))
        let objects = String(repeating: #"{"a":"#, count: 40) + "1" + String(repeating: "}", count: 40)
        #expect(failure(objects)?.reason == .tooDeep(limit: 32))
        #expect(failure(String(repeating: "[", count: 100_000))?.reason == .tooDeep(limit: 32))
        #expect(failure(Array("[[1]]".utf8), reader: JSONReader(maximumDepth: 1))?.reason == .tooDeep(limit: 1))
    }

    /// With a member limit, one member more is refused where it starts, nested objects included.
    @Test func limitsMembersPerObject() throws {
        let reader = JSONReader(maximumMembers: 3)
        func object(_ n: Int) -> [UInt8] { Array(("{" + (0..<n).map { #""k\#($0)":[1]"# }.joined(separator: ",") + "}").utf8) }
        #expect(throws: Never.self) { try reader.read(object(3)) }
        let refused = failure(object(4), reader: reader)
        #expect(refused?.reason == .tooManyMembers(limit: 3))
        #expect(refused?.column == 29, "at the fourth member's name")
        #expect(failure(Array(#"[{"a":{"b":1,"c":2,"d":3,"e":4}}]"#.utf8), reader: reader)?.reason == .tooManyMembers(limit: 3))
        #expect(failure(object(100_000))?.reason == nil, "no limit by default")
    }

    /// Overlong numbers are refused before any conversion.
    @Test func limitsNumberLength() throws {
        #expect(try read(String(repeating: "1", count: 256)) != .null)
        #expect(failure(String(repeating: "1", count: 257))?.reason == .numberTooLong(limit: 256))
        #expect(failure("0." + String(repeating: "0", count: 300) + "1")?.reason == .numberTooLong(limit: 256))
    }

    /// Errors say where in lines and characters (not bytes), deterministically.
    @Test func errorsNameLineAndColumn() {
        let error = failure("{\n  \"é\": 1,\n  \"b\": x\n}")
        #expect(error?.line == 3)
        #expect(error?.column == 8)
        #expect(error?.description == "expected a value, found 'x' (line 3, column 8)")
        #expect(failure(#"{"a":1,"a":2}"#)?.description == #"the member "a" appears more than once in the same object (line 1, column 8)"#)
        #expect(failure("[1,]")?.description == "a trailing comma before ']' (line 1, column 4)")
    }
}
