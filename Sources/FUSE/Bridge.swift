/// `Bridge`: the per-session object libfuse hands back as userdata; finds the Swift filesystem.

import CFuse
import Dispatch
import Synchronization

/// What a session's callbacks need: the filesystem, the notifier, and init-time settings.
/// Retained (`Unmanaged`) for the session's life and passed to `fuse_session_new` as userdata.
final class Bridge: Sendable {
    let fileSystem: any FileSystem
    let notifier: Notifier
    /// `-o max_read=` value, copied into `conn->max_read` at init (libfuse refuses it otherwise).
    let maxRead: UInt32?
    private let destroyed = Atomic<Bool>(false)
    /// Signalled once the init callback has run (notifications fail with `ENOSYS` before it).
    private let initialized = DispatchSemaphore(value: 0)

    init(fileSystem: any FileSystem, notifier: Notifier, maxRead: UInt32?) {
        self.fileSystem = fileSystem
        self.notifier = notifier
        self.maxRead = maxRead
    }

    /// Calls `FileSystem.destroy` the first time only (the loop's end and libfuse's destroy callback
    /// may both ask).
    func destroyOnce() {
        if !destroyed.exchange(true, ordering: .acquiringAndReleasing) {
            fileSystem.destroy()
        }
    }

    /// Records that the init callback ran.
    func didInitialize() { initialized.signal() }

    /// Waits until the init callback ran; false on timeout.
    func waitUntilInitialized(seconds: Double) -> Bool {
        guard initialized.wait(timeout: .now() + seconds) == .success else { return false }
        initialized.signal()
        return true
    }

    /// The bridge of a request (`fuse_req_userdata`).
    static func of(_ request: fuse_req_t) -> Bridge {
        Unmanaged<Bridge>.fromOpaque(fuse_req_userdata(request)!).takeUnretainedValue()
    }

    /// The bridge from init/destroy's `userdata`.
    static func of(userdata: UnsafeMutableRawPointer?) -> Bridge {
        Unmanaged<Bridge>.fromOpaque(userdata!).takeUnretainedValue()
    }
}
