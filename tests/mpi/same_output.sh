#!/bin/sh
# A run's whole output, an error report included, is the same under fibers, --perturb and
# --execution threads: same_output.sh TOUCHSTONE MPIRUN-ARGS... (program and its arguments last).
ts=$1
shift
a=$("$ts" mpirun "$@" 2>&1) b=$("$ts" mpirun --perturb 7 "$@" 2>&1) c=$("$ts" mpirun --execution threads "$@" 2>&1)
printf '%s\n' "$a"
[ "$a" = "$b" ] || { echo "same_output.sh: --perturb 7 gives another output:"; printf '%s\n' "$b"; exit 1; }
[ "$a" = "$c" ] || { echo "same_output.sh: --execution threads gives another output:"; printf '%s\n' "$c"; exit 1; }
