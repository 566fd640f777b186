#!/usr/bin/env bash
# Peer comparison (docs/performance.md): the Figure-9-size all-to-all (256 ranks, 16 .. MAX bytes,
# doubling) under SimGrid SMPI, then under Touchstone, back to back on the same host. Prints each
# tool's output, then host wall seconds and peak RSS of both side by side.
#
#   bench/peer/compare_smpi.sh [MAX_BYTES=16384]
#
# SMPI_DIR overrides the folder of the SMPI baseline (default: ../shared/bench/smpi from the
# repository root). Touchstone must be built first (tools/setup.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
max=${1:-16384}
smpi_dir=${SMPI_DIR:-../shared/bench/smpi}
touchstone=build/bin/touchstone

[[ -x $smpi_dir/run.sh ]] || { echo "compare_smpi: no $smpi_dir/run.sh (set SMPI_DIR)" >&2; exit 1; }
[[ -x $touchstone ]] || { echo "compare_smpi: no $touchstone; run tools/setup.sh first" >&2; exit 1; }
if [[ ! -x /usr/bin/time ]]; then
  sudo=(); [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi

echo "== SimGrid SMPI: $smpi_dir/run.sh $max"
smpi_out=$("$smpi_dir/run.sh" "$max")
echo "$smpi_out"
# run.sh already prints peak_rss_mb in MB.
smpi_line=$(grep -E '^host_seconds=' <<<"$smpi_out" | tail -1)
smpi_s=$(sed -E 's/.*host_seconds=([0-9.]+).*/\1/' <<<"$smpi_line")
smpi_mb=$(sed -E 's/.*peak_rss_mb=([0-9.]+).*/\1/' <<<"$smpi_line")

echo
echo "== Touchstone: $touchstone sweep --machine mesh:16x16 --algorithms alltoall/1-lev-xor --sizes 16:$max"
time_file=$(mktemp); trap 'rm -f "$time_file"' EXIT
/usr/bin/time -o "$time_file" -f "host_seconds=%e peak_rss_kb=%M" \
  "$touchstone" sweep --machine mesh:16x16 --algorithms alltoall/1-lev-xor --sizes "16:$max"
ts_s=$(sed -nE 's/.*host_seconds=([0-9.]+).*/\1/p' "$time_file")
ts_kb=$(sed -nE 's/.*peak_rss_kb=([0-9]+).*/\1/p' "$time_file")
ts_mb=$(awk -v kb="$ts_kb" 'BEGIN { printf "%d", kb / 1024 }')

echo
printf '%-12s %14s %14s\n' "" host_seconds peak_rss_mb
printf '%-12s %14s %14s\n' smpi "$smpi_s" "$smpi_mb"
printf '%-12s %14s %14s\n' touchstone "$ts_s" "$ts_mb"
