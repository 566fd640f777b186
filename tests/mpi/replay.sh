#!/bin/sh
# `mpirun --schedule CHOICES` replays the same run under fibers, --perturb and --execution threads:
# its trace (written also when the run fails) is byte-identical each time, and the trace_hash it
# prints (of the run up to the failure, when it fails) is the same, the one in the trace, and the
# one `mpirun --explore 10` named beside that schedule.
#   replay.sh TOUCHSTONE PROGRAM MACHINE CHOICES WORK_DIR
ts=$1 prog=$2 machine=$3 choices=$4 work=$5
mkdir -p "$work"
"$ts" mpirun --machine "$machine" --explore 10 "$prog" >/dev/null 2>"$work/explore.txt"
grep -- "^  --schedule $choices: .*(trace_hash [0-9a-f]\{16\})\$" "$work/explore.txt" | sed 's/.*(trace_hash \(.*\))$/\1/' >"$work/h0.txt"
[ -s "$work/h0.txt" ] || { echo "--explore named no trace_hash for --schedule $choices:"; cat "$work/explore.txt"; exit 1; }
n=0
for opts in "" "--perturb 7" "--execution threads" "--execution threads --perturb 3"; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  "$ts" mpirun --machine "$machine" --schedule "$choices" --trace "$work/t$n.json" $opts "$prog" >/dev/null 2>"$work/e$n.txt"
  [ -s "$work/t$n.json" ] || { echo "run $n ($opts) wrote no trace"; exit 1; }
  grep '^trace_hash [0-9a-f]\{16\}' "$work/e$n.txt" | cut -c12-27 >"$work/h$n.txt"
  [ -s "$work/h$n.txt" ] || { echo "run $n ($opts) printed no trace_hash:"; cat "$work/e$n.txt"; exit 1; }
  grep -q "\"trace_hash\":\"$(cat "$work/h$n.txt")\"" "$work/t$n.json" || { echo "run $n: the trace has another hash"; exit 1; }
done
cmp "$work/t1.json" "$work/t2.json" && cmp "$work/t1.json" "$work/t3.json" && cmp "$work/t1.json" "$work/t4.json" &&
  cmp "$work/h0.txt" "$work/h1.txt" && cmp "$work/h1.txt" "$work/h2.txt" && cmp "$work/h1.txt" "$work/h3.txt" && cmp "$work/h1.txt" "$work/h4.txt" &&
  echo "4 replays of --schedule $choices: identical traces ($(wc -c < "$work/t1.json") bytes), trace_hash $(cat "$work/h1.txt")"
