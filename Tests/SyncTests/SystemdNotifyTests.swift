import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `Type=notify`: the mount tells the service manager it is ready, as systemd's sd_notify does.
@Suite(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) struct SystemdNotifyTests {
    /// A datagram socket bound at a new path, as systemd's notify socket; returns (fd, path).
    func notifySocket() throws -> (Int32, String) {
        let directory = makeTemporaryDirectory("notesfs-notify")
        let path = directory + "/notify"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(fd >= 0 && bound == 0)
        return (fd, path)
    }

    /// The datagrams received within `seconds` (a generous bound), joined by newlines.
    func received(_ fd: Int32, waitingUpTo seconds: Double) -> String {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
    }

    @Test func theMountReportsReadyOnNotifySocket() throws {
        let (fd, path) = try notifySocket()
        defer {
            close(fd)
            unlink(path)
            rmdir((path as NSString).deletingLastPathComponent)
        }
        let (_, machines) = try makeMachines(1)
        let mount = try syncedMount(machines[0].path, environment: ["NOTIFY_SOCKET": path])
        defer { mount.close() }
        #expect(received(fd, waitingUpTo: 30) == "READY=1")
        #expect(isMounted(mount.path))
    }
}
