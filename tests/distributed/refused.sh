#!/bin/sh
# What a split run cannot carry yet is refused in every process, with the reason and exit status 1
# (touchstone-distributed, docs/parallel.md "Several processes"), or STATUS where the run finds it and
# fails (2):
#   [STATUS=N] refused.sh TOUCHSTONE_DISTRIBUTED MPIRUN EXPECTED-TEXT ARGS...
dist=$1 mpirun=$2 want=$3
shift 3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$("$mpirun" --oversubscribe -np 2 "$dist" "$@" 2>&1)
rc=$?
echo "$out"
[ "$rc" -ne 0 ] || { echo "exit status 0: the run was not refused"; exit 1; }
[ "$rc" -eq "${STATUS:-1}" ] || { echo "exit status $rc, not ${STATUS:-1}"; exit 1; }
# The processes say why, from their own ranks' calls or before the run.
n=$(echo "$out" | grep -c -- "$want")
[ "$n" -ge 1 ] || { echo "no error naming '$want'"; exit 1; }
echo "refused, exit status $rc"
