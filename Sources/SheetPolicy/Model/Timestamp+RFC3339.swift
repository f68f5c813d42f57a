extension Timestamp {
    /// What to do with a fraction finer than a millisecond that is not zero.
    public enum FinerFraction: Sendable {
        /// Not a time: a stored time is never rounded silently.
        case reject
        /// Round up to the next millisecond. Exact for a bound compared with millisecond times
        /// (`t >= 09:00:00.4561` holds exactly when `t >= 09:00:00.457`), as a `since` filter is.
        case roundUp
    }

    /// Parses an RFC 3339 `date-time` exactly (`2026-12-01T09:00:00Z`, `2026-12-01T10:00:00.250+01:00`):
    /// the offset is applied, fractional seconds are kept to the millisecond. `nil` when the text is not
    /// one, names a day that does not exist, a leap second, or (unless `finerFraction` says to round
    /// up) a fraction finer than a millisecond that is not zero.
    public init?(rfc3339 text: some StringProtocol, finerFraction: FinerFraction = .reject) {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8...) -> Bool {
            guard i < b.count, c.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(45), let month = digits(2), expect(45), let day = digits(2),
            expect(84, 116), let hour = digits(2), expect(58), let minute = digits(2), expect(58), let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year), hour <= 23, minute <= 59,
            second <= 59
        else { return nil }
        var millis = 0
        var finerThanMillisecond = false
        if i < b.count, b[i] == 46 {  // "."
            i += 1
            var count = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                let d = Int(b[i] - 48)
                if count < 3 { millis = millis * 10 + d } else if d != 0 { finerThanMillisecond = true }
                count += 1
                i += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<max(count, 3) { millis *= 10 }
        }
        if finerThanMillisecond {
            guard finerFraction == .roundUp else { return nil }
            millis += 1  // 999 + 1 carries into the seconds below
        }
        var offsetMinutes = 0
        if expect(90, 122) {  // "Z" / "z"
        } else if i < b.count, b[i] == 43 || b[i] == 45 {  // "+" / "-"
            let sign = b[i] == 45 ? -1 : 1
            i += 1
            guard let oh = digits(2), expect(58), let om = digits(2), oh <= 23, om <= 59 else { return nil }
            offsetMinutes = sign * (oh * 60 + om)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        self.init(millisecondsSince1970: seconds * 1000 + Int64(millis))
    }

    /// The time in RFC 3339, UTC: `2026-12-01T09:00:00Z`, with milliseconds only when there are some
    /// (`2026-12-01T09:00:00.250Z`). Years outside 0...9999 print as they are (never produced by parsing).
    public var rfc3339: String {
        let ms = millisecondsSince1970
        let (secs, milli) = (ms.floorDiv(1000), ms.floorMod(1000))
        let days = secs.floorDiv(86_400), daySeconds = Int(secs.floorMod(86_400))
        let (y, m, d) = Self.civilFromDays(Int(days))
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return s.count >= n ? s : String(repeating: "0", count: n - s.count) + s
        }
        var text = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(daySeconds / 3600, 2)):\(pad(daySeconds / 60 % 60, 2)):\(pad(daySeconds % 60, 2))"
        if milli != 0 { text += "." + pad(Int(milli), 3) }
        return text + "Z"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

extension Int64 {
    fileprivate func floorDiv(_ d: Int64) -> Int64 { self >= 0 ? self / d : -((-self - 1) / d) - 1 }
    fileprivate func floorMod(_ d: Int64) -> Int64 { self - floorDiv(d) * d }
}
