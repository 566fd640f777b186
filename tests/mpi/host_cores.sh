#!/bin/sh
# The same run on 1, 2 and 4 host cores (--host-cores, docs/parallel.md), with --perturb too: the
# lines of trace_hash and makespan that `run` prints, or the trace_hash of `mpirun --summary`.
#   host_cores.sh TOUCHSTONE run|mpirun ARGS...
ts=$1
shift
figures() { "$ts" "$@" 2>&1 | grep -oE '^makespan_us +[0-9.]+|trace_hash +[0-9a-f]+'; }
cmd=$1
shift
if [ "$cmd" = mpirun ]; then cmd="mpirun --summary"; fi
ref=$(figures $cmd --host-cores 1 "$@")
echo "1 core: $ref"
[ -n "$ref" ] || exit 1
for opts in "--host-cores 2" "--host-cores 4" "--host-cores 4 --perturb 5"; do
  got=$(figures $cmd $opts "$@")
  if [ "$got" != "$ref" ]; then
    echo "$opts: $got"
    exit 1
  fi
done
echo "identical on 2 and 4 cores, and perturbed"
