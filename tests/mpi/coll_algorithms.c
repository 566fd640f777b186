/* The collectives under whatever algorithms --coll and --coll-selector choose: results checked on
 * MPI_COMM_WORLD, on the odd ranks in reverse order, and on the even ranks, with message sizes
 * on both sides of the libraries' thresholds; non-commutative user operators (which an algorithm
 * that needs a commutative one must give way for) and commutative predefined ones. */
#include <stdlib.h>

#include "check.h"

/* x -> a x + b (mod 2^32), an affine map as two unsigned ints; composing them is associative but
 * does not commute. */
typedef struct {
  unsigned a, b;
} Affine;

static Affine operand(int rank, int j) {
  Affine f;
  f.a = 2u * (unsigned)(rank * 7919 + j * 104729) + 1u;
  f.b = (unsigned)(rank * 31 + j * 17 + 5);
  return f;
}

/* inout = in then inout. */
static void compose(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const Affine* x = in;
  Affine* y = inout;
  for (int i = 0; i < *len; ++i) {
    const Affine lo = x[i], hi = y[i];
    y[i].a = hi.a * lo.a;
    y[i].b = hi.a * lo.b + hi.b;
  }
}

static Affine fold(int first, int last, int j) {
  Affine acc = operand(first, j);
  for (int r = first + 1; r <= last; ++r) {
    const Affine hi = operand(r, j);
    acc.b = hi.a * acc.b + hi.b;
    acc.a = hi.a * acc.a;
  }
  return acc;
}

static MPI_Datatype affine_type;
static MPI_Op affine_op;

/* Every collective on comm, for a vector of n elements. */
static void exercise(MPI_Comm comm, int n) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int root = size > 2 ? size - 2 : 0;

  /* Broadcast of n ints. */
  int* ints = malloc((size_t)n * size * sizeof(int));
  int* got = malloc((size_t)n * size * sizeof(int));
  for (int j = 0; j < n; ++j) ints[j] = rank == root ? j * 3 + 1 : -1;
  MPI_Bcast(ints, n, MPI_INT, root, comm);
  for (int j = 0; j < n; ++j) CHECK_EQ(ints[j], j * 3 + 1);

  /* Allgather and alltoall of n ints per rank. */
  for (int j = 0; j < n; ++j) ints[j] = rank * 1000 + j;
  MPI_Allgather(ints, n, MPI_INT, got, n, MPI_INT, comm);
  for (int k = 0; k < size; ++k)
    for (int j = 0; j < n; ++j) CHECK_EQ(got[k * n + j], k * 1000 + j);
  for (int k = 0; k < size; ++k)
    for (int j = 0; j < n; ++j) ints[k * n + j] = rank * 100000 + k * 100 + j % 100;
  MPI_Alltoall(ints, n, MPI_INT, got, n, MPI_INT, comm);
  for (int k = 0; k < size; ++k)
    for (int j = 0; j < n; ++j) CHECK_EQ(got[k * n + j], k * 100000 + rank * 100 + j % 100);

  /* Commutative predefined reductions: sums of ints and doubles, a maximum. */
  for (int j = 0; j < n; ++j) ints[j] = rank + j;
  MPI_Allreduce(ints, got, n, MPI_INT, MPI_SUM, comm);
  for (int j = 0; j < n; ++j) CHECK_EQ(got[j], size * (size - 1) / 2 + size * j);
  double* d = malloc((size_t)n * sizeof(double));
  double* dsum = malloc((size_t)n * sizeof(double));
  for (int j = 0; j < n; ++j) d[j] = 0.5 * rank + j;
  MPI_Reduce(d, dsum, n, MPI_DOUBLE, MPI_SUM, root, comm);
  if (rank == root)
    for (int j = 0; j < n; ++j) CHECK(dsum[j] == 0.25 * size * (size - 1) + (double)size * j);
  MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_MAX, comm);
  for (int j = 0; j < n; ++j) CHECK(d[j] == 0.5 * (size - 1) + j);

  /* Non-commutative: reduce, allreduce, scan and exscan in rank order. */
  Affine* f = malloc((size_t)n * size * sizeof(Affine));
  Affine* r = malloc((size_t)n * size * sizeof(Affine));
  for (int j = 0; j < n; ++j) f[j] = operand(rank, j);
  MPI_Allreduce(f, r, n, affine_type, affine_op, comm);
  for (int j = 0; j < n; ++j) {
    const Affine w = fold(0, size - 1, j);
    CHECK(r[j].a == w.a && r[j].b == w.b);
  }
  MPI_Reduce(f, r, n, affine_type, affine_op, root, comm);
  if (rank == root)
    for (int j = 0; j < n; ++j) {
      const Affine w = fold(0, size - 1, j);
      CHECK(r[j].a == w.a && r[j].b == w.b);
    }
  MPI_Scan(f, r, n, affine_type, affine_op, comm);
  for (int j = 0; j < n; ++j) {
    const Affine w = fold(0, rank, j);
    CHECK(r[j].a == w.a && r[j].b == w.b);
  }
  MPI_Exscan(f, r, n, affine_type, affine_op, comm);
  if (rank > 0)
    for (int j = 0; j < n; ++j) {
      const Affine w = fold(0, rank - 1, j);
      CHECK(r[j].a == w.a && r[j].b == w.b);
    }

  /* Reduce-scatter with uneven blocks (rank k gets k % 3 + n elements), commutative and not. */
  int* counts = malloc((size_t)size * sizeof(int));
  int total = 0, before = 0;
  for (int k = 0; k < size; ++k) {
    counts[k] = k % 3 + n;
    if (k < rank) before += counts[k];
    total += counts[k];
  }
  int* vec = malloc((size_t)total * sizeof(int));
  for (int j = 0; j < total; ++j) vec[j] = rank * 3 + j;
  MPI_Reduce_scatter(vec, got, counts, MPI_INT, MPI_SUM, comm);
  for (int j = 0; j < counts[rank]; ++j) CHECK_EQ(got[j], 3 * size * (size - 1) / 2 + size * (before + j));
  Affine* fv = malloc((size_t)total * sizeof(Affine));
  for (int j = 0; j < total; ++j) fv[j] = operand(rank, j);
  MPI_Reduce_scatter(fv, r, counts, affine_type, affine_op, comm);
  for (int j = 0; j < counts[rank]; ++j) {
    const Affine w = fold(0, size - 1, before + j);
    CHECK(r[j].a == w.a && r[j].b == w.b);
  }
  for (int j = 0; j < size; ++j) ints[j] = rank + j;
  MPI_Reduce_scatter_block(ints, got, 1, MPI_INT, MPI_SUM, comm);
  CHECK_EQ(got[0], size * (size - 1) / 2 + size * rank);

  /* Barrier: nothing to check but that every rank gets through. */
  MPI_Barrier(comm);
  free(ints), free(got), free(d), free(dsum), free(f), free(r), free(counts), free(vec), free(fv);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_type);
  MPI_Type_commit(&affine_type);
  MPI_Op_create(compose, 0, &affine_op);

  /* The odd ranks in reverse order, and the even ranks: two communicators that are not the world. */
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank % 2 ? -rank : rank, &sub);
  const int sizes[] = {1, 3, 100, 700, 5000};
  for (int i = 0; i < 5; ++i) {
    exercise(MPI_COMM_WORLD, sizes[i]);
    exercise(sub, sizes[i]);
  }
  MPI_Comm_free(&sub);
  MPI_Op_free(&affine_op);
  MPI_Type_free(&affine_type);
  if (rank == 0) printf("all checks passed\n");
  MPI_Finalize();
  return 0;
}
