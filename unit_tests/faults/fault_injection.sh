#!/usr/bin/env bash
# Fault injection on the kosmos tool: a file size limit that makes a write fail after N bytes,
# SIGKILL during a write and during a checkpointed run. What must hold: a failed run exits
# non-zero with a message naming the file; an existing output is never replaced by a partial one;
# temporaries of a killed run are removed by the next run of the same output; a checkpoint written
# before a kill resumes to the end.
#   fault_injection.sh KOSMOS WORK_DIR
set -uo pipefail
kosmos=${1:?}
work=${2:?}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# 1. A write that fails after 64 KiB (RLIMIT_FSIZE; SIGXFSZ ignored so that write() returns EFBIG).
echo "old results" > big.txt
out=$( (trap '' XFSZ; ulimit -f 64; exec "$kosmos" nbody --generate 2000 --destination 0 --output big.txt) 2>&1)
code=$?
[ $code -eq 1 ] && pass "write failing after 64 KiB exits 1" || fail "write failing after 64 KiB exited $code: $out"
grep -q "big.txt" <<<"$out" && pass "the message names the file" || fail "no file named in: $out"
[ "$(cat big.txt)" = "old results" ] && pass "the old output is kept" || fail "the old output was replaced"
ls big.txt.tmp.* >/dev/null 2>&1 && fail "a temporary was left: $(ls big.txt.tmp.*)" || pass "no temporary left"

# 2. SIGKILL while the output is being written: the old output stays whole; the next run of the
# same output removes the dead process's temporary.
echo "old results" > killed.txt
"$kosmos" nbody --generate 400000 --destination 0 --output killed.txt >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do ls killed.txt.tmp.* >/dev/null 2>&1 && break; sleep 0.05; done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[ "$(cat killed.txt)" = "old results" ] && pass "kill -9 during a write keeps the old output" ||
  fail "kill -9 during a write changed the output"
stale=$(ls killed.txt.tmp.* 2>/dev/null | head -n1)
if [ -n "$stale" ]; then
  "$kosmos" nbody --generate 2 --destination 0 --output killed.txt >/dev/null 2>&1 ||
    fail "the run after the kill failed"
  [ -e "$stale" ] && fail "the dead run's temporary $stale is still there" ||
    pass "the next run removed the dead run's temporary"
else
  echo "note: the kill came before or after the temporary existed; the stale-temporary case was not exercised"
fi

# 3. SIGKILL during a checkpointed run: the last checkpoint resumes to the destination.
"$kosmos" nbody --generate 64 --integrator hermite --dt 1e-3 --destination 20 --checkpoint run.ckpt \
  --checkpoint-interval 0.5 --output final.txt >/dev/null 2>&1 &
pid=$!
for _ in $(seq 400); do [ -s run.ckpt ] && break; sleep 0.05; done
sleep 0.3
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if [ -s run.ckpt ]; then
  ls run.ckpt.tmp.* >/dev/null 2>&1 && echo "note: a checkpoint temporary was left by the kill"
  if "$kosmos" nbody --resume run.ckpt --output resumed.txt >resume.log 2>&1; then
    pass "a checkpoint written before kill -9 resumes"
  else
    fail "resume after kill -9 failed: $(tail -n 3 resume.log)"
  fi
else
  fail "no checkpoint was written before the kill"
fi

echo "$failures failure(s)"
[ $failures -eq 0 ]
