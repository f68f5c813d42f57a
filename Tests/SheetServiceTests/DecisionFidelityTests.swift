import Foundation
import Testing

/// Decision rules of the design documents, over real HTTP.
struct DecisionFidelityTests {
    /// 004: "When the customer dismisses the sheet, keep it closed": the app closing it (`programmatic`) does not latch.
    @Test func programmaticDismissalDoesNotLatch() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let decision = "/v1/users/ann/decision?\(Fixtures.homeAccountsIOS)"
        _ = try live.put("/v1/users/ann/containers/offers-home/count", #"{"count":2}"#)
        var r = try live.post("/v1/users/ann/dismissals", #"{"sheetId":"offers","method":"programmatic"}"#)
        #expect(r.status == 200)
        #expect(r.json["latched"] as? Bool == false)
        #expect(try live.get(decision).json["reason"] as? String == "cards-available")
        r = try live.post("/v1/users/ann/dismissals", #"{"sheetId":"offers","method":"action"}"#)
        #expect(r.json["latched"] as? Bool == true)
        #expect(try live.get(decision).json["reason"] as? String == "latched")
    }

    /// "A user has one stack; it belongs to its root sheet's screen (and tab)": a sheet of another screen
    /// pushed over the card sheet presents on the card's screen and tab, and not on its own screen.
    @Test func nestedSheetOfAnotherScreenPresentsOverItsRoot() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        _ = try live.put("/v1/users/bea/containers/offers-home/count", #"{"count":2}"#)
        let r = try live.post(
            "/v1/users/bea/presentations", #"{"sheetId":"filters","mode":"push","parentSheetId":"offers"}"#)
        #expect(r.status == 200)
        let home = try live.get("/v1/users/bea/decision?\(Fixtures.homeAccountsIOS)").json
        #expect(home["reason"] as? String == "stack")
        #expect((home["stack"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["offers", "filters"])
        let own = try live.get("/v1/users/bea/decision?screen=transactions&platform=ios").json
        #expect(own["present"] as? Bool == false)
    }
}
