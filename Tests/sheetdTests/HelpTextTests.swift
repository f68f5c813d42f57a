import Foundation
import Testing

@testable import sheetd

/// `sheetd --help`: the commands and the option table.
@Suite struct HelpTextTests {
    /// The lines of the option table: the header, then every option's first line and continuations.
    static var tableLines: [Substring] {
        let lines = SheetdCommand.help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let header = lines.firstIndex(where: { $0.hasPrefix("  option ") }) else { return [] }
        return Array(lines[header...].prefix { !$0.isEmpty })
    }

    /// Where each column of the table starts, read from the header line.
    static func columnStarts(_ header: Substring) -> [Int] {
        ["option", "variable", "meaning", "default"].compactMap { name in
            header.range(of: " " + name).map { header.distance(from: header.startIndex, to: $0.lowerBound) + 1 }
        }
    }

    /// Every option has one row whose flag, variable, meaning and default start at the header's
    /// columns, at least two spaces after the cell before; continuation lines hold only the meaning
    /// and the default, in the same columns, and together give back the whole meaning and default.
    @Test func optionRowsAreAlignedInFourColumns() throws {
        let lines = Self.tableLines
        let starts = Self.columnStarts(try #require(lines.first))
        try #require(starts.count == 4)
        var rows: [[Substring]] = []
        for line in lines.dropFirst() {
            let text = String(line)
            let cells = starts.indices.map { column -> Substring in
                let from = min(starts[column], text.count)
                let to = column + 1 < starts.count ? min(starts[column + 1], text.count) : text.count
                let cell = text.dropFirst(from).prefix(to - from)
                return cell
            }
            for (column, cell) in cells.enumerated() {
                // A cell starts exactly at its column and ends at least two spaces before the next one.
                #expect(cell.allSatisfy { $0 == " " } || cell.first != " ", "\(text): column \(column) starts late")
                if column + 1 < cells.count && !cells[column + 1].isEmpty {
                    #expect(cell.isEmpty || cell.hasSuffix("  "), "\(text): column \(column) runs into the next")
                }
            }
            #expect(text.prefix(starts[0]) == "  ")
            let trimmed = cells.map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")[...] }
            if trimmed[0].isEmpty {
                #expect(trimmed[1].isEmpty, "\(text): a continuation line holds a variable")
                let last = try #require(rows.indices.last)
                for column in 2..<4 where !trimmed[column].isEmpty {
                    rows[last][column] = rows[last][column].isEmpty ? trimmed[column] : rows[last][column] + " " + trimmed[column]
                }
            } else {
                rows.append(trimmed)
            }
        }
        #expect(rows.count == Configuration.options.count)
        for (row, option) in zip(rows, Configuration.options) {
            #expect(row == [option.flag[...], option.variable[...], option.meaning[...], option.defaultValue[...]])
        }
    }

    /// The longest flag and the longest variable are two spaces apart (they ran together once), and
    /// no line of the table is wider than its columns allow.
    @Test func longestEntriesSetTheColumns() throws {
        let lines = Self.tableLines
        let starts = Self.columnStarts(try #require(lines.first))
        let longestFlag = Configuration.options.map(\.flag.count).max() ?? 0
        let longestVariable = Configuration.options.map(\.variable.count).max() ?? 0
        #expect(starts == [2, 2 + longestFlag + 2, 2 + longestFlag + 2 + longestVariable + 2, starts[2] + SheetdCommand.meaningWidth + 2])
        let widest = starts[3] + SheetdCommand.defaultWidth
        for line in lines { #expect(line.count <= widest, "\(line)") }
        let row = try #require(lines.first { $0.hasPrefix("  --max-events-per-user-per-minute ") })
        #expect(row.contains("--max-events-per-user-per-minute  ") && row.contains("  SHEETD_MAX_EVENTS_PER_USER_PER_MINUTE  "))
    }

    /// The commands' descriptions start in one column, two spaces after the longest command.
    @Test func commandsAreAligned() throws {
        let longest = SheetdCommand.commands.map(\.usage.count).max() ?? 0
        for command in SheetdCommand.commands where !command.meaning.isEmpty {
            let line = "  " + command.usage.padded(to: longest + 2) + command.meaning
            #expect(SheetdCommand.help.contains(line + "\n"), "\(line)")
        }
    }

    /// A cell wraps at spaces within its width; a word longer than the width is cut.
    @Test func wrapBreaksAtSpaces() {
        #expect(TextColumns.wrap("one two three", width: 7) == ["one two", "three"])
        #expect(TextColumns.wrap("short", width: 10) == ["short"])
        #expect(TextColumns.wrap("abcdefghij k", width: 4) == ["abcd", "efgh", "ij k"])
    }
}
