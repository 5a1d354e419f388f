/// Directory listings never lie: listings run in a
/// loop (`ls`, `ls -f`, `ls -l`, `find`) while the foreground creates and renames (or removes) files
/// in the listed directory; after every round the names must say the truth.

import Foundation
import Glibc
import TestSupport
import Testing

/// The race script: `MODE` is `mv` (create f-k, rename it over g-k) or `rm` (then remove g-k).
/// Prints one `RESULT` line with the counts of each kind of lie, and a line per failure.
private let raceScript = #"""
    set -u
    cd "$MNT"
    mkdir d || exit 90
    stop="$SCRATCH/stop"
    (while [ ! -e "$stop" ]; do ls d >/dev/null; ls -f d >/dev/null; ls -l d >/dev/null; find d >/dev/null; done) 2>/dev/null &
    lister=$!
    fails=0 leftover=0 wrong=0 aliased=0 lingering=0
    for n in $(seq "$ROUNDS"); do
        k=$((n % 20))
        if ! echo $n > d/f-$k.md; then fails=$((fails + 1)); echo "round $n: create of f-$k failed"; fi
        mv -f d/f-$k.md d/g-$k.md || { fails=$((fails + 1)); echo "round $n: mv failed"; }
        if [ -e d/f-$k.md ]; then leftover=$((leftover + 1)); echo "round $n: f-$k still there"; fi
        got=$(cat d/g-$k.md)
        if [ "$got" != "$n" ]; then wrong=$((wrong + 1)); echo "round $n: g-$k holds '$got'"; fi
        dups=$(stat -c %i d/* 2>/dev/null | sort | uniq -d | wc -l)
        if [ "$dups" != 0 ]; then aliased=$((aliased + 1)); echo "round $n: $dups inodes shared by two names"; fi
        if [ "$MODE" = rm ]; then
            rm d/g-$k.md || { fails=$((fails + 1)); echo "round $n: rm failed"; }
            if [ -e d/g-$k.md ]; then lingering=$((lingering + 1)); echo "round $n: g-$k still there after rm"; fi
        fi
    done
    touch "$stop"
    wait $lister
    # Every file's final content: g-k holds the last round with n % 20 == k (mv), or nothing is left (rm).
    if [ "$MODE" = mv ]; then
        for n in $(seq $((ROUNDS - 19)) "$ROUNDS"); do
            k=$((n % 20))
            got=$(cat d/g-$k.md)
            if [ "$got" != "$n" ]; then wrong=$((wrong + 1)); echo "final: g-$k holds '$got', not $n"; fi
        done
        count=$(ls d | wc -l)
        if [ "$count" != 20 ]; then leftover=$((leftover + 1)); echo "final: $count entries, not 20"; fi
    else
        count=$(ls -A d | wc -l)
        if [ "$count" != 0 ]; then lingering=$((lingering + 1)); echo "final: $count entries left"; fi
    fi
    echo "RESULT fails=$fails leftover=$leftover wrong=$wrong aliased=$aliased lingering=$lingering"
    """#

@Suite(.tags(.mount), .needsFUSE, .serialized) struct ListingRaceTests {
    private func race(mode: String) throws {
        let scratch = makeTemporaryDirectory("notesfsrace")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try withNotesMount(timeout: 240) { m in
            let result = try run(
                ["/bin/bash", "-c", raceScript],
                environment: ["MNT": m.root, "SCRATCH": scratch, "ROUNDS": "300", "MODE": mode], timeout: 220)
            #expect(result.status == 0, "\(result)")
            let summary = result.out.split(separator: "\n").last { $0.hasPrefix("RESULT ") }.map(String.init)
            #expect(summary == "RESULT fails=0 leftover=0 wrong=0 aliased=0 lingering=0", "\(result.out.suffix(3000))")
        }
    }

    /// Create f-k, `mv -f` it over g-k, 300 rounds with listings running: no alias, no lost content.
    @Test func createAndRenameWhileListing() throws { try race(mode: "mv") }

    /// The same with `rm` of g-k each round: no create fails, nothing lingers.
    @Test func createRenameAndRemoveWhileListing() throws { try race(mode: "rm") }
}
