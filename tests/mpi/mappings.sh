#!/bin/sh
# Each rank's copy of an MPI program costs the process memory mappings, of which Linux allows
# vm.max_map_count (docs/mpi.md, "Global variables").
#   mappings.sh lean MODULE              MODULE (touchstone_add_mpi_program) has two loadable segments and no RELRO
#   mappings.sh refused TOUCHSTONE MODULE  mpirun refuses, before loading a copy, more ranks of MODULE (four
#                                          segments) than the limit allows, naming the numbers and the remedies
here=$(dirname "$0")
case $1 in
  lean)
    headers=$(readelf -lW "$2") || exit 1
    loads=$(printf '%s\n' "$headers" | grep -c ' LOAD ')
    [ "$loads" -eq 2 ] || { printf '%s\n' "$headers"; echo "mappings.sh: $loads loadable segments, wanted 2"; exit 1; }
    if printf '%s\n' "$headers" | grep -q GNU_RELRO; then
      printf '%s\n' "$headers"; echo "mappings.sh: the module has a RELRO segment"; exit 1
    fi
    echo "two loadable segments, no RELRO" ;;
  refused)
    limit=$(cat /proc/sys/vm/max_map_count) || exit 1
    # A square mesh with more ranks than a quarter of the limit; past a million mappings the machine
    # itself would be too large to build for a test.
    [ "$limit" -le 1000000 ] || { echo "vm.max_map_count is $limit: skipped"; exit 77; }
    side=1
    while [ $((side * side * 4)) -le "$limit" ]; do side=$((side + 1)); done
    ranks=$((side * side))
    exec "$here/expect.sh" 1 \
      "mpirun: $ranks ranks need $ranks copies of .* and $((ranks * 4)) memory mappings for them \(4 per copy\), more than the process may have: vm.max_map_count is $limit and [0-9]+ are in use; run the program with --no-privatize .*, or rebuild it with touchstone-mpicc .*sysctl -w vm.max_map_count=[0-9]+\)" \
      "$2" mpirun --machine "mesh:${side}x${side}" "$3" ;;
  *) echo "usage: mappings.sh lean MODULE | refused TOUCHSTONE MODULE" >&2; exit 2 ;;
esac
