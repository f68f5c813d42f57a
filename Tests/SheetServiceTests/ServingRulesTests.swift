import Concurrency
import MicroHTTP
import SQLiteStore
import SheetPolicy
import SheetStore
import Synchronization
import TestSupport
import Testing

@testable import SheetService

/// Each serving rule has one owner, and fails there (issue 47): `DecisionFreshness` decides what the
/// cache may store and serve (a `ReadBasis` from `beginRead` is the only thing an insert takes, and a
/// stale one is refused), `UserStateWrites` is the only code that bumps a user's epoch (the bump is
/// private to its file, so no route can forget or duplicate it), and `CatalogKeeper.change` is the
/// only catalog write (a refused change leaves the store, the history and the snapshot as they were).
@Suite struct ServingRulesTests {
    static let home = ClientContext(screen: "home", tab: "accounts", platform: .ios)
    static let answer = DecisionCache.Answer(body: [1], etag: "\"a\"")

    /// An answer computed on a basis taken before a write of its user is never stored; nor is one
    /// stored under another user than its basis'. One taken after the write is stored and served.
    @Test func aStaleBasisIsRefused() {
        let cache = DecisionCache()
        let freshness = cache.freshness
        let stale = freshness.beginRead("u")
        freshness.heard(.users(["u"]))  // a write of "u" ended after the basis was taken
        #expect(!freshness.isCurrent(stale))
        cache.insert(userId: "u", basis: stale, context: Self.home, catalogVersion: 0, answer: Self.answer)
        #expect(cache.count == 0, "an answer on a stale basis is not stored")

        let others = freshness.beginRead("v")
        cache.insert(userId: "u", basis: others, context: Self.home, catalogVersion: 0, answer: Self.answer)
        #expect(cache.count == 0, "an answer on another user's basis is not stored")

        let current = freshness.beginRead("u")
        cache.insert(userId: "u", basis: current, context: Self.home, catalogVersion: 0, answer: Self.answer)
        let local = ServingRequest(catalogVersion: 0, proof: .local)
        #expect(cache.lookup(userId: "u", context: Self.home, request: local, now: Timestamp.now)?.answer === Self.answer)
        freshness.heard(.users(["u"]))
        #expect(cache.lookup(userId: "u", context: Self.home, request: local, now: Timestamp.now) == nil, "stale from the bump on")
    }

    /// `isServable` is the one serving check (the cache's lookups and the barrier's proof ask it): the
    /// epoch, the catalog version, the time boundary, and the store version as the source proves it.
    @Test func isServableChecksEveryPartOfTheBasis() {
        let freshness = DecisionFreshness()
        let now = Timestamp.now()
        let clock = { now }
        let local = freshness.beginRead("u")
        let shared = freshness.beginRead("u").read(atStoreVersion: 7)
        func servable(_ basis: ReadBasis, catalog: Int = 3, until: Timestamp? = nil, _ request: ServingRequest) -> Bool {
            freshness.isServable(basis, catalogVersion: catalog, validUntil: until, to: request, now: clock)
        }
        let atThree = ServingRequest(catalogVersion: 3, proof: .local)
        #expect(servable(local, atThree))
        #expect(!servable(local, catalog: 2, atThree), "another catalog version")
        #expect(!servable(local, until: now, atThree), "its time boundary has come")
        #expect(servable(local, until: Timestamp(millisecondsSince1970: now.millisecondsSince1970 + 1), atThree))
        #expect(!servable(shared, atThree), "a local request never serves a replicated answer")
        #expect(servable(shared, ServingRequest(catalogVersion: 3, proof: .versionRead(7))))
        #expect(!servable(shared, ServingRequest(catalogVersion: 3, proof: .versionRead(8))), "the user changed on another replica")
        #expect(!servable(local, ServingRequest(catalogVersion: 3, proof: .versionRead(7))))
        #expect(servable(shared, ServingRequest(catalogVersion: 3, proof: .barrier)))
        #expect(!servable(local, ServingRequest(catalogVersion: 3, proof: .barrier)), "a barrier proves only answers with a store version")
        freshness.heard(.listenerReset(connected: false))
        #expect(!servable(shared, ServingRequest(catalogVersion: 3, proof: .versionRead(7))), "a listener reset makes every basis stale")
    }

    /// Every write of a user's state through `UserStateWrites` makes the bases taken before it stale
    /// by the time its completion runs (an event, a failed event, an erase); a write no decision reads
    /// (exposures) does not.
    @Test func userWritesMakeBasesStale() throws {
        let directory = try TemporaryDirectory(prefix: "serving-rules")
        defer { directory.remove() }
        let store = try SQLiteSheetStore.open(path: directory.file())
        defer { store.close() }
        let freshness = DecisionFreshness()
        let writes = UserStateWrites(store: store, freshness: freshness, feed: ChangeFeed())

        func submitted(_ body: @escaping @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8]) -> ReadBasis {
            let basis = freshness.beginRead("u")
            let done = Latch<Bool>()
            writes.submit(userId: "u", eventId: nil, body) { _ in done.open(with: freshness.isCurrent(basis)) }
            #expect(done.wait() == false, "stale before the completion runs")
            return basis
        }
        _ = submitted { _, _ in Array("{}".utf8) }
        _ = submitted { _, _ in throw StoreError.failure("refused") }

        let beforeErase = freshness.beginRead("u")
        try writes.erase(userId: "u")
        #expect(!freshness.isCurrent(beforeErase))

        let beforeExposure = freshness.beginRead("u")
        let exposed = Latch<Bool>()
        writes.submitUnreadByDecisions(userId: "u", { _, _ in [] }) { result in exposed.open(with: (try? result.get()) != nil) }
        #expect(exposed.wait())
        #expect(freshness.isCurrent(beforeExposure), "a write no decision reads keeps the user's answers")
    }

    /// A watcher that reports its first recheck.
    final class CatalogWatcher: DecisionWatcher {
        let userId = "watcher"
        let rechecked = Latch<Bool>()
        func recheck() { rechecked.open(with: true) }
    }

    /// `CatalogKeeper.change` is the catalog's one write: a refused change (stale If-Match, over the
    /// limits, a running experiment reassigned) stores nothing, records no revision and leaves the
    /// snapshot; a made one stores the sheet with exactly one revision, moves the snapshot and its tag,
    /// and wakes the watchers. A change for this process only (`storing: false`) records nothing.
    @Test func catalogChangesHaveOneWayIn() throws {
        let directory = try TemporaryDirectory(prefix: "serving-rules")
        defer { directory.remove() }
        let store = try SQLiteSheetStore.open(path: directory.file())
        defer { store.close() }
        let snapshot = CatalogSnapshot(Catalog())
        let feed = ChangeFeed()
        let keeper = CatalogKeeper(
            store: store, replication: nil, snapshot: snapshot, freshness: DecisionFreshness(catalog: snapshot), feed: feed,
            limits: CatalogLimits(sheets: 2), replicaCounters: ReplicaCounters(), databaseErrors: DatabaseErrors(), revisionsKept: 10)
        let author = RevisionAuthor(actor: "tests", comment: nil)
        func sheet(_ id: String, weights: (Int, Int) = (1, 1)) throws -> SheetDefinition {
            let experiment =
                #""experiment":{"id":"exp","status":"running","conversionWindowSeconds":60,"arms":[{"id":"a","weight":\#(weights.0)},{"id":"b","weight":\#(weights.1)}]}"#
            let json = #"{"kind":"informational","screen":"home",\#(id == "x" ? experiment : #""title":"T""#)}"#
            return try SheetDefinition.parse(try RequestBody.object(Array(json.utf8)), pathId: id)
        }
        let (x, y, z, reweighted) = (try sheet("x"), try sheet("y"), try sheet("z"), try sheet("x", weights: (1, 3)))

        let watcher = CatalogWatcher()
        feed.add(watcher)
        let (_, firstTag) = keeper.currentWithTag
        let made = try keeper.change(ifMatch: firstTag, author: author) { _ in .putSheet(x) }
        #expect(made.changed && made.created && made.tag != firstTag)
        #expect(watcher.rechecked.wait())
        #expect(try store.catalog().map(\.id) == ["x"] && keeper.current["x"] != nil)
        #expect(try store.catalogRevisions(before: nil, limit: 100).count == 1)

        let version = keeper.currentVersion
        let refusals: [(status: Int, ifMatch: String?, edit: CatalogEdit)] = [
            (412, firstTag, .putSheet(y)), (409, nil, .upsertSheets([y, z])), (409, nil, .putSheet(reweighted)),
        ]
        for (status, ifMatch, edit) in refusals {
            let outcome = Result { () throws(Problem) in try keeper.change(ifMatch: ifMatch, author: author) { _ in edit } }
            guard case .failure(let problem) = outcome else {
                Issue.record("the change was made: \(edit)")
                continue
            }
            #expect(problem.status == status, "\(problem.detail)")
        }
        #expect(try store.catalog().map(\.id) == ["x"] && keeper.currentVersion == version && keeper.currentWithTag.tag == made.tag)
        #expect(try store.catalogRevisions(before: nil, limit: 100).count == 1, "a refused change records no revision")

        let removed = try keeper.change(ifMatch: made.tag, author: author) { _ in .deleteSheet(id: "missing") }
        let revisionsAfterNoChange = try store.catalogRevisions(before: nil, limit: 100).count
        #expect(!removed.changed && keeper.currentVersion == version && revisionsAfterNoChange == 1)

        _ = try keeper.change(ifMatch: nil, author: author, storing: false) { _ in .upsertSheets([y]) }
        #expect(keeper.current["y"] != nil && keeper.currentVersion == version + 1)
        let (storedIds, revisionCount) = (try store.catalog().map(\.id), try store.catalogRevisions(before: nil, limit: 100).count)
        #expect(storedIds == ["x"] && revisionCount == 1, "not stored, no revision")
    }
}
