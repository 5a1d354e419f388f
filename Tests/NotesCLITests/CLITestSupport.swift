/// Helpers of the CLI tests: a database path per test, `--json` output parsed.

import Foundation
import TestSupport

/// A database directory for one test (created by the first command that writes).
func makeDatabasePath(_ label: String) -> String { makeTemporaryDirectory(label) + "/db" }

/// Parses `--json` output.
func parseJSON(_ data: Data) throws -> Any { try JSONSerialization.jsonObject(with: data) }
