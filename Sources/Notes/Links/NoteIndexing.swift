import Foundation
import Index

/// What the index keeps of a note's text beside its words: its links (to find backlinks by the
/// key of their last component), its tags (`#tag` and front matter's `tags:`) and its
/// front-matter properties, typed.
enum NoteIndexing {
    /// Fills `document`'s links, tags and properties from a note's text.
    static func describe(_ text: String, into document: inout IndexedDocument) {
        let scanned = NoteText.scan(text)
        document.links = scanned.links.compactMap(indexed)
        let frontMatter = FrontMatter.parse(text)
        var seen = Set<String>()
        document.tags = (scanned.tags + (frontMatter?.tags ?? [])).map(\.name).filter { seen.insert($0).inserted }
        document.properties = frontMatter?.properties.flatMap(indexed) ?? []
    }

    /// The keys of a note's links as the index keeps them (a link to a heading of the same note
    /// has none).
    static func linkKeys(of text: String) -> Set<String> { Set(NoteText.scan(text).links.compactMap(indexed).map(\.key)) }

    /// A link as the index keeps it; nil for a link to a heading of the same note.
    static func indexed(_ link: NoteLink) -> IndexedLink? {
        guard !link.target.isEmpty else { return nil }
        return IndexedLink(key: key(ofTarget: link.target), target: link.target, style: link.style == .wiki ? 0 : 1, line: link.line)
    }

    /// The lookup key of a link's destination: its last component's.
    static func key(ofTarget target: String) -> String {
        LinkResolver.key(of: target.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? target)
    }

    /// A property as the index keeps it: one row, or one per item of a list.
    static func indexed(_ property: Property) -> [IndexedProperty] {
        let key = property.key.lowercased()
        switch property.value {
        case .text(let text): return [IndexedProperty(key: key, kind: .text, text: text, number: nil)]
        case .number(let number): return [IndexedProperty(key: key, kind: .number, text: nil, number: number)]
        case .bool(let bool): return [IndexedProperty(key: key, kind: .bool, text: bool ? "true" : "false", number: nil)]
        case .date(let date): return [IndexedProperty(key: key, kind: .date, text: nil, number: date.timeIntervalSinceReferenceDate)]
        case .list(let items): return items.map { IndexedProperty(key: key, kind: .list, text: $0, number: nil) }
        }
    }
}
