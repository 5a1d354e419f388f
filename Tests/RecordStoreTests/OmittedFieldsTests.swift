import TestSupport
import Testing

@testable import RecordStore

/// The small map of a partial record's left-out fields behaves as a dictionary, whichever slot
/// (inline or overflow) a field sits in.
@Suite struct OmittedFieldsTests {
    @Test func behavesAsADictionary() {
        var map = OmittedFields()
        var mirror: [String: Int] = [:]
        var rng = SystemRandomNumberGenerator()
        let keys = ["text", "content", "data", "notes"]
        for step in 0..<2_000 {
            let key = keys.randomElement(using: &rng)!
            let value: Int? = Bool.random(using: &rng) ? Int.random(in: 0...1_000, using: &rng) : nil
            map[key] = value
            mirror[key] = value
            #expect(map.dictionary == mirror, "step \(step)")
            #expect(map.count == mirror.count && map.isEmpty == mirror.isEmpty)
            #expect(Set(map.keys) == Set(mirror.keys))
            for k in keys { #expect(map[k] == mirror[k]) }
        }
    }

    @Test func equalContentsAreEqualWhateverTheSlot() {
        var a = OmittedFields()
        a["text"] = 1
        a["content"] = 2
        var b = OmittedFields()
        b["content"] = 2
        b["text"] = 1
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        a["text"] = nil
        #expect(a == OmittedFields(["content": 2]))
        #expect(a != b)
    }
}
