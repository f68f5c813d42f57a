import Concurrency
import Synchronization

/// The keys user tokens are verified with right now, gathered from their sources (the single
/// `SHEETD_JWT_SECRET`, `SHEETD_JWT_SECRETS_FILE`, `SHEETD_JWKS_FILE`, `SHEETD_JWKS_URL`), each
/// replaced as a whole when it is reloaded.
///
/// The verified-token cache stays exact across reloads through `epoch`: it moves whenever a `kid`
/// disappears or names another key, and an entry cached under an older epoch counts as a miss (its
/// token is verified again against the current keys). Adding keys, the usual rotation step, keeps
/// every cached token.
public final class KeyRing: Sendable {
    /// The keys at one moment: what one verification uses from start to end.
    struct Snapshot: Sendable {
        let epoch: Int
        let byID: [String: VerificationKey]
        /// The key a token without `kid` is checked against (at most one key may have none).
        let withoutID: VerificationKey?
        /// Keys a source named but sheetd refuses, with why (a token naming one gets that reason).
        let refused: [String: String]
        var isEmpty: Bool { byID.isEmpty && withoutID == nil }
    }

    private struct Sources {
        var sets: [(source: String, set: JSONWebKeySet)] = []
        var snapshot = Snapshot(epoch: 0, byID: [:], withoutID: nil, refused: [:])
    }

    private let sources = Locked(Sources())
    private let currentEpoch = Atomic<Int>(0)
    /// Called (without blocking) when a token names a `kid` no source has: the JWKS URL's refresher
    /// asks for a fetch. Set once at start-up.
    private let unknownKeyHandler = Locked<(@Sendable (String) -> Void)?>(nil)

    public init() {}

    /// A ring holding the keys of `set` as the source `source`.
    public convenience init(_ set: JSONWebKeySet, source: String) throws(KeySetError) {
        self.init()
        try replace(source: source, with: set)
    }

    /// The current keys.
    var snapshot: Snapshot { sources.withLock { $0.snapshot } }

    /// The epoch a cached verification must carry to count (see the type's comment).
    var epoch: Int { currentEpoch.load(ordering: .acquiring) }

    /// Whether any source holds a usable key.
    public var hasKeys: Bool { !snapshot.isEmpty }

    /// Every usable `kid` and its algorithm, for logs.
    public var keyDescriptions: [String] {
        let s = snapshot
        return (s.withoutID.map { ["(no kid) \($0.algorithm)"] } ?? []) + s.byID.keys.sorted().map { "\($0) \(s.byID[$0]!.algorithm)" }
    }

    /// Replaces the keys of one source. Refused, with the ring unchanged, when a `kid` is also
    /// another source's or when two sources have a key without `kid`.
    public func replace(source: String, with set: JSONWebKeySet) throws(KeySetError) {
        try sources.withLock { (state: inout Sources) throws(KeySetError) in
            var sets = state.sets.filter { $0.source != source }
            sets.append((source, set))
            var byID: [String: VerificationKey] = [:]
            var withoutID: VerificationKey?
            var refused: [String: String] = [:]
            var owner: [String: String] = [:]
            for (name, keys) in sets {
                for key in keys.keys {
                    guard let kid = key.keyID else {
                        guard withoutID == nil else {
                            throw KeySetError("\(name): a key without kid, and \(owner[""] ?? "another source") has one too; give each key a kid")
                        }
                        withoutID = key
                        owner[""] = name
                        continue
                    }
                    if let other = owner[kid] { throw KeySetError("\(name): the kid \"\(kid)\" is also in \(other)") }
                    owner[kid] = name
                    byID[kid] = key
                }
                for (kid, reason) in keys.refused { refused[kid] = reason }
            }
            let old = state.snapshot
            let keptEveryKey =
                old.byID.allSatisfy { byID[$0.key]?.fingerprint == $0.value.fingerprint }
                && (old.withoutID == nil || old.withoutID?.fingerprint == withoutID?.fingerprint)
            let epoch = keptEveryKey ? old.epoch : old.epoch + 1
            state.sets = sets
            state.snapshot = Snapshot(epoch: epoch, byID: byID, withoutID: withoutID, refused: refused)
            currentEpoch.store(epoch, ordering: .releasing)
        }
    }

    /// Registers what happens when a token names an unknown `kid` (one handler; the last one wins).
    public func onUnknownKeyID(_ handler: @escaping @Sendable (String) -> Void) {
        unknownKeyHandler.withLock { $0 = handler }
    }

    func reportUnknownKeyID(_ kid: String) {
        unknownKeyHandler.withLock { $0 }?(kid)
    }
}
