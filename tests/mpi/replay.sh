#!/bin/sh
# `mpirun --schedule CHOICES` replays the same run under fibers, --perturb and --execution threads:
# its trace (written also when the run fails) is byte-identical each time.
#   replay.sh TOUCHSTONE PROGRAM MACHINE CHOICES WORK_DIR
ts=$1 prog=$2 machine=$3 choices=$4 work=$5
mkdir -p "$work"
n=0
for opts in "" "--perturb 7" "--execution threads" "--execution threads --perturb 3"; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  "$ts" mpirun --machine "$machine" --schedule "$choices" --trace "$work/t$n.json" $opts "$prog" >/dev/null 2>&1
  [ -s "$work/t$n.json" ] || { echo "run $n ($opts) wrote no trace"; exit 1; }
done
cmp "$work/t1.json" "$work/t2.json" && cmp "$work/t1.json" "$work/t3.json" && cmp "$work/t1.json" "$work/t4.json" &&
  echo "4 replays of --schedule $choices: identical traces ($(wc -c < "$work/t1.json") bytes)"
