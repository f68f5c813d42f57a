import Foundation
import Testing

@testable import SheetService

/// `sheetd --help`'s option table.
@Suite struct HelpTextTests {
    /// Every option row has its flag, its variable and its meaning in three aligned columns, however
    /// long the longest flag or variable is.
    @Test func optionRowsAreAligned() throws {
        let rows = SheetdCommand.help.split(separator: "\n").filter { $0.hasPrefix("  --") }
        #expect(rows.count == Configuration.options.count)
        var variableColumns: Set<Int> = []
        var meaningColumns: Set<Int> = []
        for (row, option) in zip(rows, Configuration.options) {
            let text = String(row)
            let variable = try #require(text.range(of: " " + option.variable + " "))
            variableColumns.insert(text.distance(from: text.startIndex, to: variable.lowerBound) + 1)
            let meaning = try #require(text.range(of: option.meaning))
            meaningColumns.insert(text.distance(from: text.startIndex, to: meaning.lowerBound))
            #expect(text.hasPrefix("  " + option.flag + " "))
        }
        #expect(variableColumns.count == 1)
        #expect(meaningColumns.count == 1)
    }
}
