#!/bin/sh
# A run that dies of a signal leaves its program's copies in the temporary directory; the next run
# removes them (docs/mpi.md, "Global variables").
#   copies_of_ended_runs.sh TOUCHSTONE ENDINGS_MODULE OTHER_MODULE
ts=$1 endings=$2 other=$3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
folders() { find "$tmp" -mindepth 1 -maxdepth 1 -name 'touchstone-mpirun-*' | wc -l; }
TMPDIR=$tmp "$ts" mpirun --machine mesh:2x2 "$endings" abort >/dev/null 2>&1
status=$?
[ $status -eq 134 ] || { echo "copies_of_ended_runs.sh: the aborting run exited $status, wanted 134"; exit 1; }
[ "$(folders)" -eq 1 ] || { echo "copies_of_ended_runs.sh: $(folders) copies folders after the aborted run, wanted 1"; exit 1; }
TMPDIR=$tmp "$ts" mpirun --machine mesh:2x2 "$other" >/dev/null || { echo "copies_of_ended_runs.sh: the next run failed"; exit 1; }
[ "$(folders)" -eq 0 ] || { echo "copies_of_ended_runs.sh: $(folders) copies folders after the next run, wanted 0"; exit 1; }
echo "the aborted run's copies were removed by the next run"
