// `touchstone-distributed mpirun ARGS...`: one process of an Open MPI job that runs its share of an
// MPI program's ranks (docs/parallel.md, "Several processes").
#pragma once

/// Starts `touchstone mpirun --split-pipe ... ARGS...` (the touchstone beside this program) as a
/// child, carries each of its swaps through Open MPI (mpi_partition.hpp), and returns its exit status.
int relay_mpirun(int argc, char** argv);
