# Nonblocking and persistent collectives (docs/mpi.md): every MPI_Ixxx and MPI_Xxx_init with its
# results, overlapping on one and on two communicators, under generic and catalog algorithms; the
# progress model's exact times; the trace_hash under host scheduling.
foreach(t IN ITEMS nbc_all nbc_persistent nbc_overlap nbc_finalize_active nbc_woken_output)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra)
endforeach()
foreach(prog IN ITEMS nbc_all nbc_persistent)
  mpi_test(${prog}.mesh3x5_np7 ${prog} --machine mesh:3x5 -np 7)
  mpi_test(${prog}.torus4x4 ${prog} --machine torus:4x4)
  mpi_test(${prog}.mesh4x4_1lev_lin ${prog} --machine mesh:4x4 --coll alltoall=1-lev-lin)
endforeach()
mpi_test(nbc_all.torus4x4_threads nbc_all --machine torus:4x4 --execution threads)
mpi_test(nbc_all.mesh4x4_cccube nbc_all --machine mesh:4x4 --coll alltoall=cc-cube,bcast=binomial)
mpi_test(nbc_all.switch7 nbc_all --machine switch:7)
# nbc_overlap.c derives its expected times from these costs (every one not named is 0).
mpi_test(nbc_overlap.mesh1x2 nbc_overlap --machine "mesh:1x2,send_us=10,recv_us=20,send_ns_per_byte=0,\
recv_ns_per_byte=0,send_us_per_packet=0,recv_us_per_packet=0,ni_setup_us=0,send_tail_us=0,match_ns=0,\
copy_ns_per_byte=0,copy_ns_per_piece=0,probe_us=3,hop_ns=50,link_ns_per_byte=10,inject_ns_per_byte=10,\
eject_ns_per_byte=10,packet=1024+16,recv_overlap=off,send_overlap=off,barrier=hardware,barrier_us=1")
add_test(NAME mpi.determinism.nbc_all COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_nbc_all> mesh:3x4)
add_test(NAME mpi.determinism.nbc_persistent
         COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_nbc_persistent> torus:3x3)
add_test(NAME mpi.nbc_finalize_active COMMAND ${here}/expect.sh nonzero
         "MPI_Finalize on rank [0-9]+ with a nonblocking or persistent collective still active"
         ${ts} mpirun --machine mesh:2x3 -np 5 $<TARGET_FILE:mpi_test_nbc_finalize_active>)
# Whole-machine catalog algorithms in nonblocking and blocking collectives at once, on
# MPI_COMM_WORLD and a duplicate of it ("world").
foreach(sel IN ITEMS "alltoall=2-lev-c,r,allgather=combining" "allgather=LR,scatter=2-lev-rec,gather=logp-lev-sq"
                     "allgather=SB,alltoall=2-lev-c,r-int")
  string(MAKE_C_IDENTIFIER "${sel}" id)
  add_test(NAME mpi.nbc_all.mesh4x4_world_${id} COMMAND ${here}/expect.sh 0 "all checks passed"
           ${ts} mpirun --machine mesh:4x4 --coll ${sel} $<TARGET_FILE:mpi_test_nbc_all> world)
endforeach()
# Lines written in turns that their own instant woke come after the instant's first turns.
add_test(NAME mpi.nbc_woken_output COMMAND ${here}/expect_output.sh 0 ${here}/expected/nbc_woken_output.txt
         ${ts} mpirun --machine mesh:2x3 $<TARGET_FILE:mpi_test_nbc_woken_output>)
