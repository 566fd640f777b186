#!/bin/sh
# `touchstone sweep --program` (docs/benchmarking.md):
#   sweep_program.sh same-makespan TOUCHSTONE PROGRAM DIR
#     the MPI all-to-all of examples/mpi_alltoall_xor.c beside alltoall/all on mesh:16x16, 16..256 B:
#     `touchstone table` of the saved CSV has the five sizes as rows and the program as a column,
#     every record has a trace_hash, and at every size the program's makespan equals
#     alltoall/1-lev-xor's to the picosecond (the CSV's microseconds have 6 decimals).
#   sweep_program.sh copy-cost TOUCHSTONE PROGRAM DIR
#     the same on delta:2x2, whose nodes pay for local copies (copy_ns_per_piece=2828,
#     copy_ns_per_byte=8.106): the catalog charges the copy of a rank's own block, the MPI program's
#     memcpy is computation, free under --compute zero; the catalog's makespan is longer by exactly
#     2828 ns + 8.106 ns x size, and equal with the copy cost set to 0.
#   sweep_program.sh per-algorithm TOUCHSTONE PROGRAM DIR
#     an OSU-style program (sizes of its own) under --coll alltoall=all: one row per catalog
#     algorithm, one winner, every run's 5 regions measured; the 1-lev-xor row is what
#     `mpirun --result` measures for that algorithm alone.
mode=$1 ts=$2 prog=$3 dir=$4
mkdir -p "$dir" || exit 1
fail() { echo "sweep_program.sh: $*"; exit 1; }
case $mode in
same-makespan)
  csv=$dir/same_makespan.csv
  "$ts" sweep --program "$prog" --args '{size}' --sizes 16:256 --machine mesh:16x16 --algorithms alltoall/all \
    --format csv --out "$csv" || fail "the sweep failed"
  "$ts" table "$csv" > "$dir/same_makespan.txt" || fail "touchstone table failed"
  cat "$dir/same_makespan.txt"
  name=program:$(basename "$prog")
  head -1 "$dir/same_makespan.txt" | grep -q '^mesh:16x16 (256 processors): virtual makespan in ms' || fail "title"
  sed -n 2p "$dir/same_makespan.txt" | grep -q "alltoall/1-lev-xor .* $name  *lead\$" || fail "columns"
  [ "$(sed -n '3,$p' "$dir/same_makespan.txt" | awk 'NF > 2 && $1 ~ /^[0-9]+$/ {printf "%s ", $1}')" = "16 32 64 128 256 " ] ||
    fail "rows are not the sizes 16 .. 256"
  [ "$(grep -c . "$csv")" -eq 66 ] || fail "expected 65 records (13 columns x 5 sizes)"
  # (alltoall/2-lev-c,r is quoted, its comma shifts the fields: the hash is found by its form)
  [ "$(grep -Ec ',[0-9a-f]{16},[0-9.]+,[0-9.]+$' "$csv")" -eq 65 ] || fail "a record without trace_hash"
  for size in 16 32 64 128 256; do
    a=$(awk -F, -v s=$size '$2 == "alltoall/1-lev-xor" && $3 == s {print $5}' "$csv")
    b=$(awk -F, -v s=$size -v n="$name" '$2 == n && $3 == s {print $5}' "$csv")
    echo "size $size: alltoall/1-lev-xor $a us, $name $b us"
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "size $size: the makespans differ"
  done ;;
copy-cost)
  name=program:$(basename "$prog")
  for machine in delta:2x2 delta:2x2,copy_ns_per_byte=0,copy_ns_per_piece=0; do
    csv=$dir/copy_cost.csv
    "$ts" sweep --program "$prog" --args '{size}' --sizes 64:128 --machine "$machine" \
      --algorithms alltoall/1-lev-xor --format csv --out "$csv.quoted" || fail "the sweep on $machine failed"
    sed 's/^"[^"]*",/machine,/' "$csv.quoted" > "$csv"  # a machine with options is quoted: its commas
    for size in 64 128; do
      # makespan_us has 6 decimals: without the point it is picoseconds
      a=$(awk -F, -v s=$size '$2 == "alltoall/1-lev-xor" && $3 == s {sub(/\./, "", $5); print $5 + 0}' "$csv")
      b=$(awk -F, -v s=$size -v n="$name" '$2 == n && $3 == s {sub(/\./, "", $5); print $5 + 0}' "$csv")
      want=$((2828000 + 8106 * size))
      case $machine in *copy_ns_per_byte=0*) want=0 ;; esac
      echo "$machine size $size: catalog $a ps, MPI $b ps, difference $((a - b)) ps, expected $want"
      [ -n "$a" ] && [ -n "$b" ] && [ $((a - b)) -eq $want ] || fail "$machine size $size: not the copy's cost"
    done
  done ;;
per-algorithm)
  "$ts" sweep --program "$prog" --coll alltoall=all --machine mesh:4x4 > "$dir/per_algorithm.txt" ||
    fail "the sweep failed"
  cat "$dir/per_algorithm.txt"
  rows=$(grep -c '^ *program:.*\[alltoall=[^]]*\]  ' "$dir/per_algorithm.txt")
  # The catalog's all-to-alls as mpirun --help lists them (", " between names: 2-lev-c,r holds a
  # comma), less those with a parameter to fill in (pipelined-cc-cube(N)).
  algs=$("$ts" mpirun --help | sed -n 's/^ *alltoall: //p' | sed 's/, /\n/g' | grep -vc '(')
  [ "$rows" -eq "$algs" ] || fail "$rows rows, expected one per catalog all-to-all ($algs)"
  [ "$(grep -c '\*$' "$dir/per_algorithm.txt")" -eq 1 ] || fail "not exactly one winner"
  "$ts" sweep --program "$prog" --coll alltoall=all --machine mesh:4x4 --format json > "$dir/per_algorithm.json" ||
    fail "the JSON sweep failed"
  [ "$(grep -c '"measured_regions": 5' "$dir/per_algorithm.json")" -eq "$rows" ] || fail "not 5 regions per run"
  "$ts" mpirun --machine mesh:4x4 --coll alltoall=1-lev-xor --result "$dir/xor.json" "$prog" > /dev/null || fail mpirun
  ps=$(sed -n 's/.*"measured_ps":\([0-9]*\).*/\1/p' "$dir/xor.json")
  us=$(awk -v ps="$ps" 'BEGIN {printf "%.3f", ps / 1e9}')
  grep -q "program:$(basename "$prog")\[alltoall=1-lev-xor\]  *$us" "$dir/per_algorithm.txt" ||
    fail "the 1-lev-xor row is not $us ms (mpirun --result: $ps ps)" ;;
*) fail "unknown mode $mode" ;;
esac
echo "sweep_program.sh: $mode passed"
