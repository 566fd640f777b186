# Derived datatypes, packing and type queries (docs/mpi.md, "Datatypes"): every constructor
# through point-to-point and collectives, pack/unpack and external32, reductions on pair, complex
# and derived types, Fortran's named types used from C; on meshes and tori with process counts
# that are not powers of two.
foreach(t IN ITEMS datatypes datatypes_pack datatypes_reduce datatypes_fortran)
  touchstone_add_mpi_program(mpi_test_${t} ${t}.c)
  target_compile_options(mpi_test_${t} PRIVATE -Wall -Wextra)
  mpi_test(${t}.mesh3x5_np7 ${t} --machine mesh:3x5 -np 7)
  mpi_test(${t}.torus4x4 ${t} --machine torus:4x4)
endforeach()
mpi_test(datatypes.switch3 datatypes --machine switch:3)
mpi_test(datatypes_reduce.cm5_np27 datatypes_reduce --machine cm5:32 -np 27)
target_link_libraries(mpi_test_datatypes_reduce PRIVATE m)

# The same trace_hash under fibers, --perturb and --execution threads.
add_test(NAME mpi.determinism.datatypes COMMAND ${here}/determinism.sh ${ts} $<TARGET_FILE:mpi_test_datatypes> mesh:3x5)
add_test(NAME mpi.determinism.datatypes_reduce COMMAND ${here}/determinism.sh ${ts}
         $<TARGET_FILE:mpi_test_datatypes_reduce> torus:4x4)
