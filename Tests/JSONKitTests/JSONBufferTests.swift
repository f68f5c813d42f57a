import JSONKit
import TestSupport
import Testing

/// `JSONBuffer` writes the bytes `JSONWriter` writes for the same values, whatever its starting capacity.
struct JSONBufferTests {
    private func text(_ out: borrowing JSONBuffer) -> String { String(decoding: out.bytes, as: UTF8.self) }

    /// Every string, escaped or not, at every offset of a short and a long string (the word-at-a-time
    /// scan and its tail), comes out as `JSONWriter` writes it.
    @Test func stringsMatchTheWriterAtEveryOffset() {
        let specials = ["\"", "\\", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{00}", "\u{1F}"]
        let fillers = ["a", "~", " ", "\u{7F}", "é", "🎉"]
        for filler in fillers {
            for length in 0...19 {
                var inputs = [String(repeating: filler, count: length)]
                for offset in 0..<length {
                    for special in specials {
                        var characters = Array(repeating: filler, count: length)
                        characters[offset] = special
                        inputs.append(characters.joined())
                    }
                }
                for input in inputs {
                    var out = JSONBuffer(capacity: 0)
                    out.string(input)
                    #expect(text(out) == String(decoding: JSONWriter.encode(input), as: UTF8.self))
                }
            }
        }
    }

    /// Integers and doubles print exactly as the writer prints them, extremes and non-finite values included.
    @Test func numbersMatchTheWriter() {
        let integers = [0, 7, -7, 10, -10, 99, 100, 1_234_567_890, Int.max, Int.min, Int.max - 1, Int.min + 1]
        for value in integers {
            var out = JSONBuffer(capacity: 0)
            out.int(value)
            #expect(text(out) == String(value))
        }
        let doubles = [
            320.0, 412.5, -0.0, 0.1, 1e-05, 9_007_199_254_740_992.0, 1e20, -56.0, .nan, .infinity, -.infinity, 0.3,
        ]
        for value in doubles {
            var out = JSONBuffer(capacity: 0)
            out.double(value)
            #expect(text(out) == String(decoding: JSONWriter.encode(value), as: UTF8.self))
        }
        var optional = JSONBuffer(capacity: 0)
        optional.double(nil as Double?)
        optional.append(UInt8(ascii: ","))
        optional.string(nil as String?)
        optional.append(UInt8(ascii: ","))
        optional.safeString(nil as String?)
        #expect(text(optional) == "null,null,null")
    }

    /// A range written earlier is appended again byte for byte, growing the buffer when it must
    /// (the copy's source moves with the storage).
    @Test func appendsACopyOfARangeWrittenEarlier() {
        var out = JSONBuffer(capacity: 0)
        out.append("[")
        let start = out.count
        out.string("héllo \"world\"")
        let range = start..<out.count
        for _ in 0..<40 {
            out.append(UInt8(ascii: ","))
            out.appendCopy(of: range)
        }
        out.append("]")
        let expected = "[" + Array(repeating: "\"héllo \\\"world\\\"\"", count: 41).joined(separator: ",") + "]"
        #expect(text(out) == expected)
    }

    /// A document many times its starting capacity, written through every kind of append, keeps every
    /// byte as it grows (each append can land on a capacity boundary).
    @Test func growsPastItsCapacityWithoutLosingBytes() {
        for capacity in [0, 1, 16, 17, 100] {
            var out = JSONBuffer(capacity: capacity)
            var writer = JSONWriter(reservingCapacity: 0)
            out.append(UInt8(ascii: "["))
            writer.array { a in
                for index in 0..<400 {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    switch index % 6 {
                    case 0:
                        out.int(index * 1_000_003)
                        a.element(index * 1_000_003)
                    case 1:
                        let string = String(repeating: "x\"y", count: index % 23)
                        out.string(string)
                        a.element(string)
                    case 2:
                        out.bool(index % 4 == 0)
                        a.element(index % 4 == 0)
                    case 3:
                        out.double(Double(index) / 8)
                        a.element(Double(index) / 8)
                    case 4:
                        out.safeString("content")
                        a.element("content")
                    default:
                        out.append("null")
                        a.null()
                    }
                }
            }
            out.append(UInt8(ascii: "]"))
            #expect(out.count == writer.bytes.count)
            #expect(out.bytes == writer.bytes)
        }
    }

    /// Bytes rendered elsewhere are copied as they are, and a `JSONWriter` takes a rendered value with
    /// its comma.
    @Test func appendsRenderedBytes() {
        var inner = JSONBuffer(capacity: 4)
        inner.append("{\"a\":")
        inner.int(1)
        inner.append(UInt8(ascii: "}"))
        let rendered = inner.bytes
        var out = JSONBuffer(capacity: 2)
        out.append(rendered)
        out.append([UInt8]())
        #expect(text(out) == #"{"a":1}"#)

        var writer = JSONWriter()
        writer.object { o in
            o.member("first", 0)
            o.key("second")
            o.json(rendered)
            o.arrayMember("list") { a in
                a.json(rendered)
                a.json(rendered)
            }
        }
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"first":0,"second":{"a":1},"list":[{"a":1},{"a":1}]}"#)
    }
}
