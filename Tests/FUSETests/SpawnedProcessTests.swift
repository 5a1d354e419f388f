import Foundation
import Synchronization
import TestSupport
import Testing

/// The test support's child processes (`SpawnedProcess`, which starts every program and daemon a
/// test runs) inherit no descriptor of the test process, even one another thread opens while the
/// child starts: a long-lived daemon holding a copy of a descriptor on a mounted file keeps that
/// mount busy, and its unmount fails.
@Suite struct SpawnedProcessTests {
    @Test func aDescriptorOpenedWhileAChildStartsIsNotInherited() throws {
        let scratch = makeTemporaryDirectory("spawned")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let marker = scratch + "/marker-file"
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
        // Another thread opens and closes the marker (no O_CLOEXEC) as fast as it can.
        let stop = Atomic<Bool>(false)
        let opener = Thread {
            while !stop.load(ordering: .relaxed) {
                let fd = open(marker, O_RDONLY)
                if fd >= 0 { close(fd) }
            }
        }
        opener.start()
        defer { stop.store(true, ordering: .relaxed) }
        var inherited = 0
        for round in 0..<100 {
            let out = scratch + "/out-\(round)"
            // The shell's own descriptors, by their targets (stderr apart: `ls` may report a link
            // that went away while it listed them).
            let child = try SpawnedProcess(
                ["/bin/sh", "-c", "ls -l /proc/$$/fd | grep -c marker-file; true"], stdout: out, stderr: out + ".err")
            #expect(child.wait() == 0)
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            let count = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(count != nil, "the child printed \(text)")
            if let count, count > 0 { inherited += 1 }
        }
        #expect(inherited == 0, "\(inherited) of 100 children held the marker file open")
    }
}
