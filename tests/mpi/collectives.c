/* Every collective's result, on MPI_COMM_WORLD and on a split communicator, for any number of
 * ranks (run on non-power-of-two sizes and several machines by tests/CMakeLists.txt), with the
 * in-place variants, the predefined reductions, MINLOC, and a non-commutative user operation. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Value rank r puts in element i of the block for rank d. */
static int val(int r, int d, int i) { return 100000 * r + 100 * d + i; }

/* A non-commutative operation: composition of affine maps x -> a x + b (mod 2^31 - 1 kept small
 * by using integers mod 1009). inout = in o inout in MPI's order: the lower ranks' map first. */
typedef struct {
  int a, b;
} Affine;
static void compose(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  Affine* x = in;
  Affine* y = inout;
  for (int i = 0; i < *len; ++i) {
    /* apply x first, then y: y(x(t)) = ya (xa t + xb) + yb */
    Affine r = {(y[i].a * x[i].a) % 1009, (y[i].a * x[i].b + y[i].b) % 1009};
    y[i] = r;
  }
}

static void check_comm(MPI_Comm comm, MPI_Datatype affine_type, MPI_Op affine_op) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int L = 3;
  int* send = malloc(sizeof(int) * (size_t)(size * L));
  int* recv = malloc(sizeof(int) * (size_t)(size * L));
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  int* rcounts = malloc(sizeof(int) * (size_t)size);
  int* rdispls = malloc(sizeof(int) * (size_t)size);

  /* Barrier, then bcast from every root. */
  MPI_Barrier(comm);
  for (int root = 0; root < size; ++root) {
    int b[5];
    for (int i = 0; i < 5; ++i) b[i] = rank == root ? val(root, 0, i) : -1;
    MPI_Bcast(b, 5, MPI_INT, root, comm);
    for (int i = 0; i < 5; ++i) CHECK_EQ(b[i], val(root, 0, i));
  }
  /* Scatter and gather from the last rank. */
  int root = size - 1, mine[3];
  for (int d = 0; d < size; ++d)
    for (int i = 0; i < L; ++i) send[d * L + i] = val(root, d, i);
  MPI_Scatter(send, L, MPI_INT, mine, L, MPI_INT, root, comm);
  for (int i = 0; i < L; ++i) CHECK_EQ(mine[i], val(root, rank, i));
  for (int i = 0; i < L; ++i) mine[i] = val(rank, root, i);
  memset(recv, 0xff, sizeof(int) * (size_t)(size * L));
  MPI_Gather(mine, L, MPI_INT, recv, L, MPI_INT, root, comm);
  if (rank == root)
    for (int s = 0; s < size; ++s)
      for (int i = 0; i < L; ++i) CHECK_EQ(recv[s * L + i], val(s, root, i));
  /* Gather in place at the root. */
  if (rank == root) {
    for (int i = 0; i < L; ++i) recv[root * L + i] = val(root, root, i);
    MPI_Gather(MPI_IN_PLACE, L, MPI_INT, recv, L, MPI_INT, root, comm);
    for (int s = 0; s < size; ++s) CHECK_EQ(recv[s * L + 1], val(s, root, 1));
  } else {
    MPI_Gather(mine, L, MPI_INT, NULL, 0, MPI_INT, root, comm);
  }
  /* Scatterv and gatherv with rank d getting d % 3 + 1 ints at reversed displacements. */
  int total = 0;
  for (int d = size - 1; d >= 0; --d) counts[d] = d % 3 + 1, displs[d] = total, total += counts[d];
  int* vbuf = malloc(sizeof(int) * (size_t)total);
  for (int d = 0; d < size; ++d)
    for (int i = 0; i < counts[d]; ++i) vbuf[displs[d] + i] = val(0, d, i);
  int vmine[3] = {-1, -1, -1};
  MPI_Scatterv(vbuf, counts, displs, MPI_INT, vmine, counts[rank], MPI_INT, 0, comm);
  for (int i = 0; i < counts[rank]; ++i) CHECK_EQ(vmine[i], val(0, rank, i));
  for (int i = 0; i < counts[rank]; ++i) vmine[i] = val(rank, 0, i);
  memset(vbuf, 0xff, sizeof(int) * (size_t)total);
  MPI_Gatherv(vmine, counts[rank], MPI_INT, vbuf, counts, displs, MPI_INT, 0, comm);
  if (rank == 0)
    for (int s = 0; s < size; ++s)
      for (int i = 0; i < counts[s]; ++i) CHECK_EQ(vbuf[displs[s] + i], val(s, 0, i));
  /* Allgather (also in place) and allgatherv. */
  for (int i = 0; i < L; ++i) mine[i] = val(rank, 0, i);
  MPI_Allgather(mine, L, MPI_INT, recv, L, MPI_INT, comm);
  for (int s = 0; s < size; ++s)
    for (int i = 0; i < L; ++i) CHECK_EQ(recv[s * L + i], val(s, 0, i));
  memset(recv, 0, sizeof(int) * (size_t)(size * L));
  for (int i = 0; i < L; ++i) recv[rank * L + i] = val(rank, 1, i);
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, L, MPI_INT, comm);
  for (int s = 0; s < size; ++s) CHECK_EQ(recv[s * L + 2], val(s, 1, 2));
  for (int i = 0; i < counts[rank]; ++i) vmine[i] = val(rank, 2, i);
  MPI_Allgatherv(vmine, counts[rank], MPI_INT, vbuf, counts, displs, MPI_INT, comm);
  for (int s = 0; s < size; ++s)
    for (int i = 0; i < counts[s]; ++i) CHECK_EQ(vbuf[displs[s] + i], val(s, 2, i));
  /* Alltoall and alltoallv (rank r sends (r + d) % 3 ints to d). */
  for (int d = 0; d < size; ++d)
    for (int i = 0; i < L; ++i) send[d * L + i] = val(rank, d, i);
  MPI_Alltoall(send, L, MPI_INT, recv, L, MPI_INT, comm);
  for (int s = 0; s < size; ++s)
    for (int i = 0; i < L; ++i) CHECK_EQ(recv[s * L + i], val(s, rank, i));
  int st = 0, rt = 0;
  for (int d = 0; d < size; ++d) {
    counts[d] = (rank + d) % 3, displs[d] = st, st += counts[d];
    rcounts[d] = (d + rank) % 3, rdispls[d] = rt, rt += rcounts[d];
    for (int i = 0; i < counts[d]; ++i) send[displs[d] + i] = val(rank, d, i);
  }
  memset(recv, 0xff, sizeof(int) * (size_t)(size * L));
  MPI_Alltoallv(send, counts, displs, MPI_INT, recv, rcounts, rdispls, MPI_INT, comm);
  for (int s = 0; s < size; ++s)
    for (int i = 0; i < rcounts[s]; ++i) CHECK_EQ(recv[rdispls[s] + i], val(s, rank, i));
  /* Reductions: sum, max, min, prod of small numbers, band, lor; minloc. */
  long long x[4] = {rank + 1, rank, -rank, 1 + (rank % 2)}, y[4] = {0, 0, 0, 0};
  MPI_Reduce(x, y, 1, MPI_LONG_LONG, MPI_SUM, root, comm);
  if (rank == root) CHECK_EQ(y[0], (long long)size * (size + 1) / 2);
  MPI_Allreduce(&x[1], &y[1], 1, MPI_LONG_LONG, MPI_MAX, comm);
  CHECK_EQ(y[1], size - 1);
  MPI_Allreduce(&x[2], &y[2], 1, MPI_LONG_LONG, MPI_MIN, comm);
  CHECK_EQ(y[2], -(size - 1));
  MPI_Allreduce(&x[3], &y[3], 1, MPI_LONG_LONG, MPI_PROD, comm);
  CHECK_EQ(y[3], 1LL << (size / 2));
  unsigned bits = 0xff ^ (1u << (rank % 8)), band = 0;
  MPI_Allreduce(&bits, &band, 1, MPI_UNSIGNED, MPI_BAND, comm);
  CHECK_EQ(band, size >= 8 ? 0u : (0xffu & ~((1u << size) - 1)));
  double d = rank * 0.5, dsum = 0;
  MPI_Allreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, comm);
  CHECK(dsum == 0.25 * size * (size - 1));
  struct {
    double v;
    int i;
  } in = {(double)((rank * 7) % size), rank}, out;
  MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm);
  CHECK(out.v == 0.0);
  CHECK_EQ(out.i, 0);
  int sumv = rank;
  MPI_Allreduce(MPI_IN_PLACE, &sumv, 1, MPI_INT, MPI_SUM, comm);
  CHECK_EQ(sumv, size * (size - 1) / 2);
  /* Reduce_scatter: rank d gets d % 3 + 1 sums of element k of every rank's vector (k + r). */
  {
    int n = 0;
    for (int dd = 0; dd < size; ++dd) counts[dd] = dd % 3 + 1, n += counts[dd];
    int* vec = malloc(sizeof(int) * (size_t)n);
    int at = 0, out3[3] = {0, 0, 0};
    for (int dd = 0; dd < rank; ++dd) at += counts[dd];
    for (int k = 0; k < n; ++k) vec[k] = k + rank;
    MPI_Reduce_scatter(vec, out3, counts, MPI_INT, MPI_SUM, comm);
    for (int k = 0; k < counts[rank]; ++k) CHECK_EQ(out3[k], size * (at + k) + size * (size - 1) / 2);
    int blk[2] = {0, 0};
    int* vec2 = malloc(sizeof(int) * (size_t)(2 * size));
    for (int k = 0; k < 2 * size; ++k) vec2[k] = k * (rank + 1);
    MPI_Reduce_scatter_block(vec2, blk, 2, MPI_INT, MPI_MAX, comm);
    CHECK_EQ(blk[0], 2 * rank * size);
    CHECK_EQ(blk[1], (2 * rank + 1) * size);
    free(vec), free(vec2);
  }
  /* Scan and exscan. */
  int pre = -1, expre = -7, one = rank + 1;
  MPI_Scan(&one, &pre, 1, MPI_INT, MPI_SUM, comm);
  CHECK_EQ(pre, (rank + 1) * (rank + 2) / 2);
  MPI_Exscan(&one, &expre, 1, MPI_INT, MPI_SUM, comm);
  if (rank > 0) CHECK_EQ(expre, rank * (rank + 1) / 2);
  else CHECK_EQ(expre, -7);
  /* The non-commutative user operation: the composition in rank order, at every root, and in
   * the scan. Rank r's map is t -> (r + 2) t + r. */
  Affine mapv = {rank + 2, rank}, comp = {0, 0}, expect = {1, 0};
  for (int root2 = 0; root2 < size; ++root2) {
    MPI_Reduce(&mapv, &comp, 1, affine_type, affine_op, root2, comm);
    if (rank == root2) {
      expect.a = 1, expect.b = 0;
      for (int r = 0; r < size; ++r) expect.b = ((r + 2) * expect.b + r) % 1009, expect.a = (expect.a * (r + 2)) % 1009;
      CHECK_EQ(comp.a, expect.a);
      CHECK_EQ(comp.b, expect.b);
    }
  }
  MPI_Scan(&mapv, &comp, 1, affine_type, affine_op, comm);
  expect.a = 1, expect.b = 0;
  for (int r = 0; r <= rank; ++r) expect.b = ((r + 2) * expect.b + r) % 1009, expect.a = (expect.a * (r + 2)) % 1009;
  CHECK_EQ(comp.a, expect.a);
  CHECK_EQ(comp.b, expect.b);
  free(send), free(recv), free(counts), free(displs), free(rcounts), free(rdispls), free(vbuf);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  MPI_Datatype affine_type;
  MPI_Type_contiguous(2, MPI_INT, &affine_type);
  MPI_Type_commit(&affine_type);
  MPI_Op affine_op;
  MPI_Op_create(compose, 0, &affine_op);
  check_comm(MPI_COMM_WORLD, affine_type, affine_op);
  /* The same on the two halves of a split (odd sizes give halves of different sizes). */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
  check_comm(half, affine_type, affine_op);
  MPI_Comm_free(&half);
  MPI_Op_free(&affine_op);
  MPI_Type_free(&affine_type);
  return all_checks_passed("collectives");
}
