/* Communicators: MPI_Comm_split ranks and sizes (colors, keys, MPI_UNDEFINED), isolation of
 * messages between communicators with the same ranks and tags (split, dup), groups, compare. */
#include "check.h"

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 4);
  int main_thread = 0;
  CHECK_EQ(MPI_Is_thread_main(&main_thread), MPI_SUCCESS);
  CHECK_EQ(main_thread, 1); /* each rank's main runs on its own VP: the rank's main thread */
  /* Colors rank % 3, keys reversing the order; the last rank opts out with MPI_UNDEFINED. */
  const int color = rank == size - 1 ? MPI_UNDEFINED : rank % 3;
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, color, size - rank, &sub);
  if (color == MPI_UNDEFINED) {
    CHECK_EQ(sub, MPI_COMM_NULL);
  } else {
    int srank, ssize, expect_size = 0, expect_rank = 0;
    for (int r = 0; r < size - 1; ++r)
      if (r % 3 == color) {
        ++expect_size;
        if (r > rank) ++expect_rank;  /* larger world ranks have smaller keys: they come first */
      }
    MPI_Comm_rank(sub, &srank);
    MPI_Comm_size(sub, &ssize);
    CHECK_EQ(ssize, expect_size);
    CHECK_EQ(srank, expect_rank);
    /* Isolation: sub-rank 0 receives with wildcards on sub while the same peer sends on
     * MPI_COMM_WORLD first with the same tag: only the sub message matches. */
    if (ssize >= 2) {
      MPI_Group wg, sg;
      int one = 1, peer_world = -1;
      MPI_Comm_group(MPI_COMM_WORLD, &wg);
      MPI_Comm_group(sub, &sg);
      MPI_Group_translate_ranks(sg, 1, &one, wg, &peer_world);
      int peer_sub = 1, zero = 0, root_world = -1;
      MPI_Group_translate_ranks(sg, 1, &zero, wg, &root_world);
      if (srank == 1) {
        int a = 111, b = 222;
        MPI_Send(&a, 1, MPI_INT, root_world, 9, MPI_COMM_WORLD);
        MPI_Send(&b, 1, MPI_INT, 0, 9, sub);
      }
      if (srank == 0) {
        int v = 0;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, sub, &st);
        CHECK_EQ(v, 222);
        CHECK_EQ(st.MPI_SOURCE, peer_sub);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
        CHECK_EQ(v, 111);
        CHECK_EQ(st.MPI_SOURCE, peer_world);
      }
      MPI_Group_free(&wg);
      MPI_Group_free(&sg);
    }
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, sub);
    CHECK_EQ(sum, expect_size);
    MPI_Comm_free(&sub);
    CHECK_EQ(sub, MPI_COMM_NULL);
  }
  /* Dup: same group, different context. A message sent on the dup is not seen on the world. */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int cmp = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
  CHECK_EQ(cmp, MPI_CONGRUENT);
  MPI_Comm_compare(dup, dup, &cmp);
  CHECK_EQ(cmp, MPI_IDENT);
  if (rank == 1) {
    int v = 5;
    MPI_Send(&v, 1, MPI_INT, 0, 1, dup);
  }
  if (rank == 0) {
    int flag = 1;
    MPI_Status st;
    MPI_Probe(1, 1, dup, &st);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag);
    int v = 0;
    MPI_Recv(&v, 1, MPI_INT, 1, 1, dup, MPI_STATUS_IGNORE);
    CHECK_EQ(v, 5);
  }
  /* MPI_Comm_create from an explicit group of the even ranks. */
  MPI_Group wg, evens;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  int n = (size + 1) / 2, ranks[64];
  for (int i = 0; i < n; ++i) ranks[i] = 2 * i;
  MPI_Group_incl(wg, n, ranks, &evens);
  int grank = -2;
  MPI_Group_rank(evens, &grank);
  CHECK_EQ(grank, rank % 2 ? MPI_UNDEFINED : rank / 2);
  MPI_Comm ec;
  MPI_Comm_create(MPI_COMM_WORLD, evens, &ec);
  if (rank % 2) {
    CHECK_EQ(ec, MPI_COMM_NULL);
  } else {
    int esize = 0, erank = -1;
    MPI_Comm_size(ec, &esize);
    MPI_Comm_rank(ec, &erank);
    CHECK_EQ(esize, n);
    CHECK_EQ(erank, rank / 2);
    MPI_Comm_free(&ec);
  }
  MPI_Group odds;
  MPI_Group_excl(wg, n, ranks, &odds);
  int osize = -1, orank = -2;
  MPI_Group_size(odds, &osize);
  MPI_Group_rank(odds, &orank);
  CHECK_EQ(osize, size - n);
  CHECK_EQ(orank, rank % 2 ? rank / 2 : MPI_UNDEFINED);
  MPI_Group_free(&odds);
  int dims2[2] = {0, 0}, dims3[3] = {0, 3, 0};
  MPI_Dims_create(12, 2, dims2);
  CHECK_EQ(dims2[0], 4);
  CHECK_EQ(dims2[1], 3);
  MPI_Dims_create(36, 3, dims3);
  CHECK_EQ(dims3[0], 4);
  CHECK_EQ(dims3[1], 3);
  CHECK_EQ(dims3[2], 3);
  MPI_Group_free(&evens);
  MPI_Group_free(&wg);
  MPI_Comm_free(&dup);
  /* MPI_COMM_SELF. */
  int sr = -1, ss = -1;
  MPI_Comm_rank(MPI_COMM_SELF, &sr);
  MPI_Comm_size(MPI_COMM_SELF, &ss);
  CHECK_EQ(sr, 0);
  CHECK_EQ(ss, 1);
  /* Collectives on MPI_COMM_SELF: one rank, its own data. */
  int mine[2] = {rank, -rank}, all[2] = {0, 0}, total = 0;
  MPI_Alltoall(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_SELF);
  CHECK_EQ(all[1], -rank);
  MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
  CHECK_EQ(total, rank);
  MPI_Bcast(mine, 2, MPI_INT, 0, MPI_COMM_SELF);
  MPI_Barrier(MPI_COMM_SELF);
  int* tag_ub = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  CHECK(flag && *tag_ub >= 32767);
  if (rank == 0) printf("comms: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
