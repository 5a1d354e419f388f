/// Mount tests for extended attributes: size probe, ERANGE, list, remove, ENODATA.

import CFuse
import FUSE
import Foundation
import Glibc
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct XattrTests {
    @Test func setGetListRemove() throws {
        try withMount { _, root in
            let path = root + "/f"
            #expect(writeFile(path, "x") == 0)
            let value = Array("value-123".utf8)
            #expect(errnoOf { setxattr(path, "user.color", value, value.count, 0) } == 0)
            #expect(errnoOf { setxattr(path, "user.color", value, value.count, Int32(XATTR_CREATE)) } == EEXIST)
            #expect(getxattr(path, "user.color", nil, 0) == value.count)
            var small = [UInt8](repeating: 0, count: 3)
            #expect(getxattr(path, "user.color", &small, small.count) == -1 && errno == ERANGE)
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = getxattr(path, "user.color", &buffer, buffer.count)
            #expect(count == value.count)
            #expect(Array(buffer[..<max(count, 0)]) == value)
            #expect(errnoOf { setxattr(path, "user.b", [1], 1, 0) } == 0)
            let needed = listxattr(path, nil, 0)
            #expect(needed == "user.b\0user.color\0".utf8.count)
            var list = [CChar](repeating: 0, count: 64)
            let listed = listxattr(path, &list, list.count)
            let names = String(decoding: list[..<max(listed, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                .split(separator: "\0").map(String.init)
            #expect(names == ["user.b", "user.color"])
            var tiny = [CChar](repeating: 0, count: 2)
            #expect(listxattr(path, &tiny, tiny.count) == -1 && errno == ERANGE)
            #expect(errnoOf { removexattr(path, "user.color") } == 0)
            #expect(getxattr(path, "user.color", nil, 0) == -1 && errno == ENODATA)
            #expect(errnoOf { removexattr(path, "user.color") } == ENODATA)
        }
    }
}
