import MicroHTTP
import SheetStore
import SheetWire

/// A user's stored state: the support view of it, and erasing it.
struct UsersController: RouteController {
    let authorization: RequestAuthorization
    let store: any SheetStore
    let databaseErrors: DatabaseErrors
    /// Erases go through it (it bumps the user's epoch and tells the feed).
    let writes: UserStateWrites

    func register(on router: Router) {
        router.addUserRoute(.GET, "/state") { [self] in try userState($0) }
        router.addUserRoute(.DELETE, "") { [self] in try deleteUser($0) }
    }

    /// `GET /v1/users/{userId}/state`: what the service stores for the user.
    func userState(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let state = try databaseErrors.guarding { () throws(StoreError) in try store.userState(userId: userId) }
        return .json(200, UserStateView(userId: userId, state: state).jsonBytes())
    }

    /// `DELETE /v1/users/{userId}`: the user's state erased.
    func deleteUser(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        try databaseErrors.guarding { () throws(StoreError) in try writes.erase(userId: userId) }
        return .empty(204)
    }
}
