/// The listing model without a mount: name groups of one and of several records (collision
/// suffixes), scratch files, and what a listing entry costs in memory.

import FUSE
import Foundation
import Notes
import TestSupport
import Testing

@testable import NotesFS

@Suite struct DirectoryListingTests {
    static func note(_ recordName: String, _ title: String, created: Double) -> DirectoryListing.Member {
        DirectoryListing.Member(
            recordName: recordName, recordType: Note.recordType, title: title, created: Date(timeIntervalSince1970: created))
    }

    /// The debug check run after each applied change: a listed entry whose `parentOf` is another
    /// directory (or none) is named; consistent ones are not.
    @Test func aListedEntryWithAnotherParentIsAViolation() {
        var names = NameTable()
        var root = DirectoryListing()
        root.upsert(10, Self.note("a", "Plan", created: 1))
        root.upsert(11, Self.note("b", "Other", created: 2))
        names.listings[1] = root
        names.parentOf[10] = 1
        names.parentOf[11] = 1
        #expect(names.listingViolations(of: [10, 11, 12]).isEmpty)
        names.parentOf[10] = 7  // moved to folder 7 while the root kept it
        names.parentOf[11] = nil
        #expect(
            names.listingViolations(of: [10, 11]) == [
                "inode 10 is listed in directory 1, its parent is 7", "inode 11 is listed in directory 1, its parent is none",
            ])
    }

    @Test func groupsGrowToSuffixesAndShrinkBackToTheBaseName() {
        var listing = DirectoryListing()
        let first = UUID().uuidString
        let second = "b2c3d4e5-other"
        #expect(listing.upsert(10, Self.note(first, "Plan", created: 1)) == [.init(inode: 10, old: nil, new: "Plan.md")])
        // A second record wanting the name: the later one gets a suffix from its record name.
        #expect(listing.upsert(11, Self.note(second, "Plan", created: 2)) == [.init(inode: 11, old: nil, new: "Plan (b2c3d4).md")])
        #expect(listing.names["Plan.md"] == 10)
        #expect(listing.names["Plan (b2c3d4).md"] == 11)
        // The first goes: the second takes the base name.
        let renames = listing.remove(10)
        #expect(renames.contains(.init(inode: 10, old: "Plan.md", new: nil)))
        #expect(renames.contains(.init(inode: 11, old: "Plan (b2c3d4).md", new: "Plan.md")))
        #expect(listing.nameOf == [11: "Plan.md"])
        // A retitle moves it to another group and frees the old one.
        #expect(listing.upsert(11, Self.note(second, "Other", created: 2)) == [.init(inode: 11, old: "Plan.md", new: "Other.md")])
        #expect(listing.upsert(12, Self.note(UUID().uuidString, "Plan", created: 3)) == [.init(inode: 12, old: nil, new: "Plan.md")])
        #expect(listing.names.count == 2)
        // A member is recognised by its record name, whether kept as a UUID or as a string.
        #expect(listing.members[11]?.isRecord(named: second) == true)
        #expect(listing.members[11]?.recordName == second)
        #expect(listing.members[12]?.isRecord(named: first) == false)
    }

    @Test func aScratchFileKeepsItsNameBesideRecords() {
        var listing = DirectoryListing()
        let scratch = DirectoryListing.Member(
            recordName: "", recordType: DirectoryListing.scratchType, title: ".Plan.md.swp", created: .distantPast)
        #expect(listing.upsert(1 << 48, scratch) == [.init(inode: 1 << 48, old: nil, new: ".Plan.md.swp")])
        #expect(listing.upsert(20, Self.note(UUID().uuidString, "Plan", created: 1)).map(\.new) == ["Plan.md"])
        #expect(listing.names[".Plan.md.swp"] == 1 << 48)
    }

    /// A listing holds one member per entry (100,000s in a large mount).
    @Test func aMemberTakesAtMost64Bytes() {
        #expect(MemoryLayout<DirectoryListing.Member>.stride <= 64)
    }

    /// A record name is kept as a UUID exactly when Foundation's `UUID(uuidString:)` reads it and
    /// `uuidString` spells it back, and it reads back as the same string either way.
    @Test func compactNamesAgreeWithFoundation() {
        var names = (0..<200).map { _ in UUID().uuidString }
        let sample = UUID().uuidString
        names += [
            sample.lowercased(), sample.replacingOccurrences(of: "-", with: "_"), String(sample.dropLast()), sample + "0",
            "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "G0000000-0000-0000-0000-000000000000",
            "0000000-00000-0000-0000-000000000000", "note-1", "", "É0000000-0000-0000-0000-00000000000",
            "00000000-0000-0000-0000-00000000000g", "00000000+0000-0000-0000-000000000000",
        ]
        for name in names {
            let foundation = UUID(uuidString: name).flatMap { $0.uuidString == name ? $0 : nil }
            let compact = DirectoryListing.CompactName(name)
            #expect(compact == (foundation.map { .uuid($0) } ?? .string(name)), "\(name)")
            #expect(compact.string == name)
            if let foundation { #expect(DirectoryListing.CompactName.spelling(of: foundation) == foundation.uuidString) }
        }
    }

    /// A listing built at once names its entries as upserting them one at a time does: groups of
    /// one and of several records, scratch files, directories, an inode given twice.
    @Test(arguments: 0..<20) func aListingBuiltAtOnceNamesAsUpserts(seed: Int) {
        var rng = SystemRandomNumberGenerator()
        let titles = ["a", "b", "Note", "note", "x.md"]
        var entries: [(Inode, DirectoryListing.Member)] = []
        for i in 0..<(10 + seed * 3) {
            let inode = Inode(100 + Int.random(in: 0..<(12 + seed * 2), using: &rng))
            let title = titles.randomElement(using: &rng)!
            let member =
                i % 7 == 3
                ? DirectoryListing.Member(
                    recordName: "", recordType: DirectoryListing.scratchType, title: "\(title)~\(i)", created: .distantPast)
                : Self.note(UUID().uuidString, title, created: Double(Int.random(in: 0..<4, using: &rng)))
            entries.append((inode, member))
        }
        var upserted = DirectoryListing()
        for (inode, member) in entries { upserted.upsert(inode, member) }
        let built = DirectoryListing(entries)
        #expect(built.names == upserted.names)
        #expect(built.nameOf == upserted.nameOf)
        #expect(built.members == upserted.members)
        #expect(built.directoryCount == upserted.directoryCount)
        #expect(Set(built.names.values) == Set(built.members.keys))
    }
}
