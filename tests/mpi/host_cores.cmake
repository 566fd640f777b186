# --host-cores (docs/parallel.md): trace_hash and makespan the same on 1, 2 and 4 host cores and
# under --perturb, for catalog runs (run-ahead start acts) and MPI programs (they stay serial).
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
