import JSONKit
import MicroHTTP
import SheetStore
import SheetWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who a request acts for: its bearer token verified, admin-only routes and a user's own routes
/// enforced, and the author a catalog change is recorded under.
struct RequestAuthorization: Sendable {
    /// The longest `Sheetd-Comment` kept with a revision, in Unicode code points: what the
    /// databases' `length(comment)` CHECK counts (a grapheme count lets "e" + U+0301 pairs through).
    static let maximumCommentLength = 1000

    let tokens: TokenVerifier

    func authenticate(_ request: HTTPRequest) throws(Problem) -> Principal {
        do {
            var principal: Result<Principal, TokenError> = .failure(.missing)
            request.withHeaderBytes("Authorization") { value in
                guard let value else { return }
                do throws(TokenError) {
                    principal = .success(try tokens.principal(authorizationBytes: value, now: Int64(time(nil))))
                } catch { principal = .failure(error) }
            }
            return try principal.get()
        } catch {
            throw Problems.unauthorized(error)
        }
    }

    func requireAdmin(_ request: HTTPRequest, _ why: String) throws(Problem) {
        guard try authenticate(request) == .admin else { throw Problems.forbidden(why) }
    }

    /// The user a user route acts for, once the caller may act for them: the `{userId}` of a
    /// /v1/users route, or on its /v1/me form (no `{userId}`: `Router.addUserRoute`) the user token's
    /// subject. The admin token has no user, so it is refused on /v1/me (403 saying why).
    func authorizeUser(_ request: HTTPRequest) throws(Problem) -> String {
        let principal = try authenticate(request)
        // One lookup of the parameter on the hot path (the decision), as `pathIdentifier` does.
        guard let userId = request.pathParameter("userId") else {
            // The subject was checked as a user id when the token was verified.
            guard case .user(let subject) = principal else { throw Self.adminOnMe }
            return subject
        }
        guard Identifier.isValid(userId) else { throw Problems.invalidParams([("userId", Identifier.rule)]) }
        if case .user(let subject) = principal, subject != userId {
            throw Problems.forbidden("this token may only use /v1/users/\(subject) routes (or /v1/me)")
        }
        return userId
    }

    static let adminOnMe = Problems.forbidden(
        "/v1/me routes act for the user of a user token (its sub), and the admin token has no user: use /v1/users/{userId}/... instead")

    /// The admin token's name (never the token), for the access log.
    func adminName(_ request: HTTPRequest) -> String? {
        tokens.adminName(authorization: request.header("Authorization"))
    }

    /// Who makes a change and why: the admin token's name (never the token) and `Sheetd-Comment`.
    func revisionAuthor(_ request: HTTPRequest) throws(Problem) -> RevisionAuthor {
        let actor = adminName(request) ?? "admin"
        guard let raw = request.header("Sheetd-Comment") else { return RevisionAuthor(actor: actor) }
        let comment = raw.trimmed()
        guard comment.unicodeScalars.count <= Self.maximumCommentLength else {
            throw Problems.invalidParams([("Sheetd-Comment", "is at most \(Self.maximumCommentLength) Unicode code points")])
        }
        return RevisionAuthor(actor: actor, comment: comment.isEmpty ? nil : comment)
    }
}

extension HTTPRequest {
    /// A path parameter that must be an identifier (400 naming it otherwise).
    func pathIdentifier(_ name: String) throws(Problem) -> String {
        guard let value = pathParameter(name), Identifier.isValid(value) else {
            throw Problems.invalidParams([(name, Identifier.rule)])
        }
        return value
    }

    /// The body as a JSON object, after the `Content-Type` checks (415 for another type or charset).
    func jsonObject() throws(Problem) -> [String: JSONValue] {
        guard let type = header("Content-Type"), MediaType.isJSON(type) else { throw Problems.unsupportedMediaType }
        if let charset = RequestBody.foreignCharset(type) { throw Problems.unsupportedCharset(charset) }
        return try RequestBody.object(body)
    }

    /// The body decoded by a wire decoder (`CountReport.init` and the like), after `jsonObject()`.
    func decodeBody<T>(_ decode: ([String: JSONValue]) throws(WireError) -> T) throws(Problem) -> T {
        let object = try jsonObject()
        return try Problems.decoding { () throws(WireError) in try decode(object) }
    }
}

extension Router {
    /// A user's route in its two forms, served by one handler: `/v1/users/{userId}<path>`, and
    /// `/v1/me<path>` whose user is the user token's subject (`RequestAuthorization.authorizeUser`),
    /// so that the user id need not travel in URLs and proxy logs. Same answers, ETags and caches.
    func addUserRoute(_ method: HTTPMethod, _ path: String, _ handler: @escaping HTTPHandler) {
        add(method, "/v1/users/{userId}" + path, handler)
        add(method, "/v1/me" + path, handler)
    }
}
