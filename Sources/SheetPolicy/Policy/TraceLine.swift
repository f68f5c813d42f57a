/// Trace lines are built from their pieces in one allocation: string interpolation and `+` grow a
/// buffer piece by piece (and `+` makes a string per step), which was most of the policy's own work.
enum TraceLine {
    /// `parts` joined, in one allocation of their total length.
    static func join(_ parts: String...) -> String {
        var total = 0
        for part in parts { total &+= part.utf8.count }
        return String(unsafeUninitializedCapacity: total) { buffer in
            var offset = 0
            for var part in parts {
                part.withUTF8 { utf8 in
                    if let source = utf8.baseAddress {
                        (buffer.baseAddress! + offset).initialize(from: source, count: utf8.count)
                        offset &+= utf8.count
                    }
                }
            }
            return offset
        }
    }
}
