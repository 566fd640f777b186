#!/usr/bin/env bash
# Peer comparison (docs/performance.md): the Figure-9-size all-to-all (256 ranks, 16 .. MAX bytes,
# doubling, real payloads) under SimGrid SMPI and under Touchstone, interleaved: PAIRS times SMPI
# then Touchstone, on the same host. Prints each tool's output once, then per pair the CPU time
# (user + system), wall time and peak RSS of both, and SMPI's CPU over Touchstone's. Each pair also
# measures, for the decomposition in docs/performance.md, Touchstone's same sweep with --phantom
# payloads (the emulation without its memory work) and payload_floor.c (the payloads' allocation,
# fill and one copy with no emulation at all: what any tool moving real payloads pays on this host),
# and prints the best CPU ratio the floor allows, SMPI's CPU over the floor's.
#
#   bench/peer/compare_smpi.sh [MAX_BYTES=16384] [PAIRS=3]
#
# SMPI_DIR overrides the folder of the SMPI baseline (default: ../shared/bench/smpi from the
# repository root). The SMPI side is that folder's run.sh (its platform and configuration) with
# the program compiled once, outside the timing, so that both figures are of the emulation alone.
# Touchstone must be built first (tools/setup.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
max=${1:-16384}
pairs=${2:-3}
smpi_dir=${SMPI_DIR:-../shared/bench/smpi}
touchstone=$root/build/bin/touchstone

[[ -f $smpi_dir/alltoall.c && -f $smpi_dir/run.sh ]] || { echo "compare_smpi: no $smpi_dir/alltoall.c or run.sh (set SMPI_DIR)" >&2; exit 1; }
[[ -x $touchstone ]] || { echo "compare_smpi: no $touchstone; run tools/setup.sh first" >&2; exit 1; }
smpi_dir=$(cd "$smpi_dir" && pwd)
need=()
[[ -x /usr/bin/time ]] || need+=(time)
command -v smpicc >/dev/null || need+=(libsimgrid-dev)
if ((${#need[@]})); then
  sudo=(); [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# The same program, platform and options as $smpi_dir/run.sh (its 16x16 torus cluster, 25 MB/s
# links, 1 us latency, smpi/alltoall:pair, raw contexts).
smpicc -O2 "$smpi_dir/alltoall.c" -o "$work/alltoall" 2>/dev/null
cc -O3 "$root/bench/peer/payload_floor.c" -o "$work/payload_floor"
for i in $(seq 0 255); do echo "node-$i"; done > "$work/hosts"
sed -n "/^<?xml/,/^<\/platform>/p" "$smpi_dir/run.sh" > "$work/platform.xml"
grep -q '<cluster' "$work/platform.xml" || { echo "compare_smpi: no platform found in $smpi_dir/run.sh" >&2; exit 1; }

fmt="cpu=%U+%S wall=%e rss_kb=%M"
run_smpi() {
  (cd "$work" && /usr/bin/time -o "$work/time" -f "$fmt" smpirun -np 256 -platform platform.xml -hostfile hosts \
    --cfg=smpi/alltoall:pair --cfg=contexts/factory:raw ./alltoall "$max" 2>&1 | grep -E '^L=' || true)
}
run_touchstone() {
  /usr/bin/time -o "$work/time" -f "$fmt" "$touchstone" sweep --machine mesh:16x16 --algorithms alltoall/1-lev-xor \
    --sizes "16:$max" 2>/dev/null
}
run_phantom() {
  /usr/bin/time -o "$work/time" -f "$fmt" "$touchstone" sweep --machine mesh:16x16 --algorithms alltoall/1-lev-xor \
    --sizes "16:$max" --phantom >/dev/null 2>&1
}
run_floor() { /usr/bin/time -o "$work/time" -f "$fmt" "$work/payload_floor" "$max" >/dev/null; }
# "cpu=U+S wall=W rss_kb=M" -> "CPU WALL MB"
figures() { sed -E 's/cpu=([0-9.]+)\+([0-9.]+) wall=([0-9.]+) rss_kb=([0-9]+)/\1 \2 \3 \4/' "$work/time" |
  awk '{ printf "%.2f %.2f %d\n", $1 + $2, $3, $4 / 1024 }'; }

# Each pair's row as soon as it is measured (a long comparison on a busy host keeps what it has).
header() {
  printf '%4s %10s %10s %8s %10s %10s %8s %9s %9s %12s %13s %15s\n' pair smpi_cpu_s smpi_wall smpi_mb ts_cpu_s ts_wall ts_mb \
    cpu_ratio wall_ratio phantom_cpu_s floor_cpu_s smpi_over_floor
}
row() {
  awk '{ printf "%4d %10.2f %10.2f %8d %10.2f %10.2f %8d %9.1f %9.1f %12.2f %13.2f %15.1f\n",
         $1, $2, $3, $4, $5, $6, $7, $2 / $5, $3 / $6, $8, $9, $2 / $9 }' <<<"$1"
}
for ((i = 1; i <= pairs; ++i)); do
  out=$(run_smpi); s=$(figures)
  ((i == 1)) && { echo "== SimGrid SMPI ($smpi_dir/alltoall.c, 256 ranks)"; echo "$out"; echo; }
  out=$(run_touchstone); t=$(figures)
  ((i == 1)) && { echo "== Touchstone: touchstone sweep --machine mesh:16x16 --algorithms alltoall/1-lev-xor --sizes 16:$max"; echo "$out"; echo; header; }
  run_phantom; ph=$(figures | cut -d' ' -f1)
  run_floor; fl=$(figures)
  row "$i $s $t $ph $fl"
done
