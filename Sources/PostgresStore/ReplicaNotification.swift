/// What one replica tells the others over NOTIFY, and its one text form (the payload).
///
/// Payloads: `u <instance> <userId> <userId>...` (user ids never contain a space) or `c <instance>`.
/// The form is fixed: replicas of different versions share one database during a rolling upgrade.
struct ReplicaNotification: Sendable, Equatable {
    enum Change: Sendable, Equatable {
        /// These users' states changed (a batch's users, possibly split over several notifications).
        case users([String])
        /// The catalog or the settings changed (`catalog_version` moved).
        case catalog
    }

    /// The sending store's random id: a listener skips its own instance's.
    var instance: String
    var change: Change

    /// PostgreSQL refuses payloads of 8000 bytes or more.
    static let maxPayloadBytes = 7900

    /// The payload.
    var payload: String {
        switch change {
        case .users(let userIds): (["u", instance] + userIds).joined(separator: " ")
        case .catalog: "c " + instance
        }
    }

    /// The notification a payload carries; nil for a payload this version does not know (a newer
    /// replica's kind, or garbage), which the listener ignores.
    init?(payload: String) {
        let parts = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count >= 2, !parts[1].isEmpty else { return nil }
        switch parts[0] {
        case "u" where parts.count >= 3 && !parts.dropFirst(2).contains(where: \.isEmpty):
            self.init(instance: String(parts[1]), change: .users(parts.dropFirst(2).map(String.init)))
        case "c" where parts.count == 2:
            self.init(instance: String(parts[1]), change: .catalog)
        default:
            return nil
        }
    }

    init(instance: String, change: Change) {
        self.instance = instance
        self.change = change
    }

    /// Notifications naming `userIds` (deduplicated, in order), each payload under `maxPayloadBytes`.
    static func users(_ userIds: some Sequence<String>, from instance: String) -> [ReplicaNotification] {
        var notifications: [ReplicaNotification] = []
        let prefixBytes = 2 + instance.utf8.count
        var current: [String] = []
        var bytes = prefixBytes
        var seen = Set<String>()
        for userId in userIds where seen.insert(userId).inserted {
            if !current.isEmpty && bytes + 1 + userId.utf8.count > maxPayloadBytes {
                notifications.append(ReplicaNotification(instance: instance, change: .users(current)))
                current = []
                bytes = prefixBytes
            }
            current.append(userId)
            bytes += 1 + userId.utf8.count
        }
        if !current.isEmpty { notifications.append(ReplicaNotification(instance: instance, change: .users(current))) }
        return notifications
    }
}
