#!/usr/bin/env bash
# The test TraceViewers.ChromeTraceEngine: traces of the kinds Touchstone writes (VP spans with
# message arrows, network waits with "blocked by" arrows, active-message handler tracks, a failed
# run's unreceived messages), each read by Chrome DevTools' trace engine (check_trace.mjs).
#   run_check.sh TOUCHSTONE ENGINE_DIR WORK_DIR
# Exit 77 (ctest: skipped) with the reason when node or the engine is missing.
set -uo pipefail
touchstone=$1 engine=$2 work=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! command -v node >/dev/null; then
  echo "SKIP: node is not installed (tools/setup.sh installs it)"; exit 77
fi
if [[ ! -f $engine/trace_engine.mjs ]]; then
  echo "SKIP: Chrome's trace engine is not installed in $engine (tools/setup.sh runs tests/trace_engine/install.sh $engine)"
  exit 77
fi
mkdir -p "$work"
status=0
check() {  # NAME EXPECTED_EXIT ARGS...
  local name=$1 want=$2; shift 2
  "$touchstone" run "$@" --trace "$work/$name.json" >/dev/null 2>&1
  local got=$?
  if [[ $got != "$want" ]]; then echo "FAIL: touchstone run $* exited $got, expected $want"; status=1; return; fi
  node "$here/check_trace.mjs" "$engine" "$work/$name.json" || status=1
}
check contended 0 --machine mesh:4x4 --algorithm alltoall/1-lev-dir --size 256
check handlers 0 --machine mesh:4x4 --algorithm alltoallv/random-scheduling --size 4096 --traffic k=8,l=1/4,t=4096
exit $status
