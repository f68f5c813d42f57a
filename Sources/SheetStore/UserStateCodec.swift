public import SheetPolicy

/// A user's whole state as one value of bytes (format 1, described in `migrations/0002_user_state_rows.sql`,
/// with the campaign records of `migrations/0003_campaign.sql`), so that a backend stores and reads it as one row.
/// The campaign records are new tags of the same format: rows written before them decode unchanged.
///
/// The encoding is canonical: the same state always gives the same bytes (records sorted by key,
/// the stack bottom to top), so an unchanged state can be recognised and is never rewritten.
public enum UserStateCodec {
    static let version = UInt8(ascii: "1")

    /// The bytes of `state`; an empty state encodes as the version byte alone.
    public static func encode(_ state: UserState) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + 48 * (state.containers.count + state.latches.count + state.stack.count + state.contentHeights.count))
        out.append(version)
        for (key, value) in state.containers.sorted(by: { $0.key < $1.key }) {
            out.append(UInt8(ascii: "c"))
            field(key.containerId, &out)
            field(key.filter, &out)
            field(value.count, &out)
            if let seq = value.seq { field(seq, &out) } else { out.append(UInt8(ascii: "~")) }
        }
        for (sheetId, count) in state.latches.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            out.append(UInt8(ascii: "l"))
            field(sheetId, &out)
            field(count, &out)
        }
        for (position, entry) in state.stack.enumerated() {
            out.append(UInt8(ascii: "s"))
            field(position, &out)
            field(entry.sheetId, &out)
            field(entry.mode.rawValue, &out)
            if let replaced = entry.replacedSheetId { field(replaced, &out) } else { out.append(UInt8(ascii: "~")) }
        }
        for (key, height) in state.contentHeights.sorted(by: { $0.key < $1.key }) {
            out.append(UInt8(ascii: "h"))
            field(key.sheetId, &out)
            field(key.platform.rawValue, &out)
            // The shortest decimal that reads back as the same Double.
            field(height.description, &out)
        }
        let campaign = state.campaign
        for (sheetId, times) in campaign.impressions.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            out.append(UInt8(ascii: "i"))
            field(sheetId, &out)
            timeList(times, &out)
        }
        for (sheetId, total) in campaign.impressionTotals.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            out.append(UInt8(ascii: "t"))
            field(sheetId, &out)
            field(total, &out)
        }
        for (sheetId, time) in campaign.lastDismissals.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            out.append(UInt8(ascii: "d"))
            field(sheetId, &out)
            field(Int(time.millisecondsSince1970), &out)
        }
        for segment in campaign.segments {
            out.append(UInt8(ascii: "g"))
            field(segment, &out)
        }
        // Experiments (migrations/0007_experiments.sql): exposures and QA pins, new tags again.
        let experiments = state.experiments
        for (experimentId, exposure) in experiments.exposures.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            out.append(UInt8(ascii: "x"))
            field(experimentId, &out)
            field(exposure.arm, &out)
            field(Int(exposure.at.millisecondsSince1970), &out)
        }
        for (experimentId, arm) in experiments.pins.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            out.append(UInt8(ascii: "p"))
            field(experimentId, &out)
            field(arm, &out)
        }
        // The conversions each experiment counted for the user (the per-user cap), a tag of its own.
        for (experimentId, count) in experiments.conversions.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            out.append(UInt8(ascii: "v"))
            field(experimentId, &out)
            field(count, &out)
        }
        return out
    }

    /// The state in `bytes`.
    ///
    /// - Throws: `StoreError.failure` naming the byte offset when the bytes are not format 1.
    public static func decode(_ bytes: [UInt8]) throws(StoreError) -> UserState {
        var reader = Reader(bytes: bytes)
        guard reader.next() == version else { throw reader.malformed("unknown format") }
        var state = UserState()
        var stack: [(position: Int, entry: StackEntry)] = []
        // Collected, then made into the dictionary at its final size: inserting one by one regrows
        // and rehashes it at every power of two (most of a decode's work for a few containers).
        var containers: [(ContainerKey, ContainerCount)] = []
        while let tag = reader.next() {
            switch tag {
            case UInt8(ascii: "c"):
                if containers.isEmpty { containers.reserveCapacity(8) }
                let key = ContainerKey(containerId: try reader.string(), filter: try reader.string())
                containers.append(
                    (key, ContainerCount(count: try reader.integer(), seq: try reader.optional { r throws(StoreError) in try r.integer() })))
            case UInt8(ascii: "l"):
                let sheetId = try reader.string()
                state.latches[sheetId] = try reader.integer()
            case UInt8(ascii: "s"):
                let position = try reader.integer()
                let sheetId = try reader.string()
                guard let mode = OpenMode(rawValue: try reader.string()) else { throw reader.malformed("unknown stack mode") }
                let replaced = try reader.optional { r throws(StoreError) in try r.string() }
                stack.append((position, StackEntry(sheetId: sheetId, mode: mode, replacedSheetId: replaced)))
            case UInt8(ascii: "h"):
                let sheetId = try reader.string()
                guard let platform = Platform(rawValue: try reader.string()) else { throw reader.malformed("unknown platform") }
                guard let height = Double(try reader.string()) else { throw reader.malformed("height is not a number") }
                state.contentHeights[HeightKey(sheetId: sheetId, platform: platform)] = height
            case UInt8(ascii: "i"):
                let sheetId = try reader.string()
                state.campaign.impressions[sheetId] = try reader.timeList()
            case UInt8(ascii: "t"):
                let sheetId = try reader.string()
                state.campaign.impressionTotals[sheetId] = try reader.integer()
            case UInt8(ascii: "d"):
                let sheetId = try reader.string()
                state.campaign.lastDismissals[sheetId] = Timestamp(millisecondsSince1970: Int64(try reader.integer()))
            case UInt8(ascii: "g"):
                state.campaign.segments.append(try reader.string())
            case UInt8(ascii: "x"):
                let experimentId = try reader.string()
                let arm = try reader.string()
                state.experiments.exposures[experimentId] = ExperimentState.Exposure(
                    arm: arm, at: Timestamp(millisecondsSince1970: Int64(try reader.integer())))
            case UInt8(ascii: "p"):
                let experimentId = try reader.string()
                state.experiments.pins[experimentId] = try reader.string()
            case UInt8(ascii: "v"):
                let experimentId = try reader.string()
                state.experiments.conversions[experimentId] = try reader.integer()
            default:
                throw reader.malformed("unknown record")
            }
        }
        if !containers.isEmpty { state.containers = Dictionary(containers, uniquingKeysWith: { _, last in last }) }
        if !stack.isEmpty {
            // Written bottom to top, but rows converted from version 1 come in any order.
            if !zip(stack, stack.dropFirst()).allSatisfy({ $0.position < $1.position }) { stack.sort { $0.position < $1.position } }
            state.stack = stack.map(\.entry)
        }
        return state
    }

    // MARK: - Fields

    private static func field(_ text: String, _ out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            decimal(bytes.count, &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: bytes)
        }
    }

    private static func field(_ value: Int, _ out: inout [UInt8]) {
        decimal(decimalLength(value), &out)
        out.append(UInt8(ascii: ":"))
        decimal(value, &out)
    }

    /// The impression times as one field: decimal milliseconds joined by commas (written in place:
    /// this list is most of an often-shown sheet's row).
    private static func timeList(_ times: [Timestamp], _ out: inout [UInt8]) {
        var length = max(times.count - 1, 0)
        for time in times { length += decimalLength(Int(time.millisecondsSince1970)) }
        decimal(length, &out)
        out.append(UInt8(ascii: ":"))
        for (index, time) in times.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            decimal(Int(time.millisecondsSince1970), &out)
        }
    }

    /// How many bytes `decimal(value, _:)` writes.
    private static func decimalLength(_ value: Int) -> Int {
        var magnitude = value.magnitude
        var length = value < 0 ? 2 : 1
        while magnitude >= 10 {
            magnitude /= 10
            length += 1
        }
        return length
    }

    /// Writes the digits in place, last first, into room made for all of them at once.
    private static func decimal(_ value: Int, _ out: inout [UInt8]) {
        var end = out.count + decimalLength(value)
        out.append(contentsOf: repeatElement(UInt8(ascii: "-"), count: end - out.count))
        var magnitude = value.magnitude
        repeat {
            end -= 1
            out[end] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func next() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        func malformed(_ what: String) -> StoreError {
            .failure("malformed user state row (\(what) at byte \(max(offset - 1, 0)))")
        }

        /// The bytes of the next field.
        mutating func field() throws(StoreError) -> ArraySlice<UInt8> {
            var length = 0
            var digits = 0
            while true {
                guard let byte = next() else { throw malformed("truncated field") }
                if byte == UInt8(ascii: ":") && digits > 0 { break }
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 9 else { throw malformed("bad field length") }
                length = length * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
            }
            guard length <= bytes.count - offset else { throw malformed("truncated field") }
            defer { offset += length }
            return bytes[offset..<offset + length]
        }

        mutating func string() throws(StoreError) -> String {
            String(decoding: try field(), as: UTF8.self)
        }

        mutating func integer() throws(StoreError) -> Int {
            try Self.integer(try field(), malformed: malformed)
        }

        /// A field of decimal milliseconds joined by commas (empty: none).
        mutating func timeList() throws(StoreError) -> [Timestamp] {
            let list = try field()
            guard !list.isEmpty else { return [] }
            var times: [Timestamp] = []
            times.reserveCapacity(list.count / 14 + 1)
            var start = list.startIndex
            while true {
                let end = list[start...].firstIndex(of: UInt8(ascii: ",")) ?? list.endIndex
                let ms = try Self.integer(list[start..<end]) { _ in malformed("impression time is not a number") }
                times.append(Timestamp(millisecondsSince1970: Int64(ms)))
                guard end < list.endIndex else { return times }
                start = end + 1
            }
        }

        private static func integer(
            _ field: ArraySlice<UInt8>, malformed: (String) -> StoreError
        ) throws(StoreError) -> Int {
            var digits = field
            let negative = digits.first == UInt8(ascii: "-")
            if negative { digits = digits.dropFirst() }
            guard !digits.isEmpty else { throw malformed("bad integer") }
            var magnitude: UInt = 0
            for byte in digits {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw malformed("bad integer") }
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt(byte - UInt8(ascii: "0")))
                guard !o1, !o2 else { throw malformed("integer out of range") }
                magnitude = sum
            }
            guard magnitude <= (negative ? Int.min.magnitude : UInt(Int.max)) else { throw malformed("integer out of range") }
            return negative ? Int(truncatingIfNeeded: 0 &- magnitude) : Int(magnitude)
        }

        mutating func optional<T>(_ read: (inout Reader) throws(StoreError) -> T) throws(StoreError) -> T? {
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "~") {
                offset += 1
                return nil
            }
            return try read(&self)
        }
    }
}
