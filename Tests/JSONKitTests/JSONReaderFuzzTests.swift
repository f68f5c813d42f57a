import Foundation
import JSONKit
import TestSupport
import Testing

/// Generated and mutated documents, seeded: the reader never traps, agrees with Python's `json`
/// module wherever both accept by RFC 8259's rules, and its time grows linearly with the input.
struct JSONReaderFuzzTests {
    static let seed: UInt64 = 0x5EED_0019

    /// Every input either reads or throws; where Python (made strict: no NaN, no duplicate members, no
    /// lone surrogates) accepts, the reader accepts the same value, unless one of its limits refused it.
    @Test func agreesWithPythonOnGeneratedAndMutatedInputs() throws {
        var rng = SplitMix64(seed: Self.seed)
        var inputs: [[UInt8]] = []
        while inputs.count < 30_000 {
            let document = Array(Generator.document(&rng).utf8)
            inputs.append(document)
            inputs.append(Generator.mutate(document, &rng))
            if rng.chance(30) { inputs.append(Generator.noise(&rng)) }
        }
        let python = try Python.canonical(inputs)
        try #require(python.count == inputs.count)
        var agreed = 0, bothRejected = 0, limited = 0
        for (index, input) in inputs.enumerated() {
            let ours: String?
            do {
                ours = Canonical.form(try JSONReader.read(input))
            } catch {
                switch error.reason {
                case .tooDeep, .numberTooLong: limited += 1; continue
                default: ours = nil
                }
            }
            let shown = String(decoding: input.prefix(300), as: UTF8.self)
            switch (ours, python[index]) {
            case (let a?, let b?):
                #expect(a == b, "value differs for \(shown.debugDescription): \(a) vs Python \(b)")
                agreed += 1
            case (nil, nil): bothRejected += 1
            case (let a?, nil): Issue.record("accepted what Python refuses: \(shown.debugDescription) -> \(a)")
            case (nil, let b?): Issue.record("refused what Python accepts: \(shown.debugDescription) -> \(b)")
            }
        }
        // The generator must exercise both sides, or the comparison proves little.
        #expect(agreed > 10_000)
        #expect(bothRejected > 5_000)
        print("JSON fuzz: \(inputs.count) inputs, \(agreed) accepted alike, \(bothRejected) refused alike, \(limited) over a limit")
    }

    /// Shapes that make naive parsers super-linear (nesting, long strings and escapes, many members,
    /// long numbers): the time for 8n bytes stays far below the 64x a quadratic reader would take.
    @Test(.serialized, arguments: Shape.allCases)
    func readsInLinearTime(_ shape: Shape) throws {
        let small = shape.document(units: 2_000), large = shape.document(units: 16_000)
        let ratio = Self.bestTime(large) / Self.bestTime(small)
        let bytesRatio = Double(large.count) / Double(small.count)
        #expect(ratio < bytesRatio * 3, "\(shape): \(small.count) -> \(large.count) bytes took \(ratio)x")
    }

    enum Shape: String, CaseIterable, Sendable {
        case nestedArrays, wideObject, longString, escapes, surrogatePairs, numbers, deepUnclosed, duplicateLate

        func document(units n: Int) -> [UInt8] {
            switch self {
            case .nestedArrays:
                let unit = String(repeating: "[", count: 30) + "1" + String(repeating: "]", count: 30)
                return Array(("[" + Array(repeating: unit, count: n / 10).joined(separator: ",") + "]").utf8)
            case .wideObject: return Array(("{" + (0..<n).map { "\"k\($0)\":[\($0),true,null]" }.joined(separator: ",") + "}").utf8)
            case .longString: return Array(("\"" + String(repeating: "abcdéfgh€🎉", count: n) + "\"").utf8)
            case .escapes: return Array(("\"" + String(repeating: #"\n\"\\\u00e9\/"#, count: n) + "\"").utf8)
            case .surrogatePairs: return Array(("\"" + String(repeating: #"\ud83c\udf89"#, count: n) + "\"").utf8)
            case .numbers:
                return Array(("[" + (0..<n).map { _ in "-123456789.123456789e-12,9223372036854775808,1e400" }.joined(separator: ",") + "]").utf8)
            case .deepUnclosed: return Array(String(repeating: "[", count: n * 10).utf8)
            case .duplicateLate: return Array(("{" + (0..<n).map { "\"k\($0)\":0" }.joined(separator: ",") + ",\"k0\":1}").utf8)
            }
        }
    }

    /// The best of several runs, in seconds of this thread's CPU time (so other work on the machine,
    /// which preempts the thread, does not count).
    static func bestTime(_ input: [UInt8]) -> Double {
        var best = Double.infinity
        for _ in 0..<7 {
            let start = threadCPUSeconds()
            _ = try? JSONReader.read(input)
            best = min(best, threadCPUSeconds() - start)
        }
        return max(best, 1e-6)
    }

    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// A value's canonical text, the same for the reader's values and Python's (see `Python.script`).
enum Canonical {
    static func form(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return "i:\(i)"
        case .largeInteger(let d): return "L:" + bits(d)
        case .number(let d): return "n:" + bits(d)
        case .string(let s): return "s:" + hex(Array(s.utf8))
        case .array(let items): return "[" + items.map(form).joined(separator: ",") + "]"
        case .object(let members):
            let sorted = members.map { (hex(Array($0.key.utf8)), form($0.value)) }.sorted { $0.0 < $1.0 }
            return "{" + sorted.map { "\($0.0):\($0.1)" }.joined(separator: ",") + "}"
        }
    }

    static func bits(_ d: Double) -> String {
        let h = String(d.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - h.count) + h
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0 >> 4, radix: 16) + String($0 & 0xF, radix: 16) }.joined()
    }
}

/// Python's json module over every input in one process: one line per input, the canonical form or `-`.
enum Python {
    static let script = #"""
        import base64, json, re, struct, sys
        sys.setrecursionlimit(10000)

        def bits(x):
            return struct.pack('>d', x).hex()

        def number(text):
            sign, ip, fp, ex = re.fullmatch(r'(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?', text).groups()
            digits = ip + (fp or '')
            ex = int(ex or 0)
            if digits.strip('0') == '':
                return ('i', 0)
            stripped = digits.rstrip('0')
            first = len(digits) - len(digits.lstrip('0'))
            last_place = len(ip) - len(stripped) + ex
            first_place = len(ip) - 1 - first + ex
            if last_place < 0:
                return ('n', bits(float(text)))
            if first_place <= 18:
                v = int(stripped) * 10 ** last_place
                v = -v if sign else v
                if -2 ** 63 <= v < 2 ** 63:
                    return ('i', v)
            return ('L', bits(float(text)))

        class Refused(Exception):
            pass

        def pairs(items):
            keys = [k for k, _ in items]
            if len(set(keys)) != len(keys):
                raise Refused()
            return ('obj', items)

        def constant(name):
            raise Refused()

        def canon(v):
            if v is None: return 'null'
            if v is True: return 'true'
            if v is False: return 'false'
            if isinstance(v, tuple) and v[0] == 'obj':
                members = sorted((k.encode('utf-8').hex(), canon(x)) for k, x in v[1])
                return '{' + ','.join(k + ':' + x for k, x in members) + '}'
            if isinstance(v, tuple):
                return '%s:%s' % v
            if isinstance(v, str): return 's:' + v.encode('utf-8').hex()
            if isinstance(v, list): return '[' + ','.join(canon(x) for x in v) + ']'
            raise Refused()

        for line in sys.stdin:
            data = base64.b64decode(line.strip())
            try:
                text = data.decode('utf-8')
                value = json.loads(text, object_pairs_hook=pairs, parse_int=number, parse_float=number, parse_constant=constant)
                print(canon(value))   # a lone surrogate fails to encode here: refused
            except (ValueError, Refused, RecursionError, UnicodeError):
                print('-')
        """#

    static func canonical(_ inputs: [[UInt8]]) throws -> [String?] {
        let directory = try TemporaryDirectory(prefix: "json-fuzz")
        defer { directory.remove() }
        let inputPath = directory.file("inputs.b64")
        let text = inputs.map { Data($0).base64EncodedString() }.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: inputPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let stdout = Pipe()
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
        process.standardOutput = stdout
        try process.run()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map { $0 == "-" ? nil : String($0) }
    }
}

/// Random JSON texts (every kind of value, escapes, number spellings, white space) and mutations.
enum Generator {
    static func document(_ rng: inout SplitMix64) -> String {
        var out = ""
        value(&rng, depth: rng.int(in: 0...6), into: &out)
        if rng.chance(10) { out = " \n\t" + out + "\r\n" }
        return out
    }

    static func value(_ rng: inout SplitMix64, depth: Int, into out: inout String) {
        let kind = depth > 0 ? rng.int(in: 0...9) : rng.int(in: 0...5)
        switch kind {
        case 0: out += rng.pick(["null", "true", "false"])
        case 1, 2: out += number(&rng)
        case 3, 4, 5: out += string(&rng)
        case 6, 7:
            out += "["
            for i in 0..<rng.int(in: 0...4) {
                if i > 0 { out += rng.pick([",", " , ", ",\n"]) }
                value(&rng, depth: depth - 1, into: &out)
            }
            out += "]"
        default:
            out += "{"
            var used: Set<String> = []
            for i in 0..<rng.int(in: 0...4) {
                var key = string(&rng)
                while used.contains(key) { key = string(&rng) }
                used.insert(key)
                if i > 0 { out += rng.pick([",", " ,", ", "]) }
                out += key + rng.pick([":", " : ", ":\t"])
                value(&rng, depth: depth - 1, into: &out)
            }
            out += "}"
        }
    }

    static func number(_ rng: inout SplitMix64) -> String {
        var s = rng.chance(30) ? "-" : ""
        s += rng.chance(20) ? "0" : String(rng.int(in: 1...9)) + digits(&rng, rng.int(in: 0...rng.pick([3, 20, 40])))
        if rng.chance(30) { s += "." + digits(&rng, rng.int(in: 1...rng.pick([3, 25]))) }
        if rng.chance(25) { s += rng.pick(["e", "E"]) + rng.pick(["", "+", "-"]) + String(rng.int(in: 0...rng.pick([3, 30, 400]))) }
        return s
    }

    static func digits(_ rng: inout SplitMix64, _ n: Int) -> String {
        String((0..<n).map { _ in Character(String(rng.chance(30) ? 0 : rng.int(in: 0...9))) })
    }

    static let pieces = [
        "a", "b", "key", " ", "é", "€", "🎉", "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\u0041", "\\u00e9",
        "\\u20ac", "\\ud83c\\udf89", "\\u0000", "\\uFFFF", "\u{7F}", "count", "\\b\\f\\r",
    ]

    static func string(_ rng: inout SplitMix64) -> String {
        "\"" + (0..<rng.int(in: 0...6)).map { _ in rng.pick(pieces) }.joined() + "\""
    }

    static let insertions: [[UInt8]] =
        [
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\ud800", "\\udc00", "0", "-", ".", "e",
            "NaN", "Infinity", "true", "nul", " ", "\n", "\u{0}", "\u{1F}", "/*", "'",
        ].map { Array($0.utf8) }
        + [[0xFF], [0xC0, 0xAE], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xEF, 0xBB, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0x80]]

    static func mutate(_ input: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var b = input
        for _ in 0..<rng.int(in: 1...3) {
            let at = rng.int(in: 0...b.count)
            switch rng.int(in: 0...6) {
            case 0: b.insert(contentsOf: rng.pick(insertions), at: at)
            case 1: if at < b.count { b.remove(at: at) }
            case 2: if at < b.count { b[at] = UInt8(truncatingIfNeeded: rng.next()) }
            case 3: b = Array(b.prefix(at))
            case 4:  // a chunk repeated: duplicate members, doubled commas
                let end = min(b.count, at + rng.int(in: 1...12))
                b.insert(contentsOf: Array(b[at..<end]), at: end)
            case 5:  // a trailing comma
                if let close = b.lastIndex(where: { $0 == UInt8(ascii: "}") || $0 == UInt8(ascii: "]") }) { b.insert(UInt8(ascii: ","), at: close) }
            default:  // wrap in nesting
                let n = rng.int(in: 1...40)
                b = Array(repeating: UInt8(ascii: "["), count: n) + b + Array(repeating: UInt8(ascii: "]"), count: n)
            }
        }
        return b
    }

    static func noise(_ rng: inout SplitMix64) -> [UInt8] {
        let alphabet = Array("{}[],:\"\\0123456789-+.eEtrufalsn \n".utf8)
        return (0..<rng.int(in: 0...24)).map { _ in rng.chance(95) ? rng.pick(alphabet) : UInt8(truncatingIfNeeded: rng.next()) }
    }
}
