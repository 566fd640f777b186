# touchstone_add_mpi_program(NAME SOURCES...): builds an MPI program (C or C++) to run with
# `touchstone mpirun [options] ./NAME args...` (docs/mpi.md). The program is a loadable module (a
# shared object holding `main`), named NAME without prefix or suffix; it is linked with
# --no-undefined, so calling an MPI function Touchstone does not provide fails at link time,
# naming the function, and -Bsymbolic, so that its own functions and globals bind to itself. Each
# module holds its own getopt, rand and strtok state (Touchstone::mpi_rank, docs/mpi.md).
function(touchstone_add_mpi_program name)
  add_library(${name} MODULE ${ARGN})
  target_link_libraries(${name} PRIVATE Touchstone::mpi_rank Touchstone::mpi)
  set_target_properties(${name} PROPERTIES PREFIX "" SUFFIX "" POSITION_INDEPENDENT_CODE ON)
  target_link_options(${name} PRIVATE LINKER:--no-undefined LINKER:-Bsymbolic)
  # Two memory mappings per rank's copy instead of five: a process may have only vm.max_map_count.
  target_link_options(${name} PRIVATE LINKER:-z,noseparate-code LINKER:-z,norelro)
  # A rank that ends early (an MPI error, another rank failing) is unwound through the program's
  # frames: C code needs unwind tables for that. A large frame is written page by page, so that a
  # rank whose stack is too small meets its guard page instead of another rank's stack.
  target_compile_options(${name} PRIVATE -fexceptions -fstack-clash-protection)
endfunction()
