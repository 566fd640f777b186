/* Every MPI-4 persistent collective (MPI_Xxx_init) with its results checked, started again and
 * again with MPI_Startall and MPI_Start while their buffers change, on MPI_COMM_WORLD and a split
 * communicator at once, beside nonblocking and blocking collectives; inactive requests; misuse. */
#include "nbc_cases.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  static NbcBufs w, h;
  nbc_setup(&w, MPI_COMM_WORLD);
  nbc_setup(&h, half);
  MPI_Request rw[NBC_COUNT], rh[NBC_COUNT], all[2 * NBC_COUNT];
  for (int i = 0; i < NBC_COUNT; ++i) {
    nbc_post(&w, i, 1, &rw[i]);
    nbc_post(&h, NBC_COUNT - 1 - i, 1, &rh[NBC_COUNT - 1 - i]);
  }
  /* Inactive requests: a wait returns at once with an empty status, a waitany finds none. */
  MPI_Status st;
  st.MPI_SOURCE = 12345;
  CHECK_EQ(MPI_Wait(&rw[3], &st), MPI_SUCCESS);
  CHECK(rw[3] != MPI_REQUEST_NULL);
  CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
  int index = 0;
  CHECK_EQ(MPI_Waitany(NBC_COUNT, rw, &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(index, MPI_UNDEFINED);
  for (int k = 0; k < 4; ++k) {
    nbc_fill(&w, k);
    nbc_fill(&h, k);
    CHECK_EQ(MPI_Startall(NBC_COUNT, rw), MPI_SUCCESS);
    int x = k, y = -1; /* a nonblocking and a blocking collective beside them on the same communicator */
    MPI_Request ib;
    CHECK_EQ(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ib), MPI_SUCCESS);
    for (int i = 0; i < NBC_COUNT; ++i) CHECK_EQ(MPI_Start(&rh[(i + k) % NBC_COUNT]), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NBC_COUNT; ++i) all[i] = rw[i], all[NBC_COUNT + i] = rh[i];
    if (k % 2 == 0) {
      CHECK_EQ(MPI_Waitall(2 * NBC_COUNT, all, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    } else {
      int flag = 0;
      while (!flag) CHECK_EQ(MPI_Testall(2 * NBC_COUNT, all, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    }
    for (int i = 0; i < 2 * NBC_COUNT; ++i) CHECK(all[i] != MPI_REQUEST_NULL); /* persistent: kept */
    CHECK_EQ(MPI_Wait(&ib, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(y, size * k);
    nbc_check(&w, k);
    nbc_check(&h, k);
  }
  /* Misuse: starting an active request, freeing one, starting a nonpersistent one. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Start(&rw[0]), MPI_SUCCESS);
  CHECK_EQ(MPI_Start(&rw[0]), MPI_ERR_REQUEST);
  CHECK_EQ(MPI_Request_free(&rw[0]), MPI_ERR_REQUEST);
  CHECK_EQ(MPI_Wait(&rw[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
  MPI_Request ib;
  CHECK_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &ib), MPI_SUCCESS);
  CHECK_EQ(MPI_Start(&ib), MPI_ERR_REQUEST);
  CHECK_EQ(MPI_Wait(&ib, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(MPI_Startall(-1, rw), MPI_ERR_COUNT);
  /* A collective's error (here a root out of range on every rank) is reported when it completes. */
  int v = 0;
  CHECK_EQ(MPI_Ibcast(&v, 1, MPI_INT, size + 5, MPI_COMM_WORLD, &ib), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&ib, MPI_STATUS_IGNORE), MPI_ERR_ROOT);
  CHECK(ib == MPI_REQUEST_NULL);
  for (int i = 0; i < NBC_COUNT; ++i) {
    CHECK_EQ(MPI_Request_free(&rw[i]), MPI_SUCCESS);
    CHECK_EQ(MPI_Request_free(&rh[i]), MPI_SUCCESS);
    CHECK(rw[i] == MPI_REQUEST_NULL && rh[i] == MPI_REQUEST_NULL);
  }
  nbc_free(&w);
  nbc_free(&h);
  MPI_Comm_free(&half);
  return all_checks_passed("nbc_persistent");
}
