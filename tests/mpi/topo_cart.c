/* Cartesian topologies (MPI-3.1 7.5): MPI_Cart_create on a 3x4 grid of 12 ranks, non-periodic,
 * periodic and mixed, its queries, MPI_Cart_shift with MPI_PROC_NULL at the edges, MPI_Cart_sub,
 * MPI_Cart_map, MPI_Topo_test, a grid smaller than the communicator, a grid on a sub-communicator,
 * and MPI_Comm_dup keeping the topology. Run on 12 ranks. */
#include "check.h"

/* The rank at (row, col) of a rows x cols grid, wrapped where periodic, else MPI_PROC_NULL off the grid. */
static int at(int rows, int cols, const int periods[2], int row, int col) {
  if (periods[0]) row = ((row % rows) + rows) % rows;
  if (periods[1]) col = ((col % cols) + cols) % cols;
  if (row < 0 || row >= rows || col < 0 || col >= cols) return MPI_PROC_NULL;
  return row * cols + col;
}

/* Every query of a rows x cols grid against the row-major layout MPI prescribes. */
static void check_grid(MPI_Comm cart, int rows, int cols, const int periods[2]) {
  int rank, size, status, ndims, dims[2], per[2], coords[2];
  MPI_Comm_rank(cart, &rank);
  MPI_Comm_size(cart, &size);
  CHECK_EQ(size, rows * cols);
  MPI_Topo_test(cart, &status);
  CHECK_EQ(status, MPI_CART);
  MPI_Cartdim_get(cart, &ndims);
  CHECK_EQ(ndims, 2);
  MPI_Cart_get(cart, 2, dims, per, coords);
  CHECK_EQ(dims[0], rows);
  CHECK_EQ(dims[1], cols);
  CHECK_EQ(per[0], periods[0]);
  CHECK_EQ(per[1], periods[1]);
  CHECK_EQ(coords[0], rank / cols);
  CHECK_EQ(coords[1], rank % cols);
  for (int r = 0; r < size; ++r) {
    int c[2], back;
    MPI_Cart_coords(cart, r, 2, c);
    CHECK_EQ(c[0], r / cols);
    CHECK_EQ(c[1], r % cols);
    MPI_Cart_rank(cart, c, &back);
    CHECK_EQ(back, r);
  }
  const int row = rank / cols, col = rank % cols;
  for (int disp = -2; disp <= 2; ++disp) {
    int src, dst;
    MPI_Cart_shift(cart, 0, disp, &src, &dst);
    CHECK_EQ(src, at(rows, cols, periods, row - disp, col));
    CHECK_EQ(dst, at(rows, cols, periods, row + disp, col));
    MPI_Cart_shift(cart, 1, disp, &src, &dst);
    CHECK_EQ(src, at(rows, cols, periods, row, col - disp));
    CHECK_EQ(dst, at(rows, cols, periods, row, col + disp));
  }
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK_EQ(size, 12);
  int status;
  MPI_Topo_test(MPI_COMM_WORLD, &status);
  CHECK_EQ(status, MPI_UNDEFINED);

  const int dims[2] = {3, 4};
  const int kinds[3][2] = {{0, 0}, {1, 1}, {1, 0}};
  for (int k = 0; k < 3; ++k) {
    MPI_Comm cart, dup;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, kinds[k], 0, &cart);
    int crank;
    MPI_Comm_rank(cart, &crank);
    CHECK_EQ(crank, rank); /* no reordering */
    check_grid(cart, 3, 4, kinds[k]);
    MPI_Comm_dup(cart, &dup);
    check_grid(dup, 3, 4, kinds[k]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);
  }

  /* Periodic coordinates out of range wrap in MPI_Cart_rank. */
  {
    MPI_Comm cart;
    const int periods[2] = {1, 1};
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    const int far[2] = {-1, 5};
    int r;
    MPI_Cart_rank(cart, far, &r);
    CHECK_EQ(r, 2 * 4 + 1);

    /* Cart_sub: rows (keep dimension 1), columns (keep dimension 0), and a point (keep none). */
    const int keep_cols[2] = {0, 1}, keep_rows[2] = {1, 0}, keep_none[2] = {0, 0};
    MPI_Comm row_comm, col_comm, point;
    MPI_Cart_sub(cart, keep_cols, &row_comm);
    MPI_Cart_sub(cart, keep_rows, &col_comm);
    MPI_Cart_sub(cart, keep_none, &point);
    int n, sr, sdims[2], sper[2], scoords[2];
    MPI_Comm_size(row_comm, &n);
    MPI_Comm_rank(row_comm, &sr);
    CHECK_EQ(n, 4);
    CHECK_EQ(sr, rank % 4);
    MPI_Cartdim_get(row_comm, &n);
    CHECK_EQ(n, 1);
    MPI_Cart_get(row_comm, 1, sdims, sper, scoords);
    CHECK_EQ(sdims[0], 4);
    CHECK_EQ(sper[0], 1);
    CHECK_EQ(scoords[0], rank % 4);
    MPI_Comm_size(col_comm, &n);
    MPI_Comm_rank(col_comm, &sr);
    CHECK_EQ(n, 3);
    CHECK_EQ(sr, rank / 4);
    /* The sub-grid's ranks are world ranks of the same column: a message along it arrives. */
    int up, down, got = -1;
    MPI_Cart_shift(col_comm, 0, 1, &up, &down);
    MPI_Sendrecv(&rank, 1, MPI_INT, down, 0, &got, 1, MPI_INT, up, 0, col_comm, MPI_STATUS_IGNORE);
    CHECK_EQ(got, (rank + 12 - 4) % 12);
    MPI_Comm_size(point, &n);
    CHECK_EQ(n, 1);
    MPI_Cartdim_get(point, &n);
    CHECK_EQ(n, 0);
    MPI_Topo_test(point, &status);
    CHECK_EQ(status, MPI_CART);
    MPI_Comm_free(&point);
    MPI_Comm_free(&col_comm);
    MPI_Comm_free(&row_comm);
    MPI_Comm_free(&cart);
  }

  /* A 2x5 grid of 12 ranks: ranks 10 and 11 are left out. */
  {
    MPI_Comm cart;
    const int small[2] = {2, 5}, periods[2] = {0, 1};
    MPI_Cart_create(MPI_COMM_WORLD, 2, small, periods, 0, &cart);
    if (rank >= 10) {
      CHECK(cart == MPI_COMM_NULL);
    } else {
      check_grid(cart, 2, 5, periods);
      MPI_Comm_free(&cart);
    }
  }

  /* A 3x2 grid on each half of a split (odd and even world ranks): its ranks follow the split's. */
  {
    MPI_Comm half, cart;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    const int d[2] = {3, 2}, periods[2] = {0, 0};
    MPI_Cart_create(half, 2, d, periods, 0, &cart);
    int hr, cr;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_rank(cart, &cr);
    CHECK_EQ(cr, hr);
    CHECK_EQ(hr, 5 - rank / 2);
    check_grid(cart, 3, 2, periods);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&half);
  }

  /* MPI_Cart_map on the world: the machine is a 3x4 mesh, so the 3x4 grid is the identity; a 2x3
   * grid takes six of the twelve ranks, the others get MPI_UNDEFINED. */
  {
    int newrank, mapped = 0, total = 0;
    const int periods[2] = {0, 0}, d6[2] = {2, 3};
    MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &newrank);
    CHECK_EQ(newrank, rank);
    MPI_Cart_map(MPI_COMM_WORLD, 2, d6, periods, &newrank);
    mapped = newrank != MPI_UNDEFINED;
    MPI_Allreduce(&mapped, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(total, 6);
  }

  /* MPI_Dims_create for the grids above. */
  {
    int d[2] = {0, 0};
    MPI_Dims_create(12, 2, d);
    CHECK_EQ(d[0], 4);
    CHECK_EQ(d[1], 3);
    int e[3] = {0, 3, 0};
    MPI_Dims_create(12, 3, e);
    CHECK_EQ(e[0], 2);
    CHECK_EQ(e[1], 3);
    CHECK_EQ(e[2], 2);
    /* The least spread: 540 = 27 x 20 (not 30 x 18); among the equally spread 101x12x12x7x7 and
     * 101x14x9x8x7 (712656), the one whose smaller dimensions are larger. */
    int f[2] = {0, 0}, g[5] = {0, 0, 0, 0, 0};
    MPI_Dims_create(540, 2, f);
    CHECK_EQ(f[0], 27);
    CHECK_EQ(f[1], 20);
    MPI_Dims_create(712656, 5, g);
    const int want[5] = {101, 14, 9, 8, 7};
    for (int i = 0; i < 5; ++i) CHECK_EQ(g[i], want[i]);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("topo_cart: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
