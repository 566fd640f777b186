#!/usr/bin/env bash
# One emulation on one host core and on several (docs/performance.md, "Using more host cores for
# one emulation"): each workload runs PAIRS times with --host-cores 1 and with --host-cores N
# (default 2), interleaved on the same host, so that a pair shares the host's state of the moment.
# A run of each workload first warms the host up and is not counted (the first run after a pause
# pays for the memory the kernel must find, up to several times the run's time on a virtual
# host), and the pairs alternate which core count runs first. Prints every pair's wall times and
# speed-up, then each workload's median, and fails if the two runs of a pair differ in anything but
# host figures: more cores may change how long a run takes, never what it computes.
#
#   bench/host_cores.sh [PAIRS=3] [WORKLOAD...]
#
# Workloads (all by default):
#   fig9            touchstone sweep --machine mesh:16x16 --algorithms alltoall/1-lev-xor --sizes 16:16384 --jobs 1
#   relax           examples/mpi_relax.c on torus:8x8: 20,000 points, 20 iterations (ranks that
#                   compute between halo exchanges)
#   relax-residual  the same with an MPI_Allreduce after every iteration ("residual")
#   gather65536     touchstone run --machine mesh:256x256 --algorithm gather/logp-lev-sq --size 16
#   scatter65536    the same with scatter/logp-lev-sq
# HOST_CORES=N sets the larger core count. Touchstone must be built first (tools/setup.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ts=$root/build/bin/touchstone
relax=$root/build/examples/example_mpi_relax
pairs=${1:-3}
shift || true
workloads=("$@")
((${#workloads[@]})) || workloads=(fig9 relax relax-residual gather65536 scatter65536)
cores=${HOST_CORES:-2}
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "host_cores: PAIRS must be a positive number, not '$pairs'" >&2; exit 1; }
[[ $cores =~ ^[1-9][0-9]*$ && $cores -ge 2 ]] || { echo "host_cores: HOST_CORES must be 2 or more" >&2; exit 1; }
[[ -x $ts && -x $relax ]] || { echo "host_cores: no $ts or $relax; run tools/setup.sh first" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "host_cores: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run WORKLOAD HOST_CORES OUT: runs it, writes what must not depend on the host to OUT and the wall
# seconds to OUT.wall.
run() {
  local w=$1 hc=$2 out=$3
  local timing=(/usr/bin/time -o "$out.wall" -f %e)
  case $w in
    fig9)  # the sweep's CSV without its host columns (host_seconds, peak_rss_mb: the last two)
      "${timing[@]}" "$ts" sweep --machine mesh:16x16 --algorithms alltoall/1-lev-xor --sizes 16:16384 --jobs 1 \
        --host-cores "$hc" --format csv 2>/dev/null | sed -E 's/,[^,]*,[^,]*$//' >"$out" ;;
    relax | relax-residual)
      local extra=(); [[ $w == relax-residual ]] && extra=(residual)
      "${timing[@]}" "$ts" mpirun --machine torus:8x8 --host-cores "$hc" --result "$out.json" \
        "$relax" 20000 20 10 "${extra[@]}" >"$out" 2>&1
      sed -E 's/"(host_seconds|instants_at_once|continued_ahead)":[^,}]*,?//g' "$out.json" >>"$out" ;;
    gather65536 | scatter65536)
      local alg=gather/logp-lev-sq; [[ $w == scatter65536 ]] && alg=scatter/logp-lev-sq
      "${timing[@]}" "$ts" run --machine mesh:256x256 --algorithm "$alg" --size 16 --host-cores "$hc" --format csv \
        2>/dev/null | sed -E 's/,[^,]*,[^,]*$//' >"$out" ;;
    *) echo "host_cores: no workload '$w' (fig9 relax relax-residual gather65536 scatter65536)" >&2; exit 1 ;;
  esac
}

printf '%-15s %4s %12s %12s %9s\n' workload pair "1 core s" "$cores cores s" speed-up
for w in "${workloads[@]}"; do
  ratios=()
  run "$w" "$cores" "$work/warm-up"
  for ((i = 1; i <= pairs; ++i)); do
    if ((i % 2)); then
      run "$w" 1 "$work/one"
      run "$w" "$cores" "$work/many"
    else
      run "$w" "$cores" "$work/many"
      run "$w" 1 "$work/one"
    fi
    if ! cmp -s "$work/one" "$work/many"; then
      echo "host_cores: $w gave another result on $cores host cores than on one:" >&2
      diff "$work/one" "$work/many" | head -20 >&2
      exit 1
    fi
    one=$(cat "$work/one.wall") many=$(cat "$work/many.wall")
    ratio=$(awk -v a="$one" -v b="$many" 'BEGIN { printf "%.2f", a / b }')
    ratios+=("$ratio")
    printf '%-15s %4d %12.2f %12.2f %8sx\n' "$w" "$i" "$one" "$many" "$ratio"
  done
  median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END { print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }')
  printf '%-15s %4s %12s %12s %8sx  (median of %d; identical results)\n' "$w" "" "" "" "$median" "$pairs"
done
