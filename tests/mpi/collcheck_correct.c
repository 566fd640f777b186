/* Correct intercommunicator, neighborhood and persistent v-collectives the consistency check must
 * not blame (docs/debugging.md, "Collectives that do not match"): roots as MPI_ROOT, MPI_PROC_NULL
 * and ranks of either group, insignificant arguments left unset, the same signatures built from
 * other datatypes, Cartesian neighbours that are the rank itself, graph edges named twice, and
 * count arrays filled after a persistent init. Run with --check on odd rank counts. */
#include <mpi.h>

#include "check.h"

static MPI_Datatype pair; /* two MPI_INT: the signature of 2 x MPI_INT */

/* Between the even ranks (group A) and the odd ones (group B) of MPI_COMM_WORLD. */
static void intercommunicator(int rank, int size) {
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 5, &inter);
  int local, n, remote;
  MPI_Comm_rank(inter, &local);
  MPI_Comm_size(inter, &n);
  MPI_Comm_remote_size(inter, &remote);
  const int in_a = rank % 2 == 0;
  int v[64] = {0}, w[64] = {0};
  /* Each group roots in turn, at its last rank; the root sends 1 x pair, the others receive 2 MPI_INT. */
  for (int a_roots = 0; a_roots < 2; ++a_roots) {
    const int rooting = in_a == a_roots, last = n - 1;
    const int root = rooting ? (local == last ? MPI_ROOT : MPI_PROC_NULL) : remote - 1;
    const int is_root = root == MPI_ROOT, idle = root == MPI_PROC_NULL;
    v[0] = v[1] = 7 + a_roots;
    /* The idle members' arguments are insignificant: count 0, no datatype. */
    if (is_root) MPI_Bcast(v, 1, pair, root, inter);
    else MPI_Bcast(v, idle ? 0 : 2, idle ? MPI_DATATYPE_NULL : MPI_INT, root, inter);
    if (!rooting) CHECK_EQ(v[1], 7 + a_roots);
    v[0] = v[1] = 1;
    MPI_Reduce(v, w, is_root ? 1 : 2, is_root ? pair : MPI_INT, idle ? MPI_OP_NULL : MPI_SUM, root, inter);
    if (is_root) CHECK_EQ(w[1], remote);
    /* Gather: member i of the other group sends i + 1 ints (gatherv) or 1 (gather). */
    int counts[32], displs[32];
    for (int i = 0; i < remote; ++i) counts[i] = i + 1, displs[i] = 2 * i;
    MPI_Gatherv(v, local + 1, MPI_INT, w, is_root ? counts : NULL, displs, MPI_INT, root, inter);
    MPI_Gather(v, 1, MPI_INT, w, is_root ? 1 : -1, MPI_INT, root, inter);
    MPI_Scatterv(v, counts, displs, MPI_INT, w, local + 1, MPI_INT, root, inter);
    MPI_Scatter(v, 2, MPI_INT, w, is_root ? 0 : 1, is_root ? MPI_INT : pair, root, inter);
  }
  /* Each group sends blocks of its own size + 1 ints; the other receives them so. */
  int mine = n + 1, theirs = remote + 1, rc[32], rd[32], sd[32], sc[32];
  for (int i = 0; i < remote; ++i) rc[i] = theirs, rd[i] = theirs * i;
  MPI_Allgather(v, mine, MPI_INT, w, theirs, MPI_INT, inter);
  MPI_Allgatherv(v, mine, MPI_INT, w, rc, rd, MPI_INT, inter);
  /* Alltoallv: rank i of one group sends i + j + 1 ints to rank j of the other. */
  for (int j = 0; j < remote; ++j) sc[j] = local + j + 1, sd[j] = 0, rc[j] = j + local + 1, rd[j] = 8 * j;
  MPI_Alltoall(v, 2, MPI_INT, w, 1, pair, inter);
  MPI_Alltoallv(v, sc, sd, MPI_INT, w, rc, rd, MPI_INT, inter);
  MPI_Datatype st[32], rt[32];
  for (int j = 0; j < remote; ++j) st[j] = MPI_INT, rt[j] = MPI_INT, rd[j] = 32 * j; /* bytes */
  MPI_Alltoallw(v, sc, sd, st, w, rc, rd, rt, inter);
  MPI_Allreduce(v, w, 2, MPI_INT, MPI_MAX, inter);
  /* Group A gives 3 x 4 = 12 elements, group B 4 x 3 (7 ranks) or 6 x 2 (5 ranks): 5 or 7 ranks only. */
  int rs[4];
  for (int i = 0; i < n; ++i) rs[i] = 12 / n;
  MPI_Reduce_scatter(v, w, rs, MPI_INT, MPI_SUM, inter);
  MPI_Reduce_scatter_block(v, w, 12 / n, MPI_INT, MPI_SUM, inter);
  /* Nonblocking and persistent forms, counts filled after the init. */
  MPI_Request r[2];
  const int root = in_a ? (local == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Ibcast(v, root == MPI_ROOT ? 1 : 2, root == MPI_ROOT ? pair : MPI_INT, root, inter, &r[0]);
  MPI_Allgatherv_init(v, mine, MPI_INT, w, rc, rd, MPI_INT, inter, MPI_INFO_NULL, &r[1]);
  for (int i = 0; i < remote; ++i) rc[i] = theirs, rd[i] = theirs * i;
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  for (int k = 0; k < 2; ++k) {
    MPI_Start(&r[1]);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&r[1]);
  (void)size;
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

/* Neighborhood collectives whose blocks differ by direction: block k of each rank holds k + 1 ints. */
static void neighbors(int rank, int size) {
  int v[64] = {0}, w[64] = {0}, sc[8], rc[8], sd[8], rd[8];
  MPI_Datatype st[8], rt[8];
  /* A periodic size x 1 grid: along the second dimension both neighbours are the rank itself. Slot k
   * of the sender lands in slot k ^ 1 of the receiver. */
  MPI_Comm cart;
  const int dims[2] = {size, 1}, periods[2] = {1, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  for (int k = 0; k < 4; ++k) sc[k] = k + 1, rc[k] = (k ^ 1) + 1, sd[k] = rd[k] = 8 * k;
  MPI_Neighbor_alltoallv(v, sc, sd, MPI_INT, w, rc, rd, MPI_INT, cart);
  /* Blocks of 2 ints received as one pair, in the w-form and as an allgather. */
  for (int k = 0; k < 4; ++k) sc[k] = 2, rc[k] = 1, st[k] = MPI_INT, rt[k] = pair;
  MPI_Aint sdb[4] = {0, 8, 16, 24}, rdb[4] = {0, 8, 16, 24};
  MPI_Neighbor_alltoallw(v, sc, sdb, st, w, rc, rdb, rt, cart);
  MPI_Neighbor_allgather(v, 2, MPI_INT, w, 1, pair, cart);
  MPI_Comm_free(&cart);

  /* A line, not periodic: the ends have MPI_PROC_NULL neighbours. */
  MPI_Comm line;
  const int ldims[1] = {size}, lper[1] = {0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, ldims, lper, 0, &line);
  MPI_Request r;
  for (int k = 0; k < 2; ++k) sc[k] = k + 1, rc[k] = (k ^ 1) + 1, sd[k] = rd[k] = 8 * k;
  MPI_Ineighbor_alltoallv(v, sc, sd, MPI_INT, w, rc, rd, MPI_INT, line, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Comm_free(&line);

  /* A distributed graph naming each edge to i + 1 twice: the first block of 1 int, the second of
   * 3; and one to i + 2 of 2 ints. Blocks between two ranks meet in order. */
  MPI_Comm graph;
  const int dests[3] = {(rank + 1) % size, (rank + 2) % size, (rank + 1) % size};
  const int sources[3] = {(rank + size - 2) % size, (rank + size - 1) % size, (rank + size - 1) % size};
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, sources, MPI_UNWEIGHTED, 3, dests, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &graph);
  MPI_Request p;
  MPI_Neighbor_alltoallv_init(v, sc, sd, MPI_INT, w, rc, rd, MPI_INT, graph, MPI_INFO_NULL, &p);
  const int scounts[3] = {1, 2, 3}, rcounts[3] = {2, 1, 3};
  for (int k = 0; k < 3; ++k) sc[k] = scounts[k], rc[k] = rcounts[k], sd[k] = rd[k] = 8 * k;
  for (int k = 0; k < 2; ++k) {
    MPI_Start(&p);
    MPI_Wait(&p, MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&p);
  MPI_Comm_free(&graph);

  /* A graph (MPI_Graph_create) ring: each node's two neighbours. */
  int index[16], edges[32];
  for (int i = 0; i < size; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + size - 1) % size;
    edges[2 * i + 1] = (i + 1) % size;
  }
  MPI_Comm ring;
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring);
  MPI_Neighbor_alltoall(v, 2, MPI_INT, w, 1, pair, ring);
  MPI_Comm_free(&ring);
}

/* Persistent v-collectives of MPI_COMM_WORLD whose counts are filled after the init. */
static void persistent(int rank, int size) {
  int v[64] = {0}, w[128] = {0}, counts[16] = {0}, displs[16] = {0}, sc[16], sd[16], rc[16], rd[16];
  MPI_Request r[3];
  MPI_Allgatherv_init(v, rank + 1, MPI_INT, w, counts, displs, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
  MPI_Alltoallv_init(v, sc, sd, MPI_INT, w, rc, rd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
  MPI_Gatherv_init(v, rank + 1, MPI_INT, w, counts, displs, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
  for (int i = 0; i < size; ++i) {
    counts[i] = i + 1, displs[i] = 8 * i;
    sc[i] = rank + i + 1, sd[i] = 0, rc[i] = i + rank + 1, rd[i] = 16 * i;
  }
  for (int k = 0; k < 2; ++k) {
    MPI_Startall(3, r);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
  }
  for (int k = 0; k < 3; ++k) MPI_Request_free(&r[k]);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  intercommunicator(rank, size);
  neighbors(rank, size);
  persistent(rank, size);
  MPI_Type_free(&pair);
  return all_checks_passed("collcheck_correct");
}
