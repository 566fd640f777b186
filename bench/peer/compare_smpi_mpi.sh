#!/usr/bin/env bash
# Peer comparison on the same MPI source (docs/performance.md): SMPI's alltoall.c (256 ranks,
# 16 .. MAX bytes, doubling) under SimGrid SMPI on its 16x16 torus cluster (run.sh), then the very
# same file built with touchstone-mpicc and run by `touchstone mpirun` on torus:16x16, back to back.
# Prints both programs' output (their virtual times), then host wall seconds and peak RSS.
#
#   bench/peer/compare_smpi_mpi.sh [MAX_BYTES=16384] [MACHINE=torus:16x16]
#
# SMPI_DIR overrides the folder of the SMPI baseline (default: ../shared/bench/smpi).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
max=${1:-16384}
machine=${2:-torus:16x16}
smpi_dir=${SMPI_DIR:-../shared/bench/smpi}
[[ -x $smpi_dir/run.sh ]] || { echo "compare_smpi_mpi: no $smpi_dir/run.sh (set SMPI_DIR)" >&2; exit 1; }
[[ -x build/bin/touchstone ]] || { echo "compare_smpi_mpi: build Touchstone first (tools/setup.sh)" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
build/bin/touchstone-mpicc -O2 "$smpi_dir/alltoall.c" -o "$work/alltoall"

echo "== SimGrid SMPI: $smpi_dir/run.sh $max"
smpi_out=$("$smpi_dir/run.sh" "$max")
echo "$smpi_out"
smpi_line=$(grep -E '^host_seconds=' <<<"$smpi_out" | tail -1)

echo
echo "== Touchstone: touchstone mpirun --machine $machine ./alltoall $max (touchstone-mpicc -O2)"
/usr/bin/time -o "$work/time" -f "host_seconds=%e peak_rss_kb=%M" build/bin/touchstone mpirun --machine "$machine" "$work/alltoall" "$max"
ts_s=$(sed -nE 's/.*host_seconds=([0-9.]+).*/\1/p' "$work/time")
ts_kb=$(sed -nE 's/.*peak_rss_kb=([0-9]+).*/\1/p' "$work/time")

echo
printf '%-12s %14s %14s\n' "" host_seconds peak_rss_mb
printf '%-12s %14s %14s\n' smpi "$(sed -E 's/.*host_seconds=([0-9.]+).*/\1/' <<<"$smpi_line")" "$(sed -E 's/.*peak_rss_mb=([0-9.]+).*/\1/' <<<"$smpi_line")"
printf '%-12s %14s %14s\n' touchstone "$ts_s" "$((ts_kb / 1024))"
