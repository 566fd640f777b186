#!/bin/sh
# The virtual time of MPI_Alltoall equals the catalog algorithm's makespan under `touchstone run`:
#   same_time.sh TOUCHSTONE PROGRAM MACHINE ALGORITHM SIZE
ts=$1 prog=$2 machine=$3 alg=$4 size=$5
a=$("$ts" run --machine "$machine" --algorithm "alltoall/$alg" --size "$size" | sed -n 's/^makespan_us *\([0-9.]*\).*/\1/p')
b=$("$ts" mpirun --machine "$machine" --coll "alltoall=$alg" "$prog" "$size" | sed -n 's/^makespan_us *\([0-9.]*\).*/\1/p')
echo "touchstone run: $a us; MPI_Alltoall: $b us"
[ -n "$a" ] && [ "$(printf '%.6f' "$a")" = "$b" ]
