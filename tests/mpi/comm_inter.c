/* Intercommunicators (MPI-3.1 section 6.6 and 5.2.2): the world split into group A (ranks 0..2)
 * and group B (the rest: 4 of 7 ranks), joined by MPI_Intercomm_create; queries, point-to-point
 * naming remote ranks, every collective from one group to the other, merge with either order,
 * duplicate and split. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int in_a, nl, nr, lr, world_rank, world_size;

/* World rank of rank r of the remote group, or of the local group. */
static int remote_world(int r) { return in_a ? 3 + r : r; }
static int local_world(int r) { return in_a ? r : 3 + r; }

static void queries(MPI_Comm ic) {
  int flag = 0, n = -1, r = -1;
  MPI_Comm_test_inter(ic, &flag);
  CHECK(flag);
  MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
  CHECK(!flag);
  MPI_Comm_size(ic, &n);
  CHECK_EQ(n, nl);
  MPI_Comm_rank(ic, &r);
  CHECK_EQ(r, lr);
  MPI_Comm_remote_size(ic, &n);
  CHECK_EQ(n, nr);
  MPI_Group remote, local, world;
  MPI_Comm_remote_group(ic, &remote);
  MPI_Comm_group(ic, &local);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  for (int i = 0; i < nr; ++i) {
    int w = -1;
    MPI_Group_translate_ranks(remote, 1, &i, world, &w);
    CHECK_EQ(w, remote_world(i));
  }
  for (int i = 0; i < nl; ++i) {
    int w = -1;
    MPI_Group_translate_ranks(local, 1, &i, world, &w);
    CHECK_EQ(w, local_world(i));
  }
  MPI_Group_free(&remote);
  MPI_Group_free(&local);
  MPI_Group_free(&world);
  int result = -1;
  MPI_Comm dup;
  MPI_Comm_dup(ic, &dup);
  MPI_Comm_compare(ic, dup, &result);
  CHECK_EQ(result, MPI_CONGRUENT);
  MPI_Comm_compare(ic, MPI_COMM_WORLD, &result);
  CHECK_EQ(result, MPI_UNEQUAL);
  MPI_Comm_test_inter(dup, &flag);
  CHECK(flag);
  MPI_Comm_free(&dup);
  /* A rank of the local group size or more is out of range when the remote group is smaller. */
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Send(&n, 1, MPI_INT, nr, 0, ic), MPI_ERR_RANK);
  CHECK_EQ(MPI_Scan(&n, &r, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
  CHECK_EQ(MPI_Bcast(&n, 1, MPI_INT, nr, ic), MPI_ERR_ROOT);
  /* A v- or w-collective's null displacements, on every rank: refused before it communicates. */
  int zeros[8] = {0};
  MPI_Datatype ints[8] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT};
  CHECK_EQ(MPI_Allgatherv(&n, 0, MPI_INT, &r, zeros, NULL, MPI_INT, ic), MPI_ERR_ARG);
  CHECK_EQ(MPI_Alltoallv(&n, zeros, NULL, MPI_INT, &r, zeros, zeros, MPI_INT, ic), MPI_ERR_ARG);
  CHECK_EQ(MPI_Alltoallw(&n, zeros, zeros, ints, &r, zeros, NULL, ints, ic), MPI_ERR_ARG);
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
}

/* Every process sends one message to every remote rank and receives one from each with
 * MPI_ANY_SOURCE: the status names the sender's rank in the remote group. */
static void point_to_point(MPI_Comm ic) {
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)nr);
  int* out = malloc(sizeof(int) * (size_t)nr);
  for (int r = 0; r < nr; ++r) {
    out[r] = 1000 * world_rank + remote_world(r);
    MPI_Isend(&out[r], 1, MPI_INT, r, 7, ic, &reqs[r]);
  }
  int seen = 0;
  for (int k = 0; k < nr; ++k) {
    int v = -1;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, ic, &st);
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nr);
    CHECK_EQ(v, 1000 * remote_world(st.MPI_SOURCE) + world_rank);
    seen |= 1 << st.MPI_SOURCE;
  }
  CHECK_EQ(seen, (1 << nr) - 1);
  MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE);
  /* A named source, a probe, and MPI_PROC_NULL. */
  const int partner = lr % nr;
  if (in_a || lr < 3) {
    int v = world_rank, got = -1;
    MPI_Status st;
    if (in_a) {
      MPI_Send(&v, 1, MPI_INT, partner, 8, ic);
    } else {
      MPI_Probe(partner, 8, ic, &st);
      CHECK_EQ(st.MPI_SOURCE, partner);
      MPI_Recv(&got, 1, MPI_INT, partner, 8, ic, &st);
      CHECK_EQ(got, remote_world(partner));
    }
  }
  MPI_Status st;
  MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, ic, &st);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  free(out);
  free(reqs);
}

/* The root argument: MPI_ROOT at the root, MPI_PROC_NULL at the rest of its group, the root's
 * rank in the other group. */
static int root_arg(int root_in_a, int root_rank) {
  if (in_a == root_in_a) return lr == root_rank ? MPI_ROOT : MPI_PROC_NULL;
  return root_rank;
}

static int sum_remote_world(void) {
  int s = 0;
  for (int r = 0; r < nr; ++r) s += remote_world(r);
  return s;
}

static void rooted(MPI_Comm ic) {
  int buf[5];
  /* Bcast from A's rank 1 to B, then from B's last rank to A. */
  for (int i = 0; i < 5; ++i) buf[i] = in_a && lr == 1 ? 10 + i : -1;
  MPI_Bcast(buf, 5, MPI_INT, root_arg(1, 1), ic);
  if (!in_a)
    for (int i = 0; i < 5; ++i) CHECK_EQ(buf[i], 10 + i);
  if (in_a && lr != 1) CHECK_EQ(buf[0], -1);
  const int b_last = world_size - 4;
  for (int i = 0; i < 5; ++i) buf[i] = !in_a && lr == b_last ? 20 + i : -1;
  MPI_Bcast(buf, 5, MPI_INT, root_arg(0, b_last), ic);
  if (in_a)
    for (int i = 0; i < 5; ++i) CHECK_EQ(buf[i], 20 + i);

  /* Gather to B's rank 2 from A: two ints each. */
  int send2[2] = {10 * lr, 10 * lr + 1};
  int gathered[64];
  MPI_Gather(send2, 2, MPI_INT, gathered, 2, MPI_INT, root_arg(0, 2), ic);
  if (!in_a && lr == 2)
    for (int i = 0; i < nr; ++i) CHECK(gathered[2 * i] == 10 * i && gathered[2 * i + 1] == 10 * i + 1);

  /* Gatherv to A's rank 0 from B: rank j sends j + 1 ints, placed last rank first. */
  int vsend[16], counts[16], displs[16];
  for (int k = 0; k < lr + 1; ++k) vsend[k] = 100 + lr;
  for (int j = 0, at = 0; j < nr; ++j) counts[nr - 1 - j] = nr - j, displs[nr - 1 - j] = at, at += nr - j;
  MPI_Gatherv(vsend, lr + 1, MPI_INT, gathered, counts, displs, MPI_INT, root_arg(1, 0), ic);
  if (in_a && lr == 0)
    for (int j = 0; j < nr; ++j)
      for (int k = 0; k < j + 1; ++k) CHECK_EQ(gathered[displs[j] + k], 100 + j);

  /* Scatter from A's rank 2 to B: block j is {j, -j}. */
  int blocks[64], mine[2] = {-1, -1};
  for (int j = 0; j < nr; ++j) blocks[2 * j] = j, blocks[2 * j + 1] = -j;
  MPI_Scatter(blocks, 2, MPI_INT, mine, 2, MPI_INT, root_arg(1, 2), ic);
  if (!in_a) CHECK(mine[0] == lr && mine[1] == -lr);

  /* Scatterv from B's rank 0 to A: rank i gets i + 1 ints from displacement 10 * i. */
  int big[64], got[16];
  for (int k = 0; k < 64; ++k) big[k] = 1000 + k;
  for (int i = 0; i < nr; ++i) counts[i] = i + 1, displs[i] = 10 * i;
  MPI_Scatterv(big, counts, displs, MPI_INT, got, lr + 1, MPI_INT, root_arg(0, 0), ic);
  if (in_a)
    for (int k = 0; k < lr + 1; ++k) CHECK_EQ(got[k], 1000 + 10 * lr + k);

  /* Reduce to A's rank 1 of B's {world rank, 1}. */
  int pair[2] = {world_rank, 1}, red[2] = {-1, -1};
  MPI_Reduce(pair, red, 2, MPI_INT, MPI_SUM, root_arg(1, 1), ic);
  if (in_a && lr == 1) CHECK(red[0] == sum_remote_world() && red[1] == nr);
}

static void all_to_all(MPI_Comm ic) {
  int recv[64], counts[16], displs[16];
  MPI_Allgather(&world_rank, 1, MPI_INT, recv, 1, MPI_INT, ic);
  for (int r = 0; r < nr; ++r) CHECK_EQ(recv[r], remote_world(r));

  int send[16];
  for (int k = 0; k < lr + 1; ++k) send[k] = world_rank;
  for (int r = 0, at = 0; r < nr; ++r) counts[r] = r + 1, displs[r] = at, at += r + 1;
  MPI_Allgatherv(send, lr + 1, MPI_INT, recv, counts, displs, MPI_INT, ic);
  for (int r = 0; r < nr; ++r)
    for (int k = 0; k < r + 1; ++k) CHECK_EQ(recv[displs[r] + k], remote_world(r));

  int blocks[64];
  for (int r = 0; r < nr; ++r) blocks[r] = 100 * world_rank + remote_world(r);
  MPI_Alltoall(blocks, 1, MPI_INT, recv, 1, MPI_INT, ic);
  for (int r = 0; r < nr; ++r) CHECK_EQ(recv[r], 100 * remote_world(r) + world_rank);

  /* Alltoallv: 1 or 2 ints between local rank a and remote rank b, by the parity of a + b. */
  int sc[16], sd[16], rc[16], rd[16];
  for (int r = 0, s = 0, q = 0; r < nr; ++r) {
    sc[r] = rc[r] = 1 + (lr + r) % 2;
    sd[r] = s, rd[r] = q + 1; /* receive with a gap of one int before each block */
    for (int k = 0; k < sc[r]; ++k) blocks[s + k] = 1000 * world_rank + remote_world(r);
    s += sc[r], q += rc[r] + 1;
  }
  for (int k = 0; k < 64; ++k) recv[k] = -7;
  MPI_Alltoallv(blocks, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, ic);
  for (int r = 0; r < nr; ++r) {
    CHECK_EQ(recv[rd[r] - 1], -7);
    for (int k = 0; k < rc[r]; ++k) CHECK_EQ(recv[rd[r] + k], 1000 * remote_world(r) + world_rank);
  }

  /* Allreduce: each group gets the other's sum and maximum. */
  int v = world_rank, sum = -1, max = -1;
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic);
  CHECK_EQ(sum, sum_remote_world());
  MPI_Allreduce(&v, &max, 1, MPI_INT, MPI_MAX, ic);
  CHECK_EQ(max, remote_world(nr - 1));

  /* Reduce_scatter: 6 elements in both groups, A split 1 + 2 + 3, B split 3 + 1 + 1 + ... */
  int rcounts[16], vec[6], out[6];
  for (int i = 0; i < nl; ++i) rcounts[i] = in_a ? i + 1 : (i == 0 ? 6 - (nl - 1) : 1);
  for (int k = 0; k < 6; ++k) vec[k] = 10 * world_rank + k;
  MPI_Reduce_scatter(vec, out, rcounts, MPI_INT, MPI_SUM, ic);
  int first = 0;
  for (int i = 0; i < lr; ++i) first += rcounts[i];
  for (int k = 0; k < rcounts[lr]; ++k) CHECK_EQ(out[k], 10 * sum_remote_world() + nr * (first + k));

  MPI_Barrier(ic);
}

/* Merge: the group that says high = 1 comes last; when both say the same, group A (whose first
 * member has the lower world rank) comes first. */
static void merge(MPI_Comm ic) {
  MPI_Comm m;
  int r = -1, n = -1;
  MPI_Intercomm_merge(ic, in_a, &m);
  MPI_Comm_rank(m, &r);
  MPI_Comm_size(m, &n);
  CHECK_EQ(n, world_size);
  CHECK_EQ(r, in_a ? world_size - 3 + lr : lr);
  int sum = 0, flag = 1;
  MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, m);
  CHECK_EQ(sum, world_size * (world_size - 1) / 2);
  MPI_Comm_test_inter(m, &flag);
  CHECK(!flag);
  MPI_Comm_free(&m);
  MPI_Intercomm_merge(ic, 0, &m);
  MPI_Comm_rank(m, &r);
  CHECK_EQ(r, world_rank);
  int result = -1;
  MPI_Comm_compare(m, MPI_COMM_WORLD, &result);
  CHECK_EQ(result, MPI_CONGRUENT);
  MPI_Comm_free(&m);
}

/* Split by the parity of the local rank, keys reversing each group's order; then the
 * intercollective MPI_Reduce_scatter_block on the even half (2 + 2 ranks). */
static void split(MPI_Comm ic) {
  MPI_Comm s;
  MPI_Comm_split(ic, lr % 2, -lr, &s);
  int n = -1, rn = -1, r = -1;
  MPI_Comm_size(s, &n);
  MPI_Comm_remote_size(s, &rn);
  MPI_Comm_rank(s, &r);
  const int same = (nl - lr % 2 + 1) / 2; /* ranks of this parity in the local group */
  CHECK_EQ(n, same);
  CHECK_EQ(rn, (nr - lr % 2 + 1) / 2);
  CHECK_EQ(r, same - 1 - lr / 2);
  /* Rank 0 of each side tells the other its old local rank. */
  int old = -1;
  if (r == 0) MPI_Sendrecv(&lr, 1, MPI_INT, 0, 3, &old, 1, MPI_INT, 0, 3, s, MPI_STATUS_IGNORE);
  if (r == 0) CHECK_EQ(old, 2 * (rn - 1) + lr % 2);
  if (lr % 2 == 0 && n == rn) {
    int vec[4], out[2];
    for (int k = 0; k < 2 * n; ++k) vec[k] = world_rank + k;
    MPI_Reduce_scatter_block(vec, out, 2, MPI_INT, MPI_SUM, s);
    int sum = 0;
    for (int j = 0; j < nr; j += 2) sum += remote_world(j);
    CHECK_EQ(out[0], sum + rn * (2 * r));
    CHECK_EQ(out[1], sum + rn * (2 * r + 1));
  }
  MPI_Comm_free(&s);
  MPI_Comm none;
  MPI_Comm_split(ic, in_a ? 5 : MPI_UNDEFINED, 0, &none);
  CHECK(none == MPI_COMM_NULL); /* a color with no match on the other side */
}

/* MPI_Comm_create: each side picks its members (A its first two ranks, B its odd ranks); the rest
 * get MPI_COMM_NULL; an empty choice on one side gives MPI_COMM_NULL everywhere. */
static void create(MPI_Comm ic) {
  MPI_Group local, sub;
  MPI_Comm_group(ic, &local);
  int a_range[1][3] = {{0, 1, 1}}, b_range[1][3] = {{1, nl - 1, 2}};
  MPI_Group_range_incl(local, 1, in_a ? a_range : b_range, &sub);
  MPI_Comm c;
  MPI_Comm_create(ic, sub, &c);
  const int chosen = in_a ? lr < 2 : lr % 2 == 1;
  CHECK((c != MPI_COMM_NULL) == chosen);
  if (chosen) {
    int n = -1, rn = -1, r = -1;
    MPI_Comm_size(c, &n);
    MPI_Comm_remote_size(c, &rn);
    MPI_Comm_rank(c, &r);
    CHECK_EQ(n, in_a ? 2 : nl / 2);
    CHECK_EQ(rn, in_a ? nr / 2 : 2);
    CHECK_EQ(r, in_a ? lr : lr / 2);
    int sum = -1; /* A gets the sum of B's odd world ranks, B that of A's 0 and 1 */
    MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, c);
    int expect = 0;
    for (int j = 0; j < nr; ++j)
      if (in_a ? j % 2 == 1 : j < 2) expect += remote_world(j);
    CHECK_EQ(sum, expect);
    MPI_Comm_free(&c);
  }
  MPI_Comm_create(ic, in_a ? sub : MPI_GROUP_EMPTY, &c);
  CHECK(c == MPI_COMM_NULL);
  MPI_Group_free(&sub);
  MPI_Group_free(&local);
}

int main(int argc, char** argv) {
  init_world(&argc, &argv, &world_rank, &world_size);
  CHECK(world_size >= 6 && world_size <= 9);
  in_a = world_rank < 3;
  MPI_Comm local;
  MPI_Comm_split(MPI_COMM_WORLD, !in_a, world_rank, &local);
  MPI_Comm_size(local, &nl);
  MPI_Comm_rank(local, &lr);
  nr = world_size - nl;
  MPI_Comm ic;
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? 3 : 0, 99, &ic);
  queries(ic);
  point_to_point(ic);
  rooted(ic);
  all_to_all(ic);
  merge(ic);
  split(ic);
  create(ic);
  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank == 0) printf("comm_inter: all checks passed on %d ranks\n", world_size);
  MPI_Finalize();
  return 0;
}
