import JSONKit
import MicroHTTP
import SheetPolicy

/// `POST .../impressions`: `{"sheetId", "eventId"?}`.
struct ImpressionReport: Equatable {
    let sheetId: String
    let eventId: String?

    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        let sheetId = r.identifier("sheetId", required: true)
        eventId = r.identifier("eventId")
        try r.finish()
        self.sheetId = try r.required(sheetId, "sheetId")
    }
}

/// `PUT .../attributes`: `{"segments": [...]}`, stored sorted (by UTF-8 bytes) without duplicates.
struct UserAttributes: Equatable {
    /// At most this many segments per user.
    static let maxSegments = 64
    let segments: [String]

    init(_ object: [String: JSONValue]) throws(Problem) {
        // `segments` is read here; the reader checks the rest (unknown members).
        var r = BodyReader(object.filter { $0.key != "segments" })
        var segments: [String] = []
        switch object["segments"] {
        case nil, .null?:
            r.fail("segments", "is required")
        case .array(let items)?:
            if items.count > Self.maxSegments {
                r.fail("segments", "must have at most \(Self.maxSegments) items")
            } else {
                for (index, item) in items.enumerated() {
                    guard case .string(let s) = item, Identifier.isValid(s) else {
                        r.fail("segments[\(index)]", Identifier.rule)
                        continue
                    }
                    segments.append(s)
                }
            }
        default:
            r.fail("segments", "must be an array of strings")
        }
        try r.finish()
        self.segments = Set(segments).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

/// `PUT /v1/settings`: `{"globalCap": {"max", "periodSeconds"} | null, "minIntervalSeconds": n | null}`.
/// Absent and null are both "off"; every number is at least 1.
struct SettingsBody: Equatable {
    static let maxSeconds = 10 * 365 * 86_400
    static let maxCap = 1_000_000
    let settings: CampaignSettings

    init(_ object: [String: JSONValue]) throws(Problem) {
        var r = BodyReader(object)
        var globalCap: FrequencyCap?
        if var cap = r.object("globalCap") {
            let max = cap.integer("max", 1...Self.maxCap, required: true)
            let period = cap.integer("periodSeconds", 1...Self.maxSeconds, required: true)
            r.absorb(cap)
            if let max, let period { globalCap = FrequencyCap(max: max, periodSeconds: period) }
        }
        let minInterval = r.integer("minIntervalSeconds", 1...Self.maxSeconds)
        try r.finish()
        settings = CampaignSettings(globalCap: globalCap, minIntervalSeconds: minInterval)
    }
}

/// RFC 3339 date-times (`2026-12-01T08:00:00Z`, fractional seconds and offsets allowed) as the
/// `since` of the stats route. Fractions below a millisecond are dropped.
enum RFC3339Time {
    static func parse(_ text: String) -> Timestamp? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var v = 0
            for i in at..<at + count {
                guard b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") else { return nil }
                v = v * 10 + Int(b[i] - UInt8(ascii: "0"))
            }
            return v
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"), let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
            let day = digits(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
            let hour = digits(11, 2), b[13] == UInt8(ascii: ":"), let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
            let second = digits(17, 2)
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...monthDays[month - 1]).contains(day), hour <= 23, minute <= 59, second <= 60 else {
            return nil
        }
        var i = 19
        var millis = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var count = 0
            while i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") {
                if count < 3 { millis = millis * 10 + Int(b[i] - UInt8(ascii: "0")) }
                count += 1
                i += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<3 where count < 3 { millis *= 10 }
        }
        var offsetSeconds = 0
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"), let om = digits(i + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetSeconds
        return Timestamp(millisecondsSince1970: Int64(seconds) * 1000 + Int64(millis))
    }
}

extension RFC3339Time {
    /// `2026-12-01T08:00:00Z`, with `.mmm` when the time has milliseconds; always UTC.
    static func format(_ time: Timestamp) -> String {
        let ms = time.millisecondsSince1970
        let (secondsTotal, millis) = (ms >= 0 ? ms / 1000 : (ms - 999) / 1000, ((ms % 1000) + 1000) % 1000)
        let days = secondsTotal >= 0 ? secondsTotal / 86_400 : (secondsTotal - 86_399) / 86_400
        let secondOfDay = Int(secondsTotal - days * 86_400)
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let date = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        var text = date + "T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if millis != 0 { text += "." + pad(Int(millis), 3) }
        return text + "Z"
    }
}
