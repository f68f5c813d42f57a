import Testing

@testable import SheetService

/// `If-None-Match` against a decision's tag in either encoding: the in-place paths agree with the
/// general one (which builds the gzip tag and splits lists).
@Suite struct EntityTagTests {
    @Test func eitherEncodingMatches() {
        let tag = #""0123456789abcdef""#
        let gzip = #""0123456789abcdef-gzip""#
        for (header, expected) in [
            (tag, true), (gzip, true), ("W/" + gzip, true), ("*", true), (" \(gzip) ", true), (#""x", "# + gzip, true),
            (#""0123456789abcdef-gzi""#, false), (#""0123456789abcdee-gzip""#, false), (#""0123456789abcdef-gzip"x"#, false),
            (#""0123456789abcdef"-gzip""#, false), (#""other""#, false), (#""0123456789abcdef-GZIP""#, false),
        ] {
            #expect(EntityTag.matchesEitherEncoding(header, tag) == expected, "\(header)")
            // The general path, for the same answer.
            let general = EntityTag.matches(header, tag) || EntityTag.matches(header, "\"" + tag.dropFirst().dropLast() + "-gzip\"")
            #expect(general == expected, "\(header)")
        }
    }
}
