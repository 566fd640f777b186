/* Collective consistency of intercommunicator, neighborhood and persistent v-collectives
 * (docs/debugging.md, "Collectives that do not match"): each mode makes one erroneous call; the
 * check reports it at entry (or at MPI_Start), naming both calls (collcheck.cmake asserts the
 * reports). Intercommunicator modes run on 5 ranks, the even ones (3) one group, the odd ones (2)
 * the other; neighborhood modes on 7. */
#include <mpi.h>
#include <string.h>

/* The intercommunicator between the even and the odd ranks of MPI_COMM_WORLD. */
static MPI_Comm even_odd(int rank, MPI_Comm* half) {
  MPI_Comm inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, half);
  MPI_Intercomm_create(*half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter);
  return inter;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  int rank, size, data[16] = {0}, out[64] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int even = rank % 2 == 0, local = rank / 2; /* the rank in its group */
  MPI_Barrier(MPI_COMM_WORLD);
  if (!strncmp(mode, "inter_", 6)) {
    MPI_Comm half, inter = even_odd(rank, &half);
    /* The even group's rank 0 is the root, unless the mode says otherwise. */
    const int root = even ? (local == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    if (!strcmp(mode, "inter_named")) { /* the odd group names rank 1 of the even group */
      MPI_Bcast(data, 2, MPI_INT, even ? root : 1, inter);
    } else if (!strcmp(mode, "inter_two_roots")) { /* the even group's ranks 0 and 2 pass MPI_ROOT */
      MPI_Bcast(data, 2, MPI_INT, even ? (local == 1 ? MPI_PROC_NULL : MPI_ROOT) : 2, inter);
    } else if (!strcmp(mode, "inter_no_root")) { /* no member passes MPI_ROOT */
      MPI_Bcast(data, 2, MPI_INT, even ? MPI_PROC_NULL : 0, inter);
    } else if (!strcmp(mode, "inter_both_ranks")) { /* both groups name a rank of the other */
      MPI_Bcast(data, 2, MPI_INT, 0, inter);
    } else if (!strcmp(mode, "inter_both_root_groups")) { /* the odd group passes MPI_PROC_NULL too */
      MPI_Bcast(data, 2, MPI_INT, even ? root : MPI_PROC_NULL, inter);
    } else if (!strcmp(mode, "inter_mixed")) { /* odd rank 1 passes MPI_PROC_NULL, odd rank 0 names 0 */
      MPI_Bcast(data, 2, MPI_INT, rank == 3 ? MPI_PROC_NULL : root, inter);
    } else if (!strcmp(mode, "inter_gather")) { /* odd rank 1 sends 2 ints, the root expects 1 */
      MPI_Gather(data, rank == 3 ? 2 : 1, MPI_INT, out, 1, MPI_INT, root, inter);
    } else if (!strcmp(mode, "inter_reduce_op")) { /* odd rank 1 reduces with MPI_MAX */
      MPI_Reduce(data, out, 2, MPI_INT, rank == 3 ? MPI_MAX : MPI_SUM, root, inter);
    } else if (!strcmp(mode, "inter_allreduce")) { /* the odd group reduces 3 ints, the even 2 */
      MPI_Allreduce(data, out, even ? 2 : 3, MPI_INT, MPI_SUM, inter);
    } else if (!strcmp(mode, "inter_allgatherv")) { /* odd rank 0 expects 2 ints from even rank 2 */
      int counts[3] = {1, 1, rank == 1 ? 2 : 1}, displs[3] = {0, 1, 2};
      MPI_Allgatherv(data, 1, MPI_INT, out, counts, displs, MPI_INT, inter);
    } else if (!strcmp(mode, "inter_reduce_scatter")) { /* each even rank 2 elements, each odd 2: 6 != 4 */
      int counts[3] = {2, 2, 2};
      MPI_Reduce_scatter(data, out, counts, MPI_INT, MPI_SUM, inter);
    } else if (!strcmp(mode, "inter_ialltoall")) { /* even rank 1 receives floats */
      MPI_Request r;
      MPI_Ialltoall(data, 1, MPI_INT, out, 1, rank == 2 ? MPI_FLOAT : MPI_INT, inter, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  } else if (!strncmp(mode, "cart_", 5) || !strncmp(mode, "graph_", 6)) {
    /* A ring of 7 (periodic), or a distributed graph where rank i sends to i + 1 and i + 3. */
    MPI_Comm topo;
    if (mode[0] == 'c') {
      const int dims[1] = {size}, periods[1] = {1};
      MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &topo);
    } else {
      const int dests[2] = {(rank + 1) % size, (rank + 3) % size};
      const int sources[2] = {(rank + size - 1) % size, (rank + size - 3) % size};
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, MPI_UNWEIGHTED, 2, dests, MPI_UNWEIGHTED,
                                     MPI_INFO_NULL, 0, &topo);
    }
    if (!strcmp(mode, "cart_alltoall")) { /* rank 3 sends 2 ints to each neighbour, which receives 1 */
      MPI_Neighbor_alltoall(data, rank == 3 ? 2 : 1, MPI_INT, out, 1, MPI_INT, topo);
    } else if (!strcmp(mode, "cart_allgather")) { /* rank 5 receives floats */
      MPI_Neighbor_allgather(data, 1, MPI_INT, out, 1, rank == 5 ? MPI_FLOAT : MPI_INT, topo);
    } else if (!strcmp(mode, "graph_alltoallv")) { /* rank 4 expects 2 ints from its source 1 (= 4 - 3) */
      int sc[2] = {1, 1}, rc[2] = {1, rank == 4 ? 2 : 1}, d[2] = {0, 4};
      MPI_Neighbor_alltoallv(data, sc, d, MPI_INT, out, rc, d, MPI_INT, topo);
    } else if (!strcmp(mode, "graph_alltoallv_init")) { /* the same, found at the persistent start */
      int sc[2], rc[2], d[2] = {0, 4};
      MPI_Request r;
      MPI_Neighbor_alltoallv_init(data, sc, d, MPI_INT, out, rc, d, MPI_INT, topo, MPI_INFO_NULL, &r);
      sc[0] = sc[1] = rc[0] = 1; /* filled after the init */
      rc[1] = rank == 4 ? 2 : 1;
      MPI_Start(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Request_free(&r);
    }
    MPI_Comm_free(&topo);
  } else if (!strcmp(mode, "self_cart")) { /* a size x 1 grid: along dimension 1 the rank is its own neighbour */
    MPI_Comm grid;
    const int dims[2] = {size, 1}, periods[2] = {1, 1};
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    /* Block k holds k + 1 ints and lands in slot k ^ 1; rank 4 expects its own blocks unswapped. */
    int sc[4] = {1, 2, 3, 4}, rc[4] = {2, 1, 4, 3}, d[4] = {0, 4, 8, 12};
    if (rank == 4) rc[2] = 3, rc[3] = 4;
    MPI_Neighbor_alltoallv(data, sc, d, MPI_INT, out, rc, d, MPI_INT, grid);
    MPI_Comm_free(&grid);
  } else if (!strcmp(mode, "alltoallw_self")) { /* rank 3 sends itself 2 ints and receives 1 */
    int sc[8], rc[8], d[8];
    MPI_Datatype t[8];
    for (int i = 0; i < size; ++i) sc[i] = rc[i] = 1, d[i] = 4 * i, t[i] = MPI_INT;
    if (rank == 3) sc[3] = 2;
    MPI_Alltoallw(data, sc, d, t, out, rc, d, t, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "allgatherv_init")) { /* counts filled after the init; rank 2 expects 2 from rank 4 */
    int counts[8], displs[8] = {0, 1, 2, 3, 4, 6, 7, 8};
    MPI_Request r;
    MPI_Allgatherv_init(data, 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int i = 0; i < size; ++i) counts[i] = 1;
    if (rank == 2) counts[4] = 2;
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request_free(&r);
  }
  MPI_Finalize();
  return 0;
}
