/* Reductions on datatypes: MINLOC/MAXLOC on every pair type, SUM/PROD on complex types,
 * predefined operations on derived types of one predefined type, user operations on
 * non-contiguous types, MPI_Reduce_local and MPI_Op_commutative. */
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Element 0: value (r + 1) % 3, so the minimum 0 is first at rank 2 and the maximum 2 at rank 1
 * (ties take the lower index); element 1: value -r. */
#define PAIR_TEST(T, TYPE)                                                                          \
  do {                                                                                              \
    struct {                                                                                        \
      T v;                                                                                          \
      int i;                                                                                        \
    } in[2] = {{(T)((rank + 1) % 3), rank}, {(T)(-rank), rank}}, lo[2], hi[2];                      \
    MPI_Allreduce(in, lo, 2, TYPE, MPI_MINLOC, MPI_COMM_WORLD);                                     \
    MPI_Allreduce(in, hi, 2, TYPE, MPI_MAXLOC, MPI_COMM_WORLD);                                     \
    CHECK(lo[0].v == 0 && lo[0].i == 2 && lo[1].v == (T)(-(size - 1)) && lo[1].i == size - 1);      \
    CHECK(hi[0].v == 2 && hi[0].i == 1 && hi[1].v == 0 && hi[1].i == 0);                            \
  } while (0)

static void pairs(int rank, int size) {
  PAIR_TEST(float, MPI_FLOAT_INT);
  PAIR_TEST(double, MPI_DOUBLE_INT);
  PAIR_TEST(long, MPI_LONG_INT);
  PAIR_TEST(int, MPI_2INT);
  PAIR_TEST(short, MPI_SHORT_INT);
  PAIR_TEST(long double, MPI_LONG_DOUBLE_INT);
  /* A pair type inside a derived type (MPI_DOUBLE_INT travels without its padding). */
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_DOUBLE_INT, &two);
  MPI_Type_commit(&two);
  struct {
    double v;
    int i;
  } in[2] = {{(double)((rank + 1) % 3), rank}, {(double)-rank, rank}}, out[2];
  MPI_Reduce(in, out, 1, two, MPI_MINLOC, size - 1, MPI_COMM_WORLD);
  if (rank == size - 1) CHECK(out[0].v == 0 && out[0].i == 2 && out[1].v == -(size - 1) && out[1].i == size - 1);
  MPI_Type_free(&two);
}

static void complexes(int rank, int size) {
  double complex d = 1 + rank * I, dsum = 0, dprod = 0;
  MPI_Allreduce(&d, &dsum, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(creal(dsum) == size && cimag(dsum) == size * (size - 1) / 2);
  /* The product of i over every rank: i^size, exact in floating point. */
  double complex unit = I, want = 1;
  for (int k = 0; k < size; ++k) want *= I;
  MPI_Allreduce(&unit, &dprod, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
  CHECK(dprod == want);
  float complex f[2] = {rank + 2.0f * I, 1.0f}, fs[2];
  MPI_Allreduce(f, fs, 2, MPI_C_FLOAT_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(crealf(fs[0]) == size * (size - 1) / 2 && cimagf(fs[0]) == 2.0f * size && fs[1] == (float)size);
  MPI_Allreduce(f, fs, 1, MPI_C_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(cimagf(fs[0]) == 2.0f * size);
  long double complex l = rank * I, ls = 0;
  MPI_Allreduce(&l, &ls, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(cimagl(ls) == size * (size - 1) / 2);
  MPI_Allreduce(&d, &dsum, 1, MPI_CXX_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(creal(dsum) == size);
}

/* Predefined operations on derived types made of one predefined type. */
static void derived(int rank, int size) {
  MPI_Datatype triple, every_other;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  int a[6] = {rank, 1, 2 * rank, rank, -1, 5}, s[6];
  MPI_Allreduce(a, s, 2, triple, MPI_SUM, MPI_COMM_WORLD);
  const int t = size * (size - 1) / 2;
  CHECK(s[0] == t && s[1] == size && s[2] == 2 * t && s[3] == t && s[4] == -size && s[5] == 5 * size);
  /* Only the vector's elements are written: the gaps keep the receive buffer's values. */
  MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &every_other);
  MPI_Type_commit(&every_other);
  double v[5] = {rank, 0, -rank, 0, rank % 4}, m[5] = {-9, -9, -9, -9, -9};
  MPI_Allreduce(v, m, 1, every_other, MPI_MAX, MPI_COMM_WORLD);
  CHECK(m[0] == size - 1 && m[1] == -9 && m[2] == 0 && m[3] == -9 && m[4] == 3);
  MPI_Scan(v, m, 1, every_other, MPI_MIN, MPI_COMM_WORLD);
  CHECK(m[0] == 0 && m[2] == -rank && m[1] == -9);
  /* Reduce_scatter_block of a resized vector (slots 0 and 2 of 4 ints per block). */
  MPI_Datatype pair, pair4;
  MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
  MPI_Type_create_resized(pair, 0, 4 * sizeof(int), &pair4);
  MPI_Type_commit(&pair4);
  int* blocks = malloc(sizeof(int) * 4 * (size_t)size);
  for (int k = 0; k < 4 * size; ++k) blocks[k] = k + rank;
  int mine[4] = {-3, -3, -3, -3};
  MPI_Reduce_scatter_block(blocks, mine, 1, pair4, MPI_SUM, MPI_COMM_WORLD);
  CHECK(mine[0] == size * 4 * rank + t && mine[1] == -3 && mine[2] == size * (4 * rank + 2) + t && mine[3] == -3);
  free(blocks);
  MPI_Type_free(&pair);
  MPI_Type_free(&pair4);
  MPI_Type_free(&triple);
  MPI_Type_free(&every_other);
}

/* A user operation sees elements in the type's own layout: for the vector {0, 3} of 4 ints it
 * adds slots 0 and 3 of each element, and must not be handed the gaps. */
static MPI_Datatype user_vector;
static void add_slots(void* in, void* inout, int* len, MPI_Datatype* type) {
  CHECK(*type == user_vector);
  const int* a = in;
  int* b = inout;
  for (int k = 0; k < *len; ++k) {
    b[4 * k] += a[4 * k];
    b[4 * k + 3] += a[4 * k + 3];
  }
}

/* Associative, not commutative: slots 0 and 3 are (m, c) of x -> m x + c, and a op b is the
 * composition a after b, so the result shows the rank order. */
static void ordered(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* a = in;
  int* b = inout;
  for (int k = 0; k < *len; ++k) {
    b[4 * k + 3] = a[4 * k] * b[4 * k + 3] + a[4 * k + 3];
    b[4 * k] = a[4 * k] * b[4 * k];
  }
}

static void user_ops(int rank, int size) {
  MPI_Datatype v;
  MPI_Type_vector(2, 1, 3, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 4 * sizeof(int), &user_vector);
  MPI_Type_free(&v);
  MPI_Type_commit(&user_vector);
  MPI_Op add, ord;
  MPI_Op_create(add_slots, 1, &add);
  MPI_Op_create(ordered, 0, &ord);
  int commute = -1;
  MPI_Op_commutative(add, &commute);
  CHECK_EQ(commute, 1);
  MPI_Op_commutative(ord, &commute);
  CHECK_EQ(commute, 0);
  MPI_Op_commutative(MPI_MAXLOC, &commute);
  CHECK_EQ(commute, 1);

  int in[8], out[8];
  for (int i = 0; i < 8; ++i) in[i] = rank + 100 * i, out[i] = -7;
  const int root = size / 2, t = size * (size - 1) / 2;
  MPI_Reduce(in, out, 2, user_vector, add, root, MPI_COMM_WORLD);
  if (rank == root) {
    const int want[8] = {t, -7, -7, t + 300 * size, t + 400 * size, -7, -7, t + 700 * size};
    for (int i = 0; i < 8; ++i) CHECK_EQ(out[i], want[i]);
  }
  /* Rank r contributes x -> -x + r + 1 when odd, x + r + 1 when even; the result is rank 0's
   * map after rank 1's after ... */
  for (int i = 0; i < 8; ++i) in[i] = i == 0 ? (rank % 2 ? -1 : 1) : rank + 1, out[i] = 0;
  MPI_Allreduce(in, out, 1, user_vector, ord, MPI_COMM_WORLD);
  long long m = 1, c = 1;
  for (int r = 1; r < size; ++r) c = m * (r + 1) + c, m *= r % 2 ? -1 : 1;
  CHECK_EQ(out[0], m);
  CHECK_EQ(out[3], c);
  MPI_Op_free(&ord);

  /* MPI_Reduce_local: inoutbuf = inbuf op inoutbuf, on this rank alone. */
  int x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  MPI_Reduce_local(x, y, 2, user_vector, add);
  const int want[8] = {11, 20, 30, 44, 55, 60, 70, 88};
  for (int i = 0; i < 8; ++i) CHECK_EQ(y[i], want[i]);
  MPI_Reduce_local(x, y, 3, MPI_INT, MPI_PROD);
  CHECK(y[0] == 11 && y[1] == 40 && y[2] == 90 && y[3] == 44);
  struct {
    short v;
    int i;
  } p = {3, 9}, q = {3, 4};
  MPI_Reduce_local(&p, &q, 1, MPI_SHORT_INT, MPI_MINLOC);
  CHECK(q.v == 3 && q.i == 4);
  MPI_Op_free(&add);
  MPI_Type_free(&user_vector);

  /* Operations not defined on the type: MPI_ERR_OP. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Reduce_local(x, y, 1, MPI_2INT, MPI_SUM), MPI_ERR_OP);
  double complex z1 = 1, z2 = 2;
  CHECK_EQ(MPI_Reduce_local(&z1, &z2, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX), MPI_ERR_OP);
  MPI_Datatype mixed;
  const int bl[] = {1, 1};
  const MPI_Aint disp[] = {0, 8};
  const MPI_Datatype types[] = {MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(2, bl, disp, types, &mixed);
  MPI_Type_commit(&mixed);
  char scratch[32];
  CHECK_EQ(MPI_Reduce_local(scratch, scratch + 16, 1, mixed, MPI_SUM), MPI_ERR_OP);
  CHECK_EQ(MPI_Op_commutative(MPI_OP_NULL, &commute), MPI_ERR_OP);
  MPI_Type_free(&mixed);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  pairs(rank, size);
  complexes(rank, size);
  derived(rank, size);
  user_ops(rank, size);
  MPI_Barrier(MPI_COMM_WORLD);
  return all_checks_passed("datatypes_reduce");
}
