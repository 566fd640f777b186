/* How a run ends (docs/mpi.md, "Exit status"): each mode ends it one way, and the test
 * (launcher.cmake) checks the exit status and that the report names the rank and the call.
 *   endings exit|return|exit_after_finalize|abort|overflow|deep_stack|overflow_at_once|spin|spin_past_send|wtime|
 *           bigcount|busy|sigint|shared */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* Deep enough to overflow a 64 KiB stack, and not a tail call the compiler could turn into a loop. */
static int recurse(volatile char* up, int depth) {
  volatile char frame[512];
  frame[0] = (char)depth;
  frame[511] = up ? up[0] : 0;
  return depth > 1000000 ? frame[0] : recurse(frame, depth + 1) + frame[511];
}

/* 512 KiB of stack, as a C program's local arrays take: more than a catalog VP's default stack
 * (128 KiB), within an MPI rank's (1 MiB). Returns a sum of its first and last bytes. */
static int deep_stack(int rank) {
  volatile char big[512 * 1024];
  big[0] = (char)rank;
  big[sizeof big - 1] = 1;
  return big[0] + big[sizeof big - 1];
}

/* A loop that waits for something no MPI call brings: it never ends. */
static volatile int never = 0;
void spin_forever(void) {
  while (!never) {
  }
}

/* Host work between two MPI calls: about 20 million additions. */
static double busy_work(void) {
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) x += 1.0;
  return x;
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "spin") == 0 && rank == 0) printf("endings: rank 0 printed this before rank 1 spun\n");
  /* Every rank's stack overflows before its first call that waits, all at once on several host
     cores, rank 0 last by host time: the report names rank 0, the one a single core meets first. */
  if (strcmp(mode, "overflow_at_once") == 0) {
    if (rank == 0) (void)busy_work();
    CHECK_EQ(deep_stack(rank), rank + 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(mode, "exit") == 0 && rank == 1) exit(3);
  if (strcmp(mode, "return") == 0 && rank == 2) return 4;
  if (strcmp(mode, "abort") == 0 && rank == 1) abort();
  if (strcmp(mode, "overflow") == 0 && rank == 2) recurse(NULL, 0);
  if (strcmp(mode, "deep_stack") == 0) CHECK_EQ(deep_stack(rank), rank + 1);
  if (strcmp(mode, "spin") == 0 && rank == 1) spin_forever();
  if (strcmp(mode, "sigint") == 0 && rank == 1) kill(getpid(), SIGINT);
  if (strcmp(mode, "spin_past_send") == 0 && rank < 2) { /* rank 1 spins past its send, on a helper thread */
    int word = rank;
    if (rank == 1) MPI_Send(&word, 1, MPI_INT, 0, 9, MPI_COMM_WORLD), spin_forever();
    else MPI_Recv(&word, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (strcmp(mode, "wtime") == 0 && rank == 0) {
    const double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 1.0) {
    }
  }
  if (strcmp(mode, "bigcount") == 0) {
    double small[8] = {0};
    if (rank == 0) MPI_Send(small, INT_MAX, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(small, 8, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (strcmp(mode, "shared") == 0 && rank == 2) {
    CHECK_EQ(chdir("/"), 0);
    CHECK_EQ(setenv("ENDINGS_SET_BY_RANK_2", "yes", 1), 0);
  }
  if (strcmp(mode, "busy") == 0) {
    const double t0 = MPI_Wtime();
    busy_work();
    const double t1 = MPI_Wtime();
    if (rank == 0) printf("busy: %s\n", t1 - t0 > 0 ? "positive" : t1 - t0 == 0 ? "zero" : "negative");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  if (strcmp(mode, "exit_after_finalize") == 0) exit(rank == 2 ? 5 : 0);
  if (rank == 0) printf("endings: all checks passed\n");
  return 0;
}
