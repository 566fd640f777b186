#!/bin/sh
# Paper 003's random scheduling as an MPI program (examples/mpi_random_scheduling.c) against the
# catalog's alltoallv/random-scheduling, on a machine where the MPI operations cost what the
# catalog's active messages cost (no per-byte costs: a request's extra header words are free; a
# hardware barrier releases every rank at once, after barrier_us = 1 us):
#   rma_random_scheduling.sh TOUCHSTONE PROGRAM MATRIX.csv
# Every rank sends and receives its data messages in the same order and at the same times (the
# order logs' data messages, tag 0, whose sizes are the matrix's). Then, on cm5:32, the program's
# trace_hash is the same under fibers, --perturb and --execution threads.
ts=$1 prog=$2 matrix=$3
machine=mesh:4x8,send_ns_per_byte=0,recv_ns_per_byte=0,link_ns_per_byte=0,inject_ns_per_byte=0,eject_ns_per_byte=0
machine=$machine,barrier=hardware,barrier_us=1
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
"$ts" run --machine "$machine" --algorithm alltoallv/random-scheduling --traffic "file=$matrix" \
  --order-log "$dir/catalog.log" > "$dir/catalog.out" || exit 1
"$ts" mpirun --machine "$machine" --order-log "$dir/mpi.log" "$prog" "$matrix" > "$dir/mpi.out" || exit 1
# Each VP's data sends and receives in program order, with their peers and their times from the
# exchange's first data send (the matrix's sizes are > 64 bytes and not multiples of 32, unlike
# every other message of either run; the MPI program's times also count MPI_Init and its window).
schedule() {
  awk '/^VP /{vp=$2}
       / (send|recv) #/{t=substr($1, 3); kind=$3
                        for(i=1;i<=NF;i++){if($i=="to"||$i=="from")peer=$(i+1); if($i=="tag")tag=$(i+1); if($i=="size")sz=$(i+1)}
                        if (tag==0 && sz>64 && sz%32!=0) {n++; v[n]=vp; k[n]=kind; p[n]=peer; s[n]=sz; at[n]=t
                                                          if (kind=="send" && (first=="" || t+0<first+0)) first=t}}
       END {for(i=1;i<=n;i++) printf "%s %s %s %s %.6f\n", v[i], k[i], p[i], s[i], at[i]-first}' "$1"
}
schedule "$dir/catalog.log" > "$dir/catalog.sched"
schedule "$dir/mpi.log" > "$dir/mpi.sched"
sends=$(grep -c " send " "$dir/catalog.sched")
catalog=$(sed -n 's/^makespan_us *//p' "$dir/catalog.out")
mpi=$(sed -n 's/.*: \([0-9.]*\) us from the barrier.*/\1/p' "$dir/mpi.out")
echo "catalog: $sends data sends, makespan $catalog us; MPI program: $mpi us from its barrier (+1 us)"
# The same sends and receives at the same times. (The makespans need not agree: a lock's release
# that arrives after its target's last receive still runs its handler on that node's CPU, which
# the catalog's makespan counts and the MPI program's clock, read before, does not.)
[ "$sends" -gt 0 ] || exit 1
cmp -s "$dir/catalog.sched" "$dir/mpi.sched" || { echo "the schedules differ"; diff "$dir/catalog.sched" "$dir/mpi.sched" | head; exit 1; }
grep -q "data checked" "$dir/mpi.out" || exit 1
hash() {
  "$ts" mpirun --machine cm5:32 --summary "$@" "$prog" "$matrix" 2>&1 >/dev/null |
    sed -n 's/.*trace_hash \([0-9a-f]*\).*/\1/p'
}
a=$(hash) b=$(hash --perturb 7) c=$(hash --execution threads --perturb 3)
echo "trace_hash: fibers $a, perturb $b, threads+perturb $c"
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" = "$c" ] || exit 1
echo "same schedule, same time"
