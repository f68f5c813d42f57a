import MicroHTTP

/// A group of routes and what they need: it registers its handlers on a router (as Vapor's
/// `RouteCollection` or Hummingbird's router groups do). Each controller holds, as `let`s, only the
/// shared pieces its routes use, handed to it by the composition root (`SheetService`).
protocol RouteController: Sendable {
    /// Adds this controller's routes to `router`.
    func register(on router: Router)
}
