#!/bin/sh
# An MPI program split over 2 Open MPI processes, and over 4 with --perturb (touchstone-distributed
# mpirun, docs/parallel.md "Several processes"), against `touchstone mpirun` in one process: the
# same exit status (every process's: Open MPI's mpirun fails if one does), the same summary
# (makespan, measured regions, messages, trace_hash; how a failed run ended), the same report of a
# failed run (the first failure in the run's order: a rank of another process that would have failed
# later is not named) and the same output of the ranks, in the same order (after a failure too: what
# ranks of other processes wrote past it in its window is dropped).
#   mpi_programs.sh TOUCHSTONE TOUCHSTONE_DISTRIBUTED MPIRUN MACHINE [--MPIRUN-OPTION...] PROGRAM ARGS...
ts=$1 dist=$2 mpirun=$3 machine=$4
shift 4
options=""
while [ "${1#--}" != "$1" ]; do
  options="$options $1"
  shift
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The summary without what the host decides (its seconds, the copies this process loaded); after a
# failure without the trace_hash, which may be the sum of what each process ran up to where it
# stopped (compared below where it is not).
"$ts" mpirun --machine "$machine" --summary $options "$@" >"$tmp/one.out" 2>"$tmp/one.err"
want=$?
# A report may name an address (a dynamic window's memory): where each run's process put it.
addresses() { sed -i 's/0x[0-9a-f]\{8,\}/0x(address)/g' "$1"; }
addresses "$tmp/one.err"
figures() {
  grep '^touchstone mpirun: ' "$1" | sed -e 's/, run [0-9.]* host s//' -e 's/, program loaded .*//' |
    if [ "$want" = 0 ]; then cat; else sed 's/, trace_hash [0-9a-f]*//'; fi
}
ref=$(figures "$tmp/one.err")
[ -n "$ref" ] || { echo "touchstone mpirun printed no summary"; cat "$tmp/one.err"; exit 1; }
# The report's lines, without its trace_hash (after a failure: of the processes' shares of the run)
# and the summary (compared above, without what the host decides); of a split run, without Open
# MPI's notices too (in boxes of dashes) and its event library's warnings as it tears the processes
# of a failed run down.
report() {
  sed '/^-----/,/^-----/d' "$1" | grep -v -e '^touchstone mpirun: ' -e '^trace_hash ' -e '^\[warn\] '
}
report "$tmp/one.err" >"$tmp/one.report"
for np in 2 4; do
  perturb=0
  [ "$np" = 4 ] && perturb=3
  "$mpirun" --oversubscribe -np "$np" "$dist" mpirun --machine "$machine" --summary --perturb "$perturb" $options "$@" \
    >"$tmp/split.out" 2>"$tmp/split.err"
  got=$?
  addresses "$tmp/split.err"
  if [ "$got" != "$want" ]; then
    echo "$np processes: exit status $got, one process: $want"; cat "$tmp/split.err"; exit 1
  fi
  if [ "$(figures "$tmp/split.err")" != "$ref" ]; then
    echo "$np processes:"; figures "$tmp/split.err"; echo "one process:"; echo "$ref"; exit 1
  fi
  # A failure the processes place in the run's order (a collective mismatch found at a window's end
  # too): the hash of the run up to it, the single process's. Only a window whose sends wait for its
  # frees of buffer space (buffer=) may leave the processes' shares.
  if [ "$want" != 0 ] && { [ "${machine#*buffer=}" = "$machine" ] ||
    grep -q '^trace_hash [0-9a-f]* (of the run up to the failure)$' "$tmp/split.err"; }; then
    got=$(grep '^trace_hash ' "$tmp/split.err" | sort -u) one=$(grep '^trace_hash ' "$tmp/one.err")  # every process's
    [ "$got" = "$one" ] || { echo "$np processes: '$got', one process: '$one'"; exit 1; }
    echo "$np processes: $got"
  fi
  cmp -s "$tmp/split.out" "$tmp/one.out" ||
    { echo "$np processes: the ranks' output differs"; diff "$tmp/one.out" "$tmp/split.out"; exit 1; }
  # ... and on stderr the single process's lines, in its order (what `report` sets aside aside): no
  # other failure, no rank's line past the failure, no line twice.
  report "$tmp/split.err" >"$tmp/split.report"
  cmp -s "$tmp/split.report" "$tmp/one.report" ||
    { echo "$np processes: stderr differs from one process's"; diff "$tmp/one.report" "$tmp/split.report"; exit 1; }
done
echo "$ref"
echo "the same on 2 processes and on 4 perturbed"
