import Foundation
import RecordStore

/// What a value from the server must meet beyond the store's own rules
/// (``RecordStore/FieldValue/validityProblem``) before anything is planned with it: bounds that
/// keep every sum, product and loop of the sync engine, the mount and the CLI far from the end of
/// their integer types.
enum ServerValueRules {
    /// The largest asset a server row may name (1 PiB): chunk counts and offsets stay exact, and
    /// no size shown in the mount or summed by retention comes near `Int64.max`.
    static let assetSizeLimit: Int64 = 1 << 50

    /// Why `value` (one field of a server row, lists included) cannot be applied; nil when it can.
    static func problem(of value: FieldValue) -> String? {
        for asset in value.assets where asset.size > assetSizeLimit {
            return "asset size \(asset.size) is over the \(assetSizeLimit) bytes an asset may hold"
        }
        return nil
    }
}
