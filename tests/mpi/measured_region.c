/* A region marked with MPI_Pcontrol around one MPI_Alltoall of argv[1] bytes per pair. With
 * "unended" rank 1 never ends its region; with "uneven" rank 1 marks a second one; with "twice" every
 * rank marks the same alltoall twice, the second region beginning where each rank's first ended. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(argc > 1);
  const int L = atoi(argv[1]);
  const char* mode = argc > 2 ? argv[2] : "";
  char* s = calloc((size_t)L * (size_t)size, 1);
  char* r = calloc((size_t)L * (size_t)size, 1);
  const int rounds = strcmp(mode, "twice") == 0 ? 2 : 1;
  for (int i = 0; i < rounds; ++i) {
    MPI_Pcontrol(1);
    MPI_Alltoall(s, L, MPI_CHAR, r, L, MPI_CHAR, MPI_COMM_WORLD);
    if (!(rank == 1 && strcmp(mode, "unended") == 0)) MPI_Pcontrol(0);
  }
  if (rank == 1 && strcmp(mode, "uneven") == 0) {
    MPI_Pcontrol(1);
    MPI_Pcontrol(0);
  }
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
