#!/bin/sh
# A split run's debugging options (touchstone-distributed, docs/parallel.md "Several processes")
# against `touchstone run` with the same arguments, on 2 and 3 Open MPI processes: the same exit
# status; after a completed run the same figures and, from process 0, the same findings (--races,
# --explain) byte for byte; after a failed one the same failure, named by every process, and the
# same trace_hash where the processes could place the failure.
#   findings.sh TOUCHSTONE TOUCHSTONE_DISTRIBUTED MPIRUN ARGS...
ts=$1 dist=$2 mpirun=$3
shift 3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/figures.sh"
"$ts" run "$@" --format json > "$tmp/ref.out" 2> "$tmp/ref.err"
ref_rc=$?
echo "touchstone run: exit status $ref_rc"
cat "$tmp/ref.out" "$tmp/ref.err"
for np in 2 3; do
  "$mpirun" --oversubscribe -np "$np" "$dist" "$@" --format json > "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ "$rc" -eq "$ref_rc" ] || { echo "$np processes: exit status $rc"; cat "$tmp/out" "$tmp/err"; exit 1; }
  if [ "$rc" -eq 0 ]; then
    figures < "$tmp/ref.out" > "$tmp/ref.fig"
    figures < "$tmp/out" > "$tmp/fig"
    [ -s "$tmp/ref.fig" ] && cmp -s "$tmp/ref.fig" "$tmp/fig" ||
      { echo "$np processes: other figures"; cat "$tmp/fig"; exit 1; }
    cmp -s "$tmp/ref.err" "$tmp/err" || { echo "$np processes: other findings"; diff "$tmp/ref.err" "$tmp/err"; exit 1; }
  else
    # The failure's own line ("rank R failed at t=...: ...") from every process.
    want=$(grep -m1 -E "failed at t=|time limit" "$tmp/ref.err" | sed 's/^error: //')
    [ -n "$want" ] || { echo "touchstone run named no failure"; exit 1; }
    n=$(grep -cF -- "$want" "$tmp/err")
    [ "$n" -ge 1 ] || { echo "$np processes: no process names '$want'"; cat "$tmp/err"; exit 1; }
    # ... and the single process's trace_hash, where the processes could place the failure in the
    # run's order (docs/parallel.md, "Failures").
    if grep -q '^trace_hash [0-9a-f]* (of the run up to the failure)$' "$tmp/err"; then
      got=$(grep '^trace_hash ' "$tmp/err" | sort -u) one=$(grep '^trace_hash ' "$tmp/ref.err")
      [ "$got" = "$one" ] || { echo "$np processes: '$got', one process: '$one'"; exit 1; }
    fi
  fi
  echo "$np processes: the same (exit status $rc)"
done
