import Crypto
import JSONKit

/// A key set that cannot be used, with a message naming the problem (never a secret).
public struct KeySetError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The verification keys of a JWKS document (RFC 7517), or of a shared-secrets file.
///
/// A document that is not a JWKS (not JSON, no `keys` array, a key without `kty`, a member that is
/// not base64url, a `kid` twice) is refused as a whole. A well-formed key sheetd must not use (RSA
/// under 2048 bits, `use` other than `sig`, `key_ops` without `verify`, an `alg` its type cannot
/// have, a curve or type it does not verify, a symmetric `oct` key published in a JWKS) is left out
/// and remembered with the reason, so a token naming it is refused with that reason.
public struct JSONWebKeySet: Sendable {
    public private(set) var keys: [VerificationKey] = []
    /// The `kid`s of the keys left out, with why.
    public private(set) var refused: [(keyID: String, reason: String)] = []

    /// RSA keys shorter than this are refused (NIST SP 800-131A; RFC 7518 §3.3 requires 2048).
    public static let minimumRSABits = 2048
    /// RSA keys longer than this are refused: a verification's cost grows with the modulus, and a
    /// flood of forged tokens must stay cheap.
    public static let maximumRSABits = 8192
    /// The largest document read (a provider's JWKS is a few KiB).
    public static let maximumBytes = 1 << 20

    public init(keys: [VerificationKey] = []) { self.keys = keys }

    /// Parses a JWKS document.
    public static func parse(_ bytes: [UInt8]) throws(KeySetError) -> JSONWebKeySet {
        guard bytes.count <= maximumBytes else { throw KeySetError("the JWKS is larger than \(maximumBytes) bytes") }
        guard let document = try? JSONReader.read(bytes), case .object(let members) = document else {
            throw KeySetError("the JWKS is not a JSON object")
        }
        guard case .array(let entries)? = members["keys"] else { throw KeySetError("the JWKS has no \"keys\" array") }
        var set = JSONWebKeySet()
        var seen: Set<String> = []
        for (index, entry) in entries.enumerated() {
            guard case .object(let jwk) = entry else { throw KeySetError("keys[\(index)] is not an object") }
            let keyID: String?
            switch jwk["kid"] {
            case nil: keyID = nil
            case .string(let kid)? where !kid.isEmpty && kid.utf8.count <= 256: keyID = kid
            default: throw KeySetError("keys[\(index)]: kid must be a string of 1 to 256 bytes")
            }
            let name = keyID.map { "key \"\($0)\"" } ?? "keys[\(index)]"
            guard seen.insert(keyID ?? "").inserted else {
                throw KeySetError(keyID == nil ? "more than one key has no kid" : "the kid \"\(keyID!)\" is used twice")
            }
            do throws(KeySetError) {
                if let key = try verificationKey(jwk, keyID: keyID, name: name) {
                    set.keys.append(key)
                }
            } catch let refusal where refusal.message.hasPrefix(Self.refusedPrefix) {
                set.refused.append((keyID ?? "", String(refusal.message.dropFirst(Self.refusedPrefix.count))))
            }
        }
        guard !set.keys.isEmpty || !set.refused.isEmpty else { throw KeySetError("the JWKS has no keys") }
        return set
    }

    /// Marks a well-formed key that is left out (see the type's comment), as opposed to a malformed one.
    private static let refusedPrefix = "refused: "
    private static func refuse(_ why: String) -> KeySetError { KeySetError(refusedPrefix + why) }

    private static func verificationKey(_ jwk: [String: JSONValue], keyID: String?, name: String) throws(KeySetError) -> VerificationKey? {
        func string(_ member: String) throws(KeySetError) -> String? {
            switch jwk[member] {
            case nil: return nil
            case .string(let s)?: return s
            default: throw KeySetError("\(name): \(member) must be a string")
            }
        }
        func bytes(_ member: String) throws(KeySetError) -> [UInt8] {
            guard let text = try string(member) else { throw KeySetError("\(name): \(member) is required") }
            guard let decoded = Base64URL.decode(Substring(text)), !decoded.isEmpty else {
                throw KeySetError("\(name): \(member) is not base64url")
            }
            return decoded
        }
        guard let type = try string("kty") else { throw KeySetError("\(name): kty is required") }
        let algorithm = try string("alg")
        if let use = try string("use"), use != "sig" { throw refuse("the key is for use \"\(use)\", not \"sig\"") }
        if let operations = jwk["key_ops"] {
            guard case .array(let list) = operations else { throw KeySetError("\(name): key_ops must be an array") }
            guard list.contains(.string("verify")) else { throw refuse("the key's key_ops do not include \"verify\"") }
        }
        // Certificates (x5c) are not needed to verify: the key members decide.
        let publicKey: PublicKey
        switch type {
        case "RSA":
            let modulus = try bytes("n").drop { $0 == 0 }
            let exponent = try bytes("e").drop { $0 == 0 }
            // A small odd exponent (65537 in practice): a huge one would make every verification slow.
            guard exponent.count <= 4, let last = exponent.last, last & 1 == 1, exponent.count > 1 || last >= 3 else {
                throw refuse("the RSA exponent must be odd, from 3 to 2^32")
            }
            guard modulus.count * 8 >= minimumRSABits - 7 else {
                throw refuse("the RSA key has fewer than \(minimumRSABits) bits")
            }
            guard modulus.count * 8 <= maximumRSABits else { throw refuse("the RSA key has more than \(maximumRSABits) bits") }
            do { publicKey = try PublicKey.rsa(modulus: Array(modulus), exponent: Array(exponent)) } catch {
                throw KeySetError("\(name): \(error.message)")
            }
            guard publicKey.bits >= minimumRSABits else { throw refuse("the RSA key has fewer than \(minimumRSABits) bits") }
        case "EC":
            guard let curve = try string("crv") else { throw KeySetError("\(name): crv is required") }
            guard curve == "P-256" else { throw refuse("the EC curve \(curve) is not supported (only P-256)") }
            let (x, y) = (try bytes("x"), try bytes("y"))
            do { publicKey = try PublicKey.p256(x: x, y: y) } catch { throw KeySetError("\(name): \(error.message)") }
        case "OKP":
            guard let curve = try string("crv") else { throw KeySetError("\(name): crv is required") }
            guard curve == "Ed25519" else { throw refuse("the OKP curve \(curve) is not supported (only Ed25519)") }
            let x = try bytes("x")
            do { publicKey = try PublicKey.ed25519(x) } catch { throw KeySetError("\(name): \(error.message)") }
        case "oct":
            throw refuse("a symmetric (oct) key in a JWKS is refused: a shared secret belongs in SHEETD_JWT_SECRETS_FILE")
        default:
            throw refuse("the key type \(type) is not supported (RSA, EC P-256, OKP Ed25519)")
        }
        if let algorithm, algorithm != publicKey.algorithm.rawValue {
            throw refuse("the key's alg \(algorithm) does not fit its type \(type) (\(publicKey.algorithm.rawValue) expected)")
        }
        return .publicKey(publicKey, keyID: keyID)
    }

    /// The `kid secret` lines of a shared-secrets file (`SHEETD_JWT_SECRETS_FILE`; blank lines and `#`
    /// comments skipped). A message names the line, never a secret.
    public static func sharedSecrets(_ text: String, minimumLength: Int = 1) throws(KeySetError) -> JSONWebKeySet {
        var set = JSONWebKeySet()
        var seen: Set<String> = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: " \t\r")
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count == 2 else { throw KeySetError("line \(index + 1) is not 'kid secret'") }
            guard parts[0].utf8.count <= 256 else { throw KeySetError("line \(index + 1): a kid is at most 256 bytes") }
            guard seen.insert(String(parts[0])).inserted else { throw KeySetError("line \(index + 1): the kid \(parts[0]) is used twice") }
            guard parts[1].utf8.count >= minimumLength, Set(parts[1].utf8).count >= min(8, minimumLength) else {
                throw KeySetError("line \(index + 1): the secret is too weak: use at least \(minimumLength) random characters")
            }
            set.keys.append(.hs256(secret: Array(parts[1].utf8), keyID: String(parts[0])))
        }
        guard !set.keys.isEmpty else { throw KeySetError("the file has no 'kid secret' line") }
        return set
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in characters: String) -> Substring {
        var s = self
        while let first = s.first, characters.contains(first) { s = s.dropFirst() }
        while let last = s.last, characters.contains(last) { s = s.dropLast() }
        return s
    }
}
