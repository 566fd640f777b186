/* The collectives whose catalog algorithms need the whole machine (paper 000's two-level
 * all-to-alls, paper 004's all-gathers, paper 001's broadcasts), on MPI_COMM_WORLD only: run by
 * tests/CMakeLists.txt with --coll choosing them. Checks every element. With argument "root0"
 * the rooted collectives use root 0 only (bcast/binary-tree starts at the mesh's corner). */
#include <string.h>
#include <stdlib.h>

#include "check.h"

static int val(int r, int d, int i) { return 100000 * r + 100 * d + i; }

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  const int L = 5;
  int* send = malloc(sizeof(int) * (size_t)(size * L));
  int* recv = malloc(sizeof(int) * (size_t)(size * L));
  for (int d = 0; d < size; ++d)
    for (int i = 0; i < L; ++i) send[d * L + i] = val(rank, d, i);
  MPI_Alltoall(send, L, MPI_INT, recv, L, MPI_INT, MPI_COMM_WORLD);
  for (int s = 0; s < size; ++s)
    for (int i = 0; i < L; ++i) CHECK_EQ(recv[s * L + i], val(s, rank, i));
  MPI_Allgather(send, L, MPI_INT, recv, L, MPI_INT, MPI_COMM_WORLD);
  for (int s = 0; s < size; ++s)
    for (int i = 0; i < L; ++i) CHECK_EQ(recv[s * L + i], val(s, 0, i));
  const int step = argc > 1 && strcmp(argv[1], "root0") == 0 ? size : 3;
  for (int root = 0; root < size; root += step) {
    int b[7];
    for (int i = 0; i < 7; ++i) b[i] = rank == root ? val(root, 1, i) : -1;
    MPI_Bcast(b, 7, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < 7; ++i) CHECK_EQ(b[i], val(root, 1, i));
    int mine[5];
    for (int d = 0; d < size; ++d)
      for (int i = 0; i < L; ++i) send[d * L + i] = val(root, d, i);
    MPI_Scatter(send, L, MPI_INT, mine, L, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < L; ++i) CHECK_EQ(mine[i], val(root, rank, i));
    for (int i = 0; i < L; ++i) mine[i] = val(rank, root, i);
    MPI_Gather(mine, L, MPI_INT, recv, L, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root)
      for (int s = 0; s < size; ++s)
        for (int i = 0; i < L; ++i) CHECK_EQ(recv[s * L + i], val(s, root, i));
  }
  free(send), free(recv);
  if (rank == 0) printf("coll_world: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
