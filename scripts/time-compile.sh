#!/usr/bin/env bash
# CMAKE_CXX_COMPILER_LAUNCHER for scripts/device.sh (KOSMOS_COMPILE_TIMES=FILE): runs the compile
# and appends "<seconds> <object file>" to FILE, to find the translation units that pace the build.
start=$(date +%s.%N)
"$@"
rc=$?
object=unknown
while [ $# -gt 0 ]; do
  [ "$1" = "-o" ] && { object=$2; break; }
  shift
done
awk -v s="$start" -v e="$(date +%s.%N)" -v o="$object" 'BEGIN { printf "%.1f %s\n", e - s, o }' >>"${KOSMOS_COMPILE_TIMES:-/dev/null}"
exit $rc
