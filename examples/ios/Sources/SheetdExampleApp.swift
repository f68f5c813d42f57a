import SheetdClient
import SwiftUI

/// Shows the `home-offers` card sheet of examples/catalog.json from a live sheetd.
///
/// Start the server on your Mac with `make run` (it prints a user token for `demo-user`), then set
/// `SHEETD_URL` and `SHEETD_USER_TOKEN` in the scheme's environment (Product › Scheme › Edit Scheme ›
/// Run › Arguments). The simulator reaches the Mac's 127.0.0.1.
@main
struct SheetdExampleApp: App {
    let log: ExchangeLog
    let client: SheetdUserClient

    init() {
        let environment = ProcessInfo.processInfo.environment
        let url = URL(string: environment["SHEETD_URL"] ?? "http://127.0.0.1:8080")!
        let token = environment["SHEETD_USER_TOKEN"] ?? ""
        let log = ExchangeLog()
        self.log = log
        client = SheetdUserClient(
            baseURL: url, userId: "demo-user",
            token: { token },  // a real app returns its cached token and refreshes it near `exp`
            configuration: SheetdConfiguration(
                requestAdapter: { request in
                    var request = request
                    request.setValue("SheetdExample/\(SheetdUserClient.version)", forHTTPHeaderField: "User-Agent")
                    return request
                },
                onExchange: { exchange in Task { @MainActor in log.append(exchange) } }))
    }

    var body: some Scene {
        WindowGroup {
            HomeView(client: client, log: log)
        }
    }
}
