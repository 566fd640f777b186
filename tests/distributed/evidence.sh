#!/bin/sh
# The trace and the order log of a run split over 2 and 4 Open MPI processes (touchstone-distributed
# writes them from process 0; docs/parallel.md, "Several processes") are byte for byte those of the
# run in one process, for a catalog algorithm and for an MPI program, and every process exits 0.
# With --fails the run must fail in one process and split, and the files written up to the failure
# are compared without the network's track, whose spans open at the failure a split run ends later
# (docs/parallel.md, "Failures").
#   evidence.sh [--fails] TOUCHSTONE TOUCHSTONE_DISTRIBUTED MPIRUN MACHINE (--algorithm ALG --size N | mpirun PROGRAM ARGS...)
fails=0
[ "$1" = --fails ] && fails=1 && shift
ts=$1 dist=$2 mpirun=$3 machine=$4
shift 4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$1" = mpirun ]; then
  shift
  set -- mpirun --machine "$machine" TRACE ORDER "$@"
else
  set -- --machine "$machine" TRACE ORDER "$@"
fi
# Runs touchstone (one process, when $1 is "one") or touchstone-distributed on $1 processes, writing
# the files $2 and $3.
run() {
  np=$1 trace=$2 order=$3
  shift 3
  args=""
  for a in "$@"; do
    case $a in
      TRACE) a="--trace $trace" ;;
      ORDER) a="--order-log $order" ;;
    esac
    args="$args $a"
  done
  if [ "$np" = one ]; then
    # shellcheck disable=SC2086
    case $1 in
      mpirun) "$ts" $args ;;
      *) "$ts" run $args ;;
    esac
  else
    # shellcheck disable=SC2086
    "$mpirun" --oversubscribe -np "$np" "$dist" $args
  fi
}
# ended OUT RC: the run's exit status is what it should be (0, or a failure's with --fails).
ended() {
  if [ "$fails" = 1 ]; then
    [ "$2" -ne 0 ] && return 0
  else
    [ "$2" -eq 0 ] && return 0
  fi
  cat "$1"
  return 1
}
# without_network TRACE: the trace's lines, but for a failed run those of the network's track.
without_network() {
  if [ "$fails" = 1 ]; then grep -v '"pid":3,' "$1"; else cat "$1"; fi
}
run one "$tmp/one.json" "$tmp/one.log" "$@" >"$tmp/one.out" 2>&1
rc=$?
ended "$tmp/one.out" "$rc" || { echo "one process: exit status $rc"; exit 1; }
grep -q '"ph":"f"' "$tmp/one.json" || { echo "the trace has no message arrows"; exit 1; }
grep -q 'recv #' "$tmp/one.log" || { echo "the order log has no receive"; exit 1; }
without_network "$tmp/one.json" >"$tmp/one.cmp"
for np in 2 4; do
  run "$np" "$tmp/split.json" "$tmp/split.log" "$@" >"$tmp/split.out" 2>&1
  rc=$?
  ended "$tmp/split.out" "$rc" || { echo "$np processes: exit status $rc"; exit 1; }
  without_network "$tmp/split.json" >"$tmp/split.cmp"
  cmp "$tmp/one.cmp" "$tmp/split.cmp" || { echo "$np processes: the traces differ"; exit 1; }
  if ! cmp "$tmp/one.log" "$tmp/split.log"; then
    diff "$tmp/one.log" "$tmp/split.log" | head -20
    echo "$np processes: the order logs differ"
    exit 1
  fi
  rm -f "$tmp/split.json" "$tmp/split.log"
done
echo "the same trace ($(wc -c <"$tmp/one.json") bytes) and order log ($(wc -l <"$tmp/one.log") lines)" \
  "on 1, 2 and 4 processes"
