import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The sd_notify protocol (systemd's `Type=notify`): one datagram such as `READY=1` to the Unix
/// socket named by `$NOTIFY_SOCKET` (a path, or an abstract name written with a leading `@`).
/// A few lines instead of libsystemd: nothing else of it is needed.
enum SystemdNotify {
    /// Sends `state` (`READY=1`, `STOPPING=1`, `STATUS=…`) when `$NOTIFY_SOCKET` is set; returns
    /// whether it was sent. Never fails the caller: readiness is advice to the service manager.
    @discardableResult
    static func send(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let name = environment["NOTIFY_SOCKET"], name.hasPrefix("/") || name.hasPrefix("@") else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // the abstract namespace
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                Array(state.utf8).withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
            }
        }
        return sent >= 0
    }
}
