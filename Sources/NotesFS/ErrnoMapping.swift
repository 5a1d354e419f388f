import FUSE
import Foundation
import Notes
import RecordStore

/// The one place that maps store and notes errors to the errno a system call returns.
enum ErrnoMapping {
    static func errno(for error: any Error) -> Errno {
        switch error {
        case let errno as Errno: return errno
        case let virtual as VirtualTreeError:
            switch virtual {
            case .readOnly: return .readOnly
            case .noFile: return .noEntry
            }
        case let attribute as ExtendedAttributeError:
            switch attribute {
            case .badName: return .rangeError
            case .tooLarge: return Errno(rawValue: E2BIG)
            case .noSpace: return .noSpace
            case .noAttribute: return .noAttribute
            case .exists: return .exists
            case .damaged: return .io
            }
        case let notes as NotesError:
            switch notes {
            case .store(let store): return errno(for: store)
            case .notFound: return .noEntry
            case .refusedQuery: return .invalidArgument
            case .wrongRecordType, .invalidField, .search, .damagedVersion: return .io
            }
        case let store as RecordStoreError:
            switch store {
            case .serverRecordChanged: return .stale
            case .unknownItem: return .noEntry
            case .invalidReference: return .noEntry
            case .invalidArguments: return .invalidArgument
            case .damagedRecord, .notADatabase, .unsupportedFormat, .changeTokenExpired, .changedSince: return .io
            case .predicateSyntax: return .invalidArgument
            case .readOnly: return Errno(rawValue: EROFS)
            case .recordTooLarge: return Errno(rawValue: EFBIG)
            case .io(_, _, let code): return code == ENOSPC ? .noSpace : code == EDQUOT ? Errno(rawValue: EDQUOT) : .io
            }
        default:
            return .io
        }
    }
}
