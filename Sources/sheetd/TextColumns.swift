/// Rows of text cells laid out in columns for the terminal (`sheetd --help`).
///
/// Each column is as wide as its longest cell, or its maximum width when that is smaller; a longer
/// cell wraps at spaces onto continuation lines, where the other columns are blank. Columns are two
/// spaces apart, so every line of every row starts each column at the same place.
struct TextColumns {
    /// The most characters a column may take; `nil` for no limit.
    var maximumWidths: [Int?]
    var indent = "  "
    static let gap = "  "

    /// The lines of `rows` (each row one cell per column), without trailing spaces.
    func lines(_ rows: [[String]]) -> [String] {
        let count = maximumWidths.count
        let widths = (0..<count).map { column in
            let longest = rows.map { $0[column].count }.max() ?? 0
            return maximumWidths[column].map { min($0, longest) } ?? longest
        }
        var lines: [String] = []
        for row in rows {
            let cells = (0..<count).map { Self.wrap(row[$0], width: widths[$0]) }
            for index in 0..<(cells.map(\.count).max() ?? 0) {
                let parts = (0..<count).map { column in
                    let part = index < cells[column].count ? cells[column][index] : ""
                    return column == count - 1 ? part : part.padded(to: widths[column])
                }
                var line = indent + parts.joined(separator: Self.gap)
                while line.last == " " { line.removeLast() }
                lines.append(line)
            }
        }
        return lines
    }

    /// `text` in lines of at most `width` characters, broken at spaces (a longer word is cut).
    static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0, text.count > width else { return [text] }
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            var word = Substring(word)
            if !line.isEmpty && line.count + 1 + word.count <= width {
                line += " " + word
                continue
            }
            if !line.isEmpty { lines.append(line) }
            while word.count > width {
                lines.append(String(word.prefix(width)))
                word = word.dropFirst(width)
            }
            line = String(word)
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
