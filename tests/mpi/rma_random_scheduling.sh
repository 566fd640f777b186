#!/bin/sh
# Paper 003's random scheduling as an MPI program (examples/mpi_random_scheduling.c) against the
# catalog's alltoallv/random-scheduling, on a machine where the MPI operations cost what the
# catalog's active messages cost (no per-byte costs: a request's extra header words are free; a
# hardware barrier releases every rank at once, after barrier_us = 1 us):
#   rma_random_scheduling.sh TOUCHSTONE PROGRAM MATRIX.csv
# Every rank sends its messages in the same order (the order logs' data sends, tag 0, whose sizes
# are the matrix's), and the exchange takes the same time: the program's time from its barrier,
# plus the barrier's 1 us, is the catalog's makespan. Then, on cm5:32, the program's trace_hash is
# the same under fibers, --perturb and --execution threads.
ts=$1 prog=$2 matrix=$3
machine=mesh:4x8,send_ns_per_byte=0,recv_ns_per_byte=0,link_ns_per_byte=0,inject_ns_per_byte=0,eject_ns_per_byte=0
machine=$machine,barrier=hardware,barrier_us=1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
"$ts" run --machine "$machine" --algorithm alltoallv/random-scheduling --traffic "file=$matrix" \
  --order-log "$dir/catalog.log" > "$dir/catalog.out" || exit 1
"$ts" mpirun --machine "$machine" --order-log "$dir/mpi.log" "$prog" "$matrix" > "$dir/mpi.out" || exit 1
# The destinations of each VP's data sends, in program order (the matrix's sizes are > 64 bytes and
# not multiples of 32, unlike every other message of either run).
schedule() {
  awk '/^VP /{vp=$2}
       / send #/{for(i=1;i<=NF;i++){if($i=="to")to=$(i+1); if($i=="tag")tag=$(i+1); if($i=="size")sz=$(i+1)}
                 if (tag==0 && sz>64 && sz%32!=0) print vp, to}' "$1"
}
schedule "$dir/catalog.log" > "$dir/catalog.sched"
schedule "$dir/mpi.log" > "$dir/mpi.sched"
sends=$(wc -l < "$dir/catalog.sched")
catalog=$(sed -n 's/^makespan_us *//p' "$dir/catalog.out")
mpi=$(sed -n 's/.*: \([0-9.]*\) us from the barrier.*/\1/p' "$dir/mpi.out")
echo "catalog: $sends data sends, makespan $catalog us; MPI program: $mpi us from its barrier (+1 us)"
[ "$sends" -gt 0 ] && cmp -s "$dir/catalog.sched" "$dir/mpi.sched" || { echo "the schedules differ"; exit 1; }
awk -v a="$catalog" -v b="$mpi" 'BEGIN { exit !(a - (b + 1) < 1e-6 && (b + 1) - a < 1e-6) }' ||
  { echo "the times differ"; exit 1; }
grep -q "data checked" "$dir/mpi.out" || exit 1
hash() {
  "$ts" mpirun --machine cm5:32 --summary "$@" "$prog" "$matrix" 2>&1 >/dev/null |
    sed -n 's/.*trace_hash \([0-9a-f]*\).*/\1/p'
}
a=$(hash) b=$(hash --perturb 7) c=$(hash --execution threads --perturb 3)
echo "trace_hash: fibers $a, perturb $b, threads+perturb $c"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] || exit 1
echo "same schedule, same time"
