#!/usr/bin/env bash
# The plug-in of examples/plugin_bruck.cpp loaded by `touchstone sweep`, `run` and `mpirun`
# (docs/extending.md), and the errors of --plugin.
#   plugin_check.sh TOUCHSTONE PLUGIN_BRUCK WRONG_PLUGIN CLASH_PLUGIN NOT_A_PLUGIN MPI_ALLTOALL_PROGRAM
set -uo pipefail
ts=$1 bruck=$2 wrong=$3 clash=$4 not_plugin=$5 mpi_prog=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_error EXIT_CODE MESSAGE ARGS...: touchstone ARGS exits EXIT_CODE, saying MESSAGE on stderr.
expect_error() {
  local code=$1 message=$2
  shift 2
  "$ts" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [[ $rc == "$code" ]] || fail "$* exited $rc, not $code: $(cat "$tmp/err")"
  grep -qF -- "$message" "$tmp/err" || fail "$*: stderr lacks '$message': $(cat "$tmp/err")"
}

# A sweep beside the whole alltoall/ family: every algorithm at every size is a row, the plug-in's
# two (named twice, run once) included, and no run failed its data check (the sweep exits 0 and no
# row says failed).
"$ts" sweep --plugin "$bruck" --machine mesh:16x16 --algorithms 'alltoall/all,alltoall/my-bruck,alltoall/my-bruck(4)' \
  --sizes 16:256 --jobs 1 --format csv >"$tmp/sweep.csv" 2>"$tmp/sweep.err" || fail "sweep: $(cat "$tmp/sweep.err")"
catalog=$("$ts" list algorithms | grep -c '^alltoall/')
rows=$(grep -cE '^mesh:16x16,"?alltoall/' "$tmp/sweep.csv")  # names with a comma are quoted
[[ $rows == $(((catalog + 2) * 5)) ]] || fail "sweep: $rows rows, not ($catalog catalog + 2 plug-in) x 5 sizes"
for alg in 'alltoall/my-bruck' 'alltoall/my-bruck(4)'; do
  for size in 16 32 64 128 256; do
    grep -qF "mesh:16x16,$alg,$size,256," "$tmp/sweep.csv" || fail "sweep: no row for $alg at $size"
  done
done
grep -q failed "$tmp/sweep.csv" "$tmp/sweep.err" && fail "sweep: a run failed: $(cat "$tmp/sweep.err")"
# The plug-in's radix-2 Bruck sends what the catalog's does: the same messages, the same makespan.
mine=$(grep -F ',alltoall/my-bruck,64,' "$tmp/sweep.csv" | cut -d, -f5,6)
theirs=$(grep -F ',alltoall/bruck,64,' "$tmp/sweep.csv" | cut -d, -f5,6)
[[ -n $mine && $mine == "$theirs" ]] || fail "my-bruck at 64 B: '$mine', alltoall/bruck: '$theirs'"

# run, with the table's figures.
"$ts" run --plugin "$bruck" --machine mesh:3x5 --algorithm 'alltoall/my-bruck(3)' --size 100 >"$tmp/run.out" 2>&1 \
  || fail "run: $(cat "$tmp/run.out")"
grep -q '^vps  *15$' "$tmp/run.out" || fail "run: $(cat "$tmp/run.out")"

# mpirun: the plug-in's algorithm stands in for MPI_Alltoall, on 13 and 11 ranks, sub-communicators
# included, and the program's own data checks pass.
for args in "--machine mesh:3x5 -np 13 --coll alltoall=my-bruck" \
  "--machine torus:3x4 -np 11 --coll alltoall=my-bruck(3)"; do
  # shellcheck disable=SC2086
  "$ts" mpirun --plugin "$bruck" $args "$mpi_prog" >"$tmp/mpi.out" 2>&1 || fail "mpirun $args: $(cat "$tmp/mpi.out")"
  grep -q 'all checks passed' "$tmp/mpi.out" || fail "mpirun $args: $(cat "$tmp/mpi.out")"
done
# Without the plug-in the name is unknown.
expect_error 1 "unknown algorithm 'alltoall/my-bruck'" mpirun --machine mesh:2x2 --coll alltoall=my-bruck "$mpi_prog"

# A plug-in's algorithm is checked as the catalog's are: one that delivers nothing fails (exit 2).
expect_error 2 "failed" run --plugin "$wrong" --machine mesh:2x2 --algorithm alltoall/no-exchange --size 16
# The errors of --plugin.
expect_error 1 "--plugin '$tmp/missing.so': no such file" sweep --plugin "$tmp/missing.so" --algorithms alltoall/all
echo "not a shared object" >"$tmp/text.so"
expect_error 1 "--plugin '$tmp/text.so': cannot load it" run --plugin "$tmp/text.so" --algorithm alltoall/bruck
expect_error 1 "is not a Touchstone plug-in: it defines no extern \"C\" touchstone_register_algorithms" \
  mpirun --plugin "$not_plugin" --machine mesh:2x2 "$mpi_prog"
expect_error 1 "algorithm 'alltoall/bruck' is already in the catalog" sweep --plugin "$clash" --algorithms alltoall/all
expect_error 1 "'alltoall/my-bruck(1)': the radix must be an integer >= 2" \
  run --plugin "$bruck" --algorithm 'alltoall/my-bruck(1)'
# The parameter is read whole (touchstone/number_text.hpp): std::stoi took ' 4' as 4.
expect_error 1 "'alltoall/my-bruck( 4)': the radix must be an integer >= 2" \
  run --plugin "$bruck" --algorithm 'alltoall/my-bruck( 4)'

if ((failures)); then
  echo "plugin_check: $failures failure(s)" >&2
  exit 1
fi
echo "plugin_check: all checks passed"
