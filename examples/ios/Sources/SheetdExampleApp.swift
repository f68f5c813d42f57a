import SheetdClient
import SwiftUI

/// Shows the `home-offers` card sheet of examples/catalog.json from a live sheetd.
///
/// Start the server on your Mac with `make server` in examples/ios (`make token` prints a user token for
/// `demo-user`), then set `SHEETD_USER_TOKEN` (and `SHEETD_URL`) in the scheme's environment
/// (Product › Scheme › Edit Scheme › Run › Arguments). The simulator reaches the Mac's 127.0.0.1.
@main
struct SheetdExampleApp: App {
    let log: ExchangeLog
    let client: SheetdUserClient
    /// The events, kept in Application Support until the server has them (nil: the file could not be made).
    let outbox: SheetdOutbox?
    /// Flushes the outbox when the network returns and on foreground.
    let observer: SheetdOutboxObserver?

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
        let outbox = try? SheetdOutbox(file: SheetdOutbox.defaultFile(forUser: "demo-user"), client: client)
        self.outbox = outbox
        observer = outbox?.observeSystem()
    }

    var body: some Scene {
        WindowGroup {
            HomeView(client: client, outbox: outbox, log: log)
        }
    }
}
