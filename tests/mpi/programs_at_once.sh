#!/bin/sh
# An MPI program whose ranks' code runs on several host cores at once (docs/parallel.md, "The
# programs of an instant"; every instant's programs at once: --parallel-programs-from-us 0) gives
# the run of one host core: the same stdout and stderr byte for byte, exit status, trace_hash and
# makespan, on 2 and 4 host cores and perturbed; and on 2 cores some programs did run beside the
# event loop: an instant's at once, or past their waits (docs/parallel.md, "Programs that go on
# past ..."; instants_at_once + continued_ahead).
#   programs_at_once.sh TOUCHSTONE MPIRUN-ARGS...
ts=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p" "$2"; }
run() {  # run NAME OPTIONS...: NAME.out (stdout, then stderr), NAME.json (--result)
  name=$1
  shift
  "$ts" mpirun --result "$dir/$name.json" "$@" >"$dir/$name.stdout" 2>"$dir/$name.stderr"
  echo "exit status $?" >>"$dir/$name.stdout"
  cat "$dir/$name.stderr" >>"$dir/$name.stdout"
  echo "trace_hash $(field trace_hash "$dir/$name.json"), makespan_ps $(field makespan_ps "$dir/$name.json")" >>"$dir/$name.stdout"
}
run one --host-cores 1 "$@"
echo "1 core: $(tail -n 1 "$dir/one.stdout")"
grep -q "trace_hash [0-9a-f]" "$dir/one.stdout" || { cat "$dir/one.stdout"; exit 1; }
for opts in "--host-cores 2" "--host-cores 4" "--host-cores 4 --perturb 5"; do
  name=$(echo "$opts" | tr -d ' -')
  run "$name" $opts --parallel-programs-from-us 0 "$@"
  if ! cmp -s "$dir/one.stdout" "$dir/$name.stdout"; then
    echo "$opts: not the run of one core:"
    diff "$dir/one.stdout" "$dir/$name.stdout" | head -40
    exit 1
  fi
done
echo "identical on 2 and 4 cores and perturbed"
# A run that failed reports no counts; one that completed must have run some programs at once.
grep -q '"exit_status":0' "$dir/one.json" || exit 0
instants=$(field instants_at_once "$dir/hostcores2.json")
ahead=$(field continued_ahead "$dir/hostcores2.json")
echo "on 2 cores: instants_at_once ${instants:-0}, continued_ahead ${ahead:-0}"
[ $((${instants:-0} + ${ahead:-0})) -gt 0 ]
