#!/bin/sh
# Two spellings of one run give one trace_hash:
#   same_hash.sh TOUCHSTONE "PROGRAM [ARGS...]" "MPIRUN-ARGS A" "MPIRUN-ARGS B"
ts=$1 prog=$2
hash() { "$ts" mpirun --summary $1 $prog 2>&1 >/dev/null | sed -n 's/.*trace_hash \([0-9a-f]*\).*/\1/p'; }
a=$(hash "$3") b=$(hash "$4")
echo "$3: $a; $4: $b"
[ -n "$a" ] && [ "$a" = "$b" ]
