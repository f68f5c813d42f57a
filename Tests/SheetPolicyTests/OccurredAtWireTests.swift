import JSONKit
import SheetPolicy
import SheetWire
import Testing

/// `occurredAt` on every event body: parsed exactly (RFC 3339, at most milliseconds), and accepted
/// from 24 h before the server's clock to the leeway after it, both ends included.
struct OccurredAtWireTests {
    static func body(_ json: String) throws(WireError) -> [String: JSONValue] { try JSONBody.object(Array(json.utf8)) }
    static let now = Timestamp(rfc3339: "2026-12-01T08:30:00Z")!

    @Test func everyEventBodyReadsIt() throws {
        let at = #""occurredAt":"2026-12-01T09:29:00.250+01:00""#
        let expected = Timestamp(rfc3339: "2026-12-01T08:29:00.250Z")
        #expect(try CountReport(Self.body(#"{"count":1,\#(at)}"#)).occurredAt == expected)
        #expect(try Dismissal(Self.body(#"{"sheetId":"s","method":"swipe",\#(at)}"#)).occurredAt == expected)
        #expect(try PresentationReport(Self.body(#"{"sheetId":"s","mode":"push",\#(at)}"#)).occurredAt == expected)
        #expect(try ContentHeightReport(Self.body(#"{"height":1,"platform":"ios",\#(at)}"#)).occurredAt == expected)
        #expect(try ImpressionReport(Self.body(#"{"sheetId":"s",\#(at)}"#)).occurredAt == expected)
        #expect(try ConversionReport(Self.body(#"{"sheetId":"s",\#(at)}"#)).occurredAt == expected)
        #expect(try ImpressionReport(Self.body(#"{"sheetId":"s","occurredAt":null}"#)).occurredAt == nil)
        #expect(try ImpressionReport(Self.body(#"{"sheetId":"s"}"#)).occurredAt == nil)
    }

    @Test(arguments: ["", "2026-12-01", "2026-12-01T08:29:00", "2026-12-01T08:29:00.0001Z", "2026-13-01T00:00:00Z", "2026-12-01T08:29:60Z"])
    func malformedIsAnInvalidMember(_ text: String) throws {
        do throws(WireError) {
            _ = try ImpressionReport(Self.body(#"{"sheetId":"s","occurredAt":"\#(text)"}"#))
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.invalidParams.map(\.name) == ["occurredAt"])
            #expect(error.invalidParams.first?.reason == OccurredAtWindow.formatRule)
        }
    }

    @Test func theWindow() throws {
        let window = OccurredAtWindow(futureSeconds: 60)
        #expect(try window.time(of: nil, now: Self.now) == Self.now)
        for edge in [Self.now.adding(seconds: -86_400), Self.now.adding(seconds: 60), Self.now] {
            #expect(try window.time(of: edge, now: Self.now) == edge)
        }
        for (outside, why) in [
            (Timestamp(millisecondsSince1970: Self.now.adding(seconds: -86_400).millisecondsSince1970 - 1), "too old"),
            (Timestamp(millisecondsSince1970: Self.now.adding(seconds: 60).millisecondsSince1970 + 1), "in the future"),
        ] {
            do throws(WireError) {
                _ = try window.time(of: outside, now: Self.now)
                Issue.record("accepted \(outside.rfc3339)")
            } catch {
                #expect(error.invalidParams.map(\.name) == ["occurredAt"])
                #expect(
                    error.invalidParams.first?.reason
                        == "must be within 24 h before the server's time and 60 s after it "
                        + "(now from 2026-11-30T08:30:00Z to 2026-12-01T08:31:00Z); \(outside.rfc3339) is \(why)")
            }
        }
    }
}
