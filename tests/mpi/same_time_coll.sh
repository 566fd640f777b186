#!/bin/sh
# The virtual time of one MPI collective equals the makespan of a catalog algorithm under
# `touchstone run`, with the algorithm chosen by the mpirun options given (--coll or --coll-selector):
#   same_time_coll.sh TOUCHSTONE PROGRAM MACHINE CATALOG-ALGORITHM SIZE MPIRUN-OPTIONS...
ts=$1 prog=$2 machine=$3 alg=$4 size=$5
shift 5
a=$("$ts" run --machine "$machine" --algorithm "$alg" --size "$size" | sed -n 's/^makespan_us *\([0-9.]*\).*/\1/p')
b=$("$ts" mpirun --machine "$machine" "$@" "$prog" "$size" | sed -n 's/^makespan_us *\([0-9.]*\).*/\1/p')
echo "touchstone run $alg: $a us; MPI ($*): $b us"
[ -n "$a" ] && [ "$(printf '%.6f' "$a")" = "$b" ]
