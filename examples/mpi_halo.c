/* A 2-D halo exchange with MPI_Cart_create, without and with reordering (docs/mpi.md, "Rank
 * placement"). The communicator comes from an MPI_Comm_split whose keys shuffle the ranks (rank r
 * gets 7 r mod 16), so its order is not the machine's: with reorder=0 the grid's neighbours are
 * scattered over the machine; with reorder=1 Touchstone lays the grid on the machine's own torus
 * and every neighbour is one hop away. Then the same for a 2x2x4 grid, which reorder=1 folds onto
 * the 2-D machine (two grid dimensions share its rows). Each step every rank sends a face of FACE
 * bytes to each
 * neighbour (MPI_Neighbor_alltoall); the makespan of STEPS steps is printed for each.
 * Build: touchstone-mpicc mpi_halo.c -o mpi_halo; run: touchstone mpirun --machine torus:4x4 ./mpi_halo */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { FACE = 4096, STEPS = 20 };

/* The slowest rank's time for STEPS halo exchanges on `cart`, in microseconds. */
static double halo(MPI_Comm cart) {
  int ndims;
  MPI_Cartdim_get(cart, &ndims);
  char* out = calloc((size_t)(2 * ndims), FACE);
  char* in = calloc((size_t)(2 * ndims), FACE);
  MPI_Barrier(cart);
  const double t0 = MPI_Wtime();
  for (int s = 0; s < STEPS; ++s) MPI_Neighbor_alltoall(out, FACE, MPI_BYTE, in, FACE, MPI_BYTE, cart);
  double mine = (MPI_Wtime() - t0) * 1e6, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, cart);
  free(out);
  free(in);
  return slowest;
}

static void compare(MPI_Comm shuffled, int ndims, const int dims[], const char* name) {
  int periods[3] = {1, 1, 1}, rank;
  double t[2];
  for (int reorder = 0; reorder < 2; ++reorder) {
    MPI_Comm cart;
    MPI_Cart_create(shuffled, ndims, dims, periods, reorder, &cart);
    t[reorder] = halo(cart);
    MPI_Comm_free(&cart);
  }
  MPI_Comm_rank(shuffled, &rank);
  if (rank == 0)
    printf("%s periodic grid, %d steps of %d-byte faces: reorder=0 %.3f us, reorder=1 %.3f us (%.2fx)\n", name, STEPS,
           FACE, t[0], t[1], t[0] / t[1]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 16) {
    if (rank == 0) fprintf(stderr, "mpi_halo needs 16 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm shuffled;
  MPI_Comm_split(MPI_COMM_WORLD, 0, (7 * rank) % 16, &shuffled);
  const int d2[2] = {4, 4}, d3[3] = {2, 2, 4};
  compare(shuffled, 2, d2, "4x4");
  compare(shuffled, 3, d3, "2x2x4");
  MPI_Comm_free(&shuffled);
  MPI_Finalize();
  return 0;
}
