/* Global variables: every rank increments a global counter once and a static array entry. With
 * privatization (the default) each rank sees only its own increment; with --no-privatize the
 * ranks share one copy and the last rank to run sees them all. argv[1] says which is expected. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

int counter = 0;
static int seen[1024];

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  ++counter;
  seen[rank] = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  int marks = 0;
  for (int i = 0; i < size; ++i) marks += seen[i];
  const int shared = argc > 1 && strcmp(argv[1], "shared") == 0;
  CHECK_EQ(counter, shared ? size : 1);
  CHECK_EQ(marks, shared ? size : 1);
  if (rank == 0) printf("globals: %s, counter %d on rank 0\n", shared ? "shared" : "private", counter);
  MPI_Finalize();
  return 0;
}
