import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// Two titles equal after Unicode normalisation (`Café` precomposed and decomposed), made on two
/// machines: each shows under a name of its own, the later with the disambiguating suffix.
@Suite(.tags(.postgres), .needsPostgres) struct NormalisedNameTests {
    @Test func titlesEqualAfterNormalisationGetASuffix() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let composed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        var first = note(composed, id: "nfc", text: "precomposed\n")
        first.setCreationDate(Date(timeIntervalSince1970: 1_700_000_000))
        var second = note(decomposed, id: "nfd", text: "decomposed\n")
        second.setCreationDate(Date(timeIntervalSince1970: 1_700_000_100))
        try a.save([first])
        try b.save([second])
        try syncAll(machines)
        let listing = try notesfs(a.path, ["ls"])
        let entries = listing.out.split(separator: "\n").map(String.init).filter { $0.hasPrefix("Caf") }
        #expect(entries.count == 2, "\(listing.out)")
        // Distinct as Swift compares them (canonical equivalence), as a name map keyed by String does.
        #expect(Set(entries).count == 2, "\(entries.map { Array($0.unicodeScalars) })")
        #expect(entries.contains(composed + ".md"), "\(entries)")
        #expect(entries.contains { $0.hasPrefix(decomposed + " (nfd") }, "\(entries)")
    }
}
