import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A taken port is one clear line on stderr.
@Suite(.serialized) struct PortInUseTests {
    /// `sheetd serve` on a port another socket listens on exits 1 with "cannot listen on" said once.
    @Test func takenPortSaysCannotListenOnce() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(bound == 0)
        #expect(listen(fd, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: addr.sin_port))

        let dir = FileManager.default.temporaryDirectory.appending(path: "sheetd-port-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try SheetdBinary.run(
            ["serve", "--db", dir.appending(path: "db.sqlite").path, "--port", String(port)],
            environment: ["SHEETD_JWT_SECRET": "x", "SHEETD_ADMIN_TOKEN": "y"])
        #expect(r.status == 1)
        #expect(r.stderr.components(separatedBy: "cannot listen on").count == 2, "stderr: \(r.stderr)")
        #expect(r.stderr.contains("127.0.0.1:\(port)"))
    }
}
