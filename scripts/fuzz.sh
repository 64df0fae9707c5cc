#!/usr/bin/env bash
# Fuzzes every reader of untrusted input for a bounded time: BUILD is a build with
# -DKOSMOS_ENABLE_FUZZING=ON (clang; CI's sanitizer stage is one). Each reader starts from its seed
# corpus (fuzz/corpus/<reader>/, copied: the corpus in the clone is never changed); a crash,
# sanitizer report, timeout or out-of-memory input is kept in BUILD/fuzz-findings/ and printed
# (base64), to be added to fuzz/regressions/<reader>/ with the fix, and the run fails.
#   scripts/fuzz.sh BUILD [READER...]     KOSMOS_FUZZ_SECONDS per reader (default 15)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: scripts/fuzz.sh BUILD [READER...]}" && pwd)
shift
seconds=${KOSMOS_FUZZ_SECONDS:-15}
fuzzer=$build/fuzz/kosmos_fuzz
[ -x "$fuzzer" ] || { echo "fuzz.sh: $fuzzer not built (configure with -DKOSMOS_ENABLE_FUZZING=ON)"; exit 2; }
readers=("$@")
[ ${#readers[@]} -gt 0 ] || readers=($(cd "$root/fuzz/corpus" && ls))
findings=$build/fuzz-findings
mkdir -p "$findings"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for reader in "${readers[@]}"; do
  corpus=$work/$reader
  mkdir -p "$corpus"
  cp "$root/fuzz/corpus/$reader"/* "$corpus"/
  if KOSMOS_FUZZ_READER=$reader ASAN_OPTIONS=detect_leaks=0 TMPDIR=$work \
      "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
      -print_final_stats=1 -artifact_prefix="$findings/$reader-" "$corpus" > "$work/$reader.log" 2>&1; then
    echo "$reader: $(grep -E '^stat::number_of_executed_units' "$work/$reader.log" | awk '{print $2}') inputs in ${seconds} s, no finding"
  else
    failed=1
    echo "$reader: FINDING (last lines of the log; the input, base64, follows)"
    tail -n 40 "$work/$reader.log"
    for f in "$findings/$reader"-*; do [ -f "$f" ] && { echo "== $f"; base64 "$f"; }; done
  fi
done
exit $failed
