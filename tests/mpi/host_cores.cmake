# --host-cores (docs/parallel.md): trace_hash and makespan the same on 1, 2 and 4 host cores and
# under --perturb, for catalog runs and MPI programs (run-ahead start acts); and MPI programs whose
# ranks' code runs at once at every instant give the output, exit status and run of one core.
foreach(c IN ITEMS "xor.mesh8x8;mesh:8x8;alltoall/1-lev-xor;1100" "bcast.delta16x16;delta:16x16;bcast/binomial;4096"
                   "gather.cm5;cm5:64;gather/2-lev-rec;600" "allgather.switch2;switch2:16+16;allgather/SO-ring;512")
  list(GET c 0 name)
  list(GET c 1 machine)
  list(GET c 2 algorithm)
  list(GET c 3 size)
  add_test(NAME cli.host_cores.${name} COMMAND ${here}/host_cores.sh ${ts} run --machine ${machine}
           --algorithm ${algorithm} --size ${size})
endforeach()
add_test(NAME mpi.host_cores.collectives COMMAND ${here}/host_cores.sh ${ts} mpirun --machine mesh:3x4
         $<TARGET_FILE:mpi_test_collectives>)
add_test(NAME mpi.host_cores.p2p COMMAND ${here}/host_cores.sh ${ts} mpirun --machine torus:3x3
         $<TARGET_FILE:mpi_test_p2p>)
if(TOUCHSTONE_BUILD_EXAMPLES)
  add_test(NAME mpi.host_cores.example_halo COMMAND ${here}/host_cores.sh ${ts} mpirun --machine torus:4x4
           $<TARGET_FILE:example_mpi_halo>)
  add_test(NAME mpi.host_cores.example_ring COMMAND ${here}/host_cores.sh ${ts} mpirun --machine torus:4x4
           $<TARGET_FILE:example_mpi_ring>)
endif()
touchstone_add_mpi_program(mpi_test_past_send_output past_send_output.c)
target_compile_options(mpi_test_past_send_output PRIVATE -Wall -Wextra)
foreach(t IN ITEMS "collectives;mesh:3x4;mpi_test_collectives" "p2p;torus:3x3;mpi_test_p2p"
                  "past_send_output;mesh:2x2;mpi_test_past_send_output"
                  "datatypes;mesh:3x5;mpi_test_datatypes"
                  "topo_neighbor;mesh:3x4;mpi_test_topo_neighbor"
                  "osu_alltoall;torus:3x3;mpi_test_osu_alltoall"
                  "failure_at_the_start;torus:3x3;mpi_test_nbc_overlap")  # every rank prints and aborts
  list(GET t 0 name)
  list(GET t 1 machine)
  list(GET t 2 target)
  add_test(NAME mpi.programs_at_once.${name} COMMAND ${here}/programs_at_once.sh ${ts} --machine ${machine}
           $<TARGET_FILE:${target}>)
endforeach()
# Unfinished lines at a collective that fails, tagged: each rank's comes out whole at the end, also
# when its program went on past the collective's sends on another host core.
add_test(NAME mpi.programs_at_once.partial_line_tagged COMMAND ${here}/programs_at_once.sh ${ts} --machine mesh:1x5
         --tag-output $<TARGET_FILE:mpi_test_partial_line>)
if(TOUCHSTONE_BUILD_EXAMPLES)
  add_test(NAME mpi.programs_at_once.example_relax COMMAND ${here}/programs_at_once.sh ${ts} --machine torus:4x4
           $<TARGET_FILE:example_mpi_relax> 2000 8 2)
  add_test(NAME mpi.programs_at_once.example_relax_tagged COMMAND ${here}/programs_at_once.sh ${ts} --machine
           torus:4x4 --tag-output $<TARGET_FILE:example_mpi_relax> 500 6 1)
  add_test(NAME mpi.programs_at_once.example_relax_residual COMMAND ${here}/programs_at_once.sh ${ts} --machine
           torus:4x4 $<TARGET_FILE:example_mpi_relax> 1000 6 2 residual)
  add_test(NAME mpi.programs_at_once.example_type_mismatch COMMAND ${here}/programs_at_once.sh ${ts} --machine
           mesh:2x3 -np 6 $<TARGET_FILE:example_mpi_type_mismatch>)
endif()
# errno kept across a receive whose rank goes on on another host thread (mpi.h's errno), and the
# rest of a rank's C library state.
add_test(NAME mpi.programs_at_once.rank_libc COMMAND ${here}/programs_at_once.sh ${ts} --machine mesh:2x3 -np 5
         $<TARGET_FILE:mpi_test_rank_libc> input -v -n 5 --name=abc -qw rest -- -x)
