import JSONKit
import MicroHTTP
import SheetStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Authentication, authorization, path ids, JSON bodies and storage errors, shared by the routes.
extension SheetService {
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

    /// The `{userId}` of a /v1/users route, once the caller may act for that user.
    func authorizeUser(_ request: HTTPRequest) throws(Problem) -> String {
        let principal = try authenticate(request)
        let userId = try pathIdentifier(request, "userId")
        if case .user(let subject) = principal, subject != userId {
            throw Problems.forbidden("this token may only use /v1/users/\(subject) routes")
        }
        return userId
    }

    func pathIdentifier(_ request: HTTPRequest, _ name: String) throws(Problem) -> String {
        guard let value = request.pathParameter(name), Identifier.isValid(value) else {
            throw Problems.invalidParams([(name, Identifier.rule)])
        }
        return value
    }

    func jsonBody(_ request: HTTPRequest) throws(Problem) -> [String: JSONValue] {
        guard let type = request.header("Content-Type"), MediaType.isJSON(type) else { throw Problems.unsupportedMediaType }
        if let charset = RequestBody.foreignCharset(type) { throw Problems.unsupportedCharset(charset) }
        return try RequestBody.object(request.body)
    }

    func storage<T>(_ operation: () throws(StoreError) -> T) throws(Problem) -> T {
        do {
            return try operation()
        } catch {
            databaseErrors.add(1, ordering: .relaxed)
            throw Problems.storage(error)
        }
    }
}
