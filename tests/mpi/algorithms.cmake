# The MPI libraries' collective algorithms (docs/mpi.md, "Collectives"), chosen with --coll and
# by the decision rules of --coll-selector, on rank counts that are not powers of two.
touchstone_add_mpi_program(mpi_test_coll_algorithms coll_algorithms.c)
target_compile_options(mpi_test_coll_algorithms PRIVATE -Wall -Wextra)

mpi_test(coll_algorithms.default_np13 coll_algorithms --machine mesh:3x5 -np 13)
mpi_test(coll_algorithms.mpich_rules_np13 coll_algorithms --machine mesh:3x5 -np 13 --coll-selector mpich)
mpi_test(coll_algorithms.mpich_rules_np16 coll_algorithms --machine torus:4x4 --coll-selector mpich)
mpi_test(coll_algorithms.ompi_rules_np13 coll_algorithms --machine mesh:3x5 -np 13 --coll-selector ompi)
mpi_test(coll_algorithms.ompi_rules_np7 coll_algorithms --machine mesh:1x7 --coll-selector ompi)
mpi_test(coll_algorithms.log_np13 coll_algorithms --machine mesh:3x5 -np 13
         --coll allreduce=rabenseifner,bcast=scatter-allgather,reduce=rabenseifner,reduce_scatter=recursive-halving
         --coll allgather=bruck,alltoall=bruck,barrier=dissemination,scan=recursive-doubling,exscan=recursive-doubling)
mpi_test(coll_algorithms.rings_np7 coll_algorithms --machine mesh:1x7
         --coll allreduce=ring,bcast=chain,reduce_scatter=ring,allgather=neighbor-exchange,alltoall=pairwise,barrier=tree)
mpi_test(coll_algorithms.mixed_np12 coll_algorithms --machine torus:3x4
         --coll "allreduce=recursive-doubling,reduce_scatter=pairwise,allgather=recursive-doubling,alltoall=linear,bcast=chain(100)")
mpi_test(coll_algorithms.neighbor_np12 coll_algorithms --machine mesh:3x5 -np 12
         --coll allgather=neighbor-exchange,allreduce=ring,scan=linear --coll-selector mpich)
mpi_test(coll_algorithms.np5 coll_algorithms --machine mesh:5x1
         --coll reduce=rabenseifner,allreduce=rabenseifner,reduce_scatter=recursive-halving,barrier=tree,bcast=chain)
# The broad collectives test under both libraries' rules.
mpi_test(collectives.mpich_rules_np13 collectives --machine mesh:3x5 -np 13 --coll-selector mpich)
mpi_test(collectives.ompi_rules_np27 collectives --machine cm5:32 -np 27 --coll-selector ompi)
# Same trace hash under fibers, --perturb and threads, with the libraries' algorithms.
add_test(NAME mpi.determinism.coll_algorithms COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_coll_algorithms>
         mesh:3x5 -np 13 --coll-selector mpich --coll bcast=chain,allreduce=ring)
add_test(NAME mpi.determinism.coll_algorithms_ompi COMMAND ${here}/determinism.sh ${ts}
         $<TARGET_FILE:mpi_test_coll_algorithms> torus:3x4 --coll-selector ompi)
# A selector that does not exist is refused before the program runs.
add_test(NAME mpi.coll_selector_unknown COMMAND ${ts} mpirun --machine mesh:2x2 --coll-selector lam
         $<TARGET_FILE:mpi_test_coll_algorithms>)
set_tests_properties(mpi.coll_selector_unknown PROPERTIES WILL_FAIL TRUE)
# MPI_Allreduce takes exactly the catalog algorithm's time, gamma included, whether --coll names
# the algorithm or MPICH's rules pick it (recursive doubling up to 2048 bytes, Rabenseifner above).
touchstone_add_mpi_program(mpi_test_allreduce_time allreduce_time.c)
set(gamma_delta "delta:4x4,reduce_int_ns_per_byte=2")
foreach(alg IN ITEMS ring rabenseifner recursive-doubling reduce-bcast)
  add_test(NAME mpi.allreduce_time.${alg} COMMAND ${here}/same_time_coll.sh ${ts} $<TARGET_FILE:mpi_test_allreduce_time>
           ${gamma_delta} allreduce/${alg} 4096 --coll allreduce=${alg})
endforeach()
add_test(NAME mpi.allreduce_time.mpich_short COMMAND ${here}/same_time_coll.sh ${ts} $<TARGET_FILE:mpi_test_allreduce_time>
         ${gamma_delta} allreduce/recursive-doubling 2048 --coll-selector mpich)
add_test(NAME mpi.allreduce_time.mpich_long COMMAND ${here}/same_time_coll.sh ${ts} $<TARGET_FILE:mpi_test_allreduce_time>
         ${gamma_delta} allreduce/rabenseifner 2056 --coll-selector mpich)
# Open MPI's fixed rules on 16 processes: below 64 bytes segmented ring (the catalog's ring),
# recursive doubling from 64 bytes, Rabenseifner from 4096.
add_test(NAME mpi.allreduce_time.ompi_small COMMAND ${here}/same_time_coll.sh ${ts} $<TARGET_FILE:mpi_test_allreduce_time>
         ${gamma_delta} allreduce/ring 32 --coll-selector ompi)
add_test(NAME mpi.allreduce_time.ompi_medium COMMAND ${here}/same_time_coll.sh ${ts} $<TARGET_FILE:mpi_test_allreduce_time>
         ${gamma_delta} allreduce/recursive-doubling 1024 --coll-selector ompi)
add_test(NAME mpi.allreduce_time.ompi_long COMMAND ${here}/same_time_coll.sh ${ts} $<TARGET_FILE:mpi_test_allreduce_time>
         ${gamma_delta} allreduce/rabenseifner 4096 --coll-selector ompi)
