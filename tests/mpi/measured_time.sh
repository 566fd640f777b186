#!/bin/sh
# The region a program marks with MPI_Pcontrol around MPI_Alltoall measures exactly the catalog
# algorithm's makespan under `touchstone run`, when every rank begins it at one instant:
#   measured_time.sh TOUCHSTONE PROGRAM MACHINE ALGORITHM SIZE RESULT_FILE
ts=$1 prog=$2 machine=$3 alg=$4 size=$5 result=$6
a=$("$ts" run --machine "$machine" --algorithm "alltoall/$alg" --size "$size" | sed -n 's/^makespan_us *\([0-9.]*\).*/\1/p')
"$ts" mpirun --machine "$machine" --coll "alltoall=$alg" --result "$result" "$prog" "$size" || exit 1
b=$(sed -n 's/.*"measured_ps":\([0-9]*\).*/\1/p' "$result")
regions=$(sed -n 's/.*"measured_regions":\([0-9]*\).*/\1/p' "$result")
echo "touchstone run: $a us; measured region: $b ps over $regions region(s)"
[ -n "$a" ] && [ "$regions" = 1 ] && [ "$(printf '%.6f' "$a" | tr -d .)" -eq "$b" ]
