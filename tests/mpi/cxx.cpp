// <mpi.h> from C++: a C++ program (std::vector, exceptions in its own code) using MPI.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<double> mine(4, rank), sum(4);
  MPI_Allreduce(mine.data(), sum.data(), 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  try {
    if (sum[3] != size * (size - 1) / 2.0) throw std::runtime_error("wrong sum");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  std::vector<int> all(static_cast<std::size_t>(size));
  MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> want(all.size());
  std::iota(want.begin(), want.end(), 0);
  if (all != want) MPI_Abort(MPI_COMM_WORLD, 3);
  if (rank == 0) std::printf("cxx: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
