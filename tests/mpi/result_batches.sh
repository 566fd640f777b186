#!/bin/sh
# mpirun --result counts how much of the ranks' code could run at once (docs/mpi.md): two ranks
# that start together and leave each of two barriers together (mesh:1x2, the dissemination
# barrier's one round: each sends to the other at the same time) resume at 3 instants, 2 segments
# at each; the counts are virtual, the same on 1 and 2 host cores and on threads, perturbed.
#   result_batches.sh TOUCHSTONE HELLO
ts=$1 hello=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
want='"batches":{"instants":3,"rounds":{"16":3,"2":3,"4":3,"8":3},"segments":6,"widest":2}'
for opts in "--host-cores 1" "--host-cores 2 --parallel-programs-from-us 0" "--execution threads --perturb 3"; do
  "$ts" mpirun --machine mesh:1x2 $opts --result "$dir/r.json" "$hello" >/dev/null || exit 1
  grep -qF "$want" "$dir/r.json" || { echo "$opts: $(cat "$dir/r.json"), not $want"; exit 1; }
done
echo "3 instants of 2 segments, on 1 and 2 host cores and on threads"
