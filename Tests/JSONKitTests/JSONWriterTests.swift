import Foundation
import JSONKit
import TestSupport
import Testing

struct JSONWriterTests {
    /// Strings are escaped as JSON requires: quotes, backslashes, and every control character.
    @Test(arguments: [
        ("plain", #""plain""#),
        ("say \"hi\"", #""say \"hi\"""#),
        ("back\\slash", #""back\\slash""#),
        ("line\nbreak\r\ttab", #""line\nbreak\r\ttab""#),
        ("\u{08}\u{0C}\u{00}\u{1F}", #""\b\f\u0000\u001f""#),
        ("snow ☃ and 🎉", "\"snow ☃ and 🎉\""),
        ("", #""""#),
    ])
    func escapesStrings(_ input: String, _ expected: String) {
        #expect(String(decoding: JSONWriter.encode(input), as: UTF8.self) == expected)
    }

    /// The word-at-a-time scan for characters to escape finds each of them at every offset of a
    /// long string (inside an eight-byte word and in the tail), and passes every other byte through,
    /// multi-byte UTF-8 included.
    @Test func escapesAtEveryOffset() {
        let specials: [(Character, String)] = [
            ("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{00}", #"\u0000"#), ("\u{1F}", #"\u001f"#),
        ]
        let fillers = ["a", "~", " ", "!", "#", "[", "]", "\u{7F}", "é"]
        for filler in fillers {
            for length in 1...19 {
                for offset in 0..<length {
                    for (special, escaped) in specials {
                        var input = Array(repeating: filler, count: length)
                        input[offset] = String(special)
                        let expected = "\"" + input.map { $0 == String(special) ? escaped : $0 }.joined() + "\""
                        #expect(String(decoding: JSONWriter.encode(input.joined()), as: UTF8.self) == expected)
                    }
                }
                let clean = String(repeating: filler, count: length)
                #expect(String(decoding: JSONWriter.encode(clean), as: UTF8.self) == "\"" + clean + "\"")
            }
        }
    }

    /// Numbers print deterministically; integral doubles have no fraction, non-finite ones are null.
    @Test(arguments: [
        (320.0, "320"), (412.5, "412.5"), (-0.0, "0"), (0.1, "0.1"), (1e-05, "1e-05"),
        (9_007_199_254_740_992.0, "9007199254740992.0"), (1e20, "1e+20"), (-56.0, "-56"),
        (Double.nan, "null"), (Double.infinity, "null"),
    ])
    func writesDoubles(_ value: Double, _ expected: String) {
        #expect(String(decoding: JSONWriter.encode(value), as: UTF8.self) == expected)
    }

    /// Integers print exactly, including the extremes.
    @Test(arguments: [0, 7, -7, 1_234_567_890, Int.max, Int.min])
    func writesIntegers(_ value: Int) {
        #expect(String(decoding: JSONWriter.encode(value), as: UTF8.self) == String(value))
    }

    /// Members keep their order, nesting puts commas in the right places, and nil writes null.
    @Test func writesNestedContainersInOrder() throws {
        var w = JSONWriter()
        w.object { o in
            o.member("z", 1)
            o.member("a", "x")
            o.arrayMember("list") { a in
                a.element(true)
                a.object { $0.member("k", nil as String?) }
                a.array { _ in }
                a.null()
            }
            o.objectMember("empty") { _ in }
            o.member("nums", [1.5, 2])
        }
        let text = String(decoding: w.bytes, as: UTF8.self)
        #expect(text == #"{"z":1,"a":"x","list":[true,{"k":null},[],null],"empty":{},"nums":[1.5,2]}"#)
        _ = try JSONSerialization.jsonObject(with: Data(w.bytes))
    }

    /// Every string survives a round trip through a standard JSON parser.
    @Test func roundTripsArbitraryStrings() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<500 {
            let scalars = (0..<rng.int(in: 0...20)).map { _ -> Character in
                let pick = rng.int(in: 0...4)
                let value: UInt32 =
                    switch pick {
                    case 0: UInt32(rng.int(in: 0...0x1F))
                    case 1: [0x22, 0x5C, 0x2F, 0x7F][rng.int(in: 0...3)]
                    case 2: UInt32(rng.int(in: 0x20...0x7E))
                    case 3: UInt32(rng.int(in: 0xA0...0xD7FF))
                    default: UInt32(rng.int(in: 0x1F300...0x1F6FF))
                    }
                return Character(Unicode.Scalar(value)!)
            }
            let string = String(scalars)
            let parsed = try JSONSerialization.jsonObject(with: Data(JSONWriter.encode([string])), options: []) as? [String]
            #expect(parsed == [string])
        }
    }
}
