import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// Queries the index file narrows (`key == reference`, `key == "string"`, `recordName ==`, a
/// type's records without a reference in a key) give what evaluating the predicate on every
/// record gives, with records changed, deleted and made after the checkpoint (the overlay) mixed
/// with the file's.
@Suite struct IndexedQueryTests {
    static let titles = ["Café", "Cafe\u{301}", "plan", "Plan", "a b", "", "x"]

    static func database() throws -> RecordDatabase {
        let db = try makeDatabase()
        try db.modify(saving: (0..<4).map { folder("f\($0)") })
        var records: [Record] = []
        for i in 0..<400 {
            var r = note(
                "n\(i)", folder: i % 9 == 0 ? nil : "f\(i % 4)", text: i % 3 == 0 ? String(repeating: "long ", count: 80) : "short")
            r["title"] = .string(titles[i % titles.count])
            if i % 5 == 0 { r["kind"] = .string("f1") }  // a string equal to a folder's name
            records.append(r)
        }
        try db.modify(saving: records)
        try db.checkpoint()
        // After the checkpoint: some changed (title, folder), some deleted, some new.
        var changed: [Record] = []
        for i in stride(from: 1, to: 400, by: 37) {
            var r = try db.record(for: RecordID(recordName: "n\(i)"))
            r["title"] = .string(titles[(i + 3) % titles.count])
            r["folder"] = i % 2 == 0 ? nil : .reference(Reference(recordID: RecordID(recordName: "f2"), action: .deleteSelf))
            changed.append(r)
        }
        try db.modify(saving: changed + (0..<20).map { note("new\($0)", folder: $0 % 2 == 0 ? nil : "f1") })
        try db.modify(deleting: stride(from: 2, to: 400, by: 41).map { RecordID(recordName: "n\($0)") })
        return db
    }

    static func byScan(_ db: RecordDatabase, _ predicate: Predicate) -> Set<String> {
        Set(
            db.metadata { $0.recordType == "Note" }.filter { metadata in
                predicate.evaluate { RecordDatabase.value(of: $0, in: metadata) }
            }.map(\.recordID.recordName))
    }

    @Test(arguments: [
        ("title == %@", FieldValue.string("Café")), ("title == %@", .string("plan")), ("title == %@", .string("")),
        ("folder == %@", .reference(Reference(recordID: RecordID(recordName: "f1"), action: .none))),
        ("folder == %@", .string("f2")), ("kind == %@", .string("f1")), ("recordName == %@", .string("n7")),
        ("recordName == %@", .string("new3")), ("title == %@ AND folder == NIL", .string("x")), ("missing == %@", .string("x")),
    ])
    func aNarrowedQueryFindsWhatAScanFinds(_ format: String, _ argument: FieldValue) throws {
        let db = try Self.database()
        let predicate = try Predicate(format: format, argument)
        let found = Set(db.queryMetadata(Query(recordType: "Note", predicate: predicate)).map(\.recordID.recordName))
        #expect(found == Self.byScan(db, predicate))
        #expect(!found.isEmpty || format.hasPrefix("missing"))
    }

    @Test func theRootsMembersAreTheRecordsWithoutAReferenceInTheKey() throws {
        let db = try Self.database()
        let roots = Set(db.metadata(ofType: "Note", withoutReferenceIn: "folder").map(\.recordID.recordName))
        let scan = Set(db.metadata { $0.recordType == "Note" && $0.field("folder") == nil }.map(\.recordID.recordName))
        #expect(roots == scan && roots.count > 40)
    }

    /// The records of one title in one folder (or the root) are those a scan finds: the
    /// overlay's, compared in place, and the file's; renamed and moved records, deleted ones, new
    /// ones, and titles equal only in canonical equivalence (`Café`).
    @Test func aTitleInAFolderIsFoundAsAScanFindsIt() throws {
        let db = try Self.database()
        func scan(_ title: String, _ folder: String?) -> Set<String> {
            Set(
                db.metadata {
                    $0.recordType == "Note" && $0.field("title")?.stringValue == title
                        && $0.field("folder")?.referenceValue?.recordID.recordName == folder
                }.map(\.recordID.recordName))
        }
        func found(_ title: String, _ folder: String?) -> Set<String> {
            Set(
                db.metadata(
                    ofType: "Note", whereField: "title", equals: title, referringTo: folder.map { RecordID(recordName: $0) },
                    through: "folder"
                ).map(\.recordID.recordName))
        }
        var nonEmpty = 0
        for title in Self.titles + ["none"] {
            for folder in [nil, "f0", "f1", "f2", "f3", "missing"] {
                let expected = scan(title, folder)
                #expect(found(title, folder) == expected, "\(title) in \(folder ?? "the root")")
                if !expected.isEmpty { nonEmpty += 1 }
            }
        }
        #expect(nonEmpty > 25)
        // A record moved and renamed in the overlay is found under its new title and folder only.
        var moved = try db.record(for: RecordID(recordName: "n3"))
        moved["title"] = .string("moved")
        moved["folder"] = .reference(Reference(recordID: RecordID(recordName: "f3"), action: .deleteSelf))
        try db.modify(saving: [moved])
        #expect(found("moved", "f3") == ["n3"] && found("moved", "f0").isEmpty && found("moved", nil).isEmpty)
    }
}
