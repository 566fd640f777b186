#!/bin/sh
# An MPI program's trace_hash is the same under fibers on one host core, --perturb, --execution
# threads, and with the ranks' code of every instant at once on 4 host cores (docs/parallel.md):
#   determinism.sh TOUCHSTONE PROGRAM MACHINE [MPIRUN-OPTIONS...]
ts=$1 prog=$2 machine=$3
shift 3
hash() { "$ts" mpirun --machine "$machine" --summary "$@" 2>&1 >/dev/null | sed -n 's/.*trace_hash \([0-9a-f]*\).*/\1/p'; }
a=$(hash "$@" --host-cores 1 "$prog") b=$(hash "$@" --perturb 7 "$prog") c=$(hash "$@" --execution threads "$prog")
d=$(hash "$@" --execution threads --perturb 3 "$prog")
e=$(hash "$@" --host-cores 4 --parallel-programs-from-us 0 --perturb 5 "$prog")
echo "fibers $a, perturb $b, threads $c, threads+perturb $d, at once on 4 cores $e"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] && [ "$a" = "$d" ] && [ "$a" = "$e" ]
