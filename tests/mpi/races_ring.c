/* Races at every rank (docs/debugging.md): each rank receives from both its ring neighbours with
 * MPI_ANY_SOURCE and tag 0, one int and then a message long enough for a rendezvous, with a
 * barrier after each round. The second round's messages are sent after the barrier, which every
 * rank reached after its first round's receives: they are causally after those receives, so they
 * are not their alternatives, and each rank's second receive of a round has none. touchstone-
 * distributed must report the same races whichever process runs a rank. */
#include <stdio.h>

#include "check.h"

enum { kLong = 20000 };
static int out[kLong], in[2][kLong];

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int i = 0; i < kLong; ++i) out[i] = rank * 7 + i;
  int count = 1;
  for (int round = 0; round < 2; ++round) {
    MPI_Request reqs[2];
    MPI_Isend(out, count, MPI_INT, left, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, count, MPI_INT, right, 0, MPI_COMM_WORLD, &reqs[1]);
    int sources = 0;
    for (int k = 0; k < 2; ++k) {
      MPI_Status st;
      MPI_Recv(in[k], count, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
      CHECK(st.MPI_SOURCE == left || st.MPI_SOURCE == right);
      CHECK_EQ(in[k][count - 1], st.MPI_SOURCE * 7 + count - 1);
      sources += st.MPI_SOURCE;
    }
    CHECK_EQ(sources, left + right);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    count = kLong;
  }
  if (rank == 0) printf("races_ring: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
