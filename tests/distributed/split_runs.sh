#!/bin/sh
# One emulation split over 1, 2 and 4 Open MPI processes with real payloads (the algorithm checks the
# data it received), over 2 with two host cores each, and over 4 with phantom payloads and --perturb (touchstone-distributed,
# docs/parallel.md, "Several processes"), against `touchstone run`: every figure the run decides must
# be the same (trace_hash, makespan, events, messages, packets, blocked time), and every process must
# exit 0.
#   split_runs.sh TOUCHSTONE TOUCHSTONE_DISTRIBUTED MPIRUN MACHINE ALGORITHM SIZE...
ts=$1 dist=$2 mpirun=$3 machine=$4 algorithm=$5
shift 5
# The CI runs as root; Open MPI refuses that unless told, and there are fewer cores than processes.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
. "$(dirname "$0")/figures.sh"
for size in "$@"; do
  ref=$("$ts" run --machine "$machine" --algorithm "$algorithm" --size "$size" --format json | figures)
  [ -n "$ref" ] || { echo "touchstone run gave no figures"; exit 1; }
  for np in 1 2 2c 4 4p; do
    perturb=0 phantom= cores=1
    [ "$np" = 2c ] && np=2 cores=2  # two again, each process's VPs on two host cores
    [ "$np" = 4p ] && np=4 perturb=3 phantom=--phantom  # four again, sizes only, with seeded random host delays
    out=$("$mpirun" --oversubscribe -np "$np" "$dist" --machine "$machine" --algorithm "$algorithm" --size "$size" \
      --perturb "$perturb" $phantom --host-cores "$cores" --format json) || { echo "$np processes, $size bytes: exit status $?"; echo "$out"; exit 1; }
    got=$(echo "$out" | figures)
    if [ "$got" != "$ref" ]; then
      echo "$np processes, $size bytes:"; echo "$got"; echo "one process:"; echo "$ref"
      exit 1
    fi
  done
  echo "$machine $algorithm $size bytes: the same run on 1, 2 and 4 processes, on 2 with two host cores each, and on 4 perturbed (phantom)"
  echo "$ref" | grep trace_hash
done
