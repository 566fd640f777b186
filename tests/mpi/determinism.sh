#!/bin/sh
# An MPI program's trace_hash is the same under fibers, --perturb and --execution threads:
#   determinism.sh TOUCHSTONE PROGRAM MACHINE [MPIRUN-OPTIONS...]
ts=$1 prog=$2 machine=$3
shift 3
hash() { "$ts" mpirun --machine "$machine" --summary "$@" 2>&1 >/dev/null | sed -n 's/.*trace_hash \([0-9a-f]*\).*/\1/p'; }
a=$(hash "$@" "$prog") b=$(hash "$@" --perturb 7 "$prog") c=$(hash "$@" --execution threads "$prog")
d=$(hash "$@" --execution threads --perturb 3 "$prog")
echo "fibers $a, perturb $b, threads $c, threads+perturb $d"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] && [ "$a" = "$d" ]
