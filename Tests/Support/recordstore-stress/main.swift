// A child process for RecordStoreTests: commits in a loop and reports each returned modify on stdout.
//
//   recordstore-stress commit DB PREFIX COUNT   each modify saves PREFIX-i-a/b/c (all or none) and
//                                              deletes PREFIX-(i-3)-*; prints "ok i" after it returns
//   recordstore-stress assets DB PREFIX COUNT   each modify makes an asset, saves PREFIX-i with it,
//                                              replaces PREFIX-(i-1)'s asset and deletes PREFIX-(i-3);
//                                              prints "ok i" after it returns
//   recordstore-stress rename DB PREFIX COUNT   saves PREFIX-0…49 with texts once, then each modify
//                                              renames PREFIX-(i%50) to "t-i" through its partial
//                                              record (a metadata-only save); prints "ok i" after it
//   recordstore-stress sha256 FILE - 0          hashes FILE in 1 MiB reads; prints the digest and MB/s
//   recordstore-stress counter DB NAME COUNT    increments field n of record NAME COUNT times with
//                                              ifServerRecordUnchanged, retrying on conflicts; prints
//                                              "conflicts K" and "token T" at the end
import Foundation
@preconcurrency import Glibc
import RecordStore

func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// The text of record PREFIX-i-x: deterministic, 100 B to 6 KB, so a reader can check it in full.
func text(_ i: Int, _ part: String) -> String {
    String(repeating: "\(part)\(i)-line with some words ", count: 3 + (i * 37) % 200)
}

/// The `rename` mode (see the top of this file).
func renameLoop(_ db: RecordDatabase, prefix: String, count: Int) throws {
    let ids = (0..<50).map { RecordID(recordName: "\(prefix)-\($0)") }
    if db.metadata(for: ids[0]) == nil {
        var records: [Record] = []
        for n in 0..<50 {
            var record = Record(recordType: "Item", recordID: ids[n])
            record["title"] = .string("first")
            record["text"] = .string(text(n, "renamed"))
            records.append(record)
        }
        try db.modify(saving: records)
    }
    for i in 0..<count {
        guard let metadata = db.metadata(for: ids[i % 50]) else { throw RecordStoreError.unknownItem(ids[i % 50]) }
        var partial = metadata.record
        partial["title"] = .string("t-\(i)")
        try db.modify(saving: [partial])
        say("ok \(i)")
    }
}

let args = CommandLine.arguments
if args.count == 5, args[1] == "rename", let count = Int(args[4]) {
    // Outside the switch below: there the Swift 6.3.1 compiler crashes (an ownership verifier error).
    do {
        let db = try RecordDatabase(path: args[2])
        try renameLoop(db, prefix: args[3], count: count)
        try db.close()
    } catch {
        say("error \(error)")
        exit(1)
    }
    exit(0)
}
if args.count == 5, args[1] == "sha256" {
    let fd = open(args[2], O_RDONLY)
    guard fd >= 0 else {
        say("error open \(args[2])")
        exit(1)
    }
    var hasher = SHA256.Hasher()
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var total = 0
    let start = DispatchTime.now().uptimeNanoseconds
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        total += n
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    say("\(SHA256.hex(hasher.finalize())) \(total) bytes \(String(format: "%.1f", Double(total) / 1e6 / seconds)) MB/s")
    exit(0)
}
guard args.count == 5, let count = Int(args[4]) else {
    say("usage: recordstore-stress commit|counter DB NAME COUNT")
    exit(64)
}
do {
    let db = try RecordDatabase(path: args[2])
    switch args[1] {
    case "commit":
        let prefix = args[3]
        for i in 0..<count {
            var records: [Record] = []
            for part in ["a", "b", "c"] {
                var r = Record(recordType: "Item", recordID: RecordID(recordName: "\(prefix)-\(i)-\(part)"))
                r["i"] = .int64(Int64(i))
                r["text"] = .string(text(i, part))
                records.append(r)
            }
            let deletes = i >= 3 ? ["a", "b", "c"].map { RecordID(recordName: "\(prefix)-\(i - 3)-\($0)") } : []
            try db.modify(saving: records, deleting: deletes)
            say("ok \(i)")
        }
    case "assets":
        let prefix = args[3]
        for i in 0..<count {
            var record = Record(recordType: "Attachment", recordID: RecordID(recordName: "\(prefix)-\(i)"))
            record["content"] = .asset(try db.makeAsset(Data(text(i, "asset").utf8)))
            var records = [record]
            if i >= 1, var previous = try? db.record(for: RecordID(recordName: "\(prefix)-\(i - 1)")) {
                previous["content"] = .asset(try db.makeAsset(Data(text(i, "replaced").utf8)))
                records.append(previous)
            }
            let deletes = i >= 3 ? [RecordID(recordName: "\(prefix)-\(i - 3)")] : []
            try db.modify(saving: records, deleting: deletes)
            if i % 5 == 0 { try db.sync() }
            say("ok \(i)")
        }
    case "counter":
        let id = RecordID(recordName: args[3])
        var conflicts = 0
        var done = 0
        while done < count {
            var record: Record
            do { record = try db.record(for: id) } catch RecordStoreError.unknownItem {
                record = Record(recordType: "Counter", recordID: id)
            }
            let n = record["n"]?.int64Value ?? 0
            record["n"] = .int64(n + 1)
            do {
                try db.modify(saving: [record])
                done += 1
            } catch RecordStoreError.serverRecordChanged {
                conflicts += 1
            } catch RecordStoreError.invalidArguments {
                conflicts += 1
            } catch RecordStoreError.unknownItem {
                conflicts += 1
            }
        }
        say("conflicts \(conflicts)")
        say("token \(db.currentToken.stringValue)")
    default:
        say("unknown mode \(args[1])")
        exit(64)
    }
    try db.close()
} catch {
    say("error \(error)")
    exit(1)
}
