/* Derived datatypes: every constructor's layout through point-to-point (sent from and received
 * into the type), bounds and extents, envelopes and contents, names, MPI_BOTTOM with absolute
 * addresses, and derived types in collectives on a sub-communicator. Needs at least 3 ranks. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 64 };

/* Rank 0 sends one buffer of `count` elements of t to the last rank, which receives them as
 * plain ints (checking they are src[idx[k]] in type-map order), sends them back as plain ints,
 * and rank 0 receives them into a zeroed buffer through t: exactly the positions idx are set.
 * `origin` is where the type's buffer starts inside the array (negative strides need room). */
static void roundtrip(MPI_Datatype t, int count, int origin, const int* idx, int n, int receivable) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int last = size - 1;
  int src[N], got[N];
  for (int i = 0; i < N; ++i) src[i] = 1000 + i;
  if (rank == 0) {
    MPI_Send(src + origin, count, t, last, 1, MPI_COMM_WORLD);
    if (receivable) {
      memset(got, 0, sizeof got);
      MPI_Status st;
      MPI_Recv(got + origin, count, t, last, 2, MPI_COMM_WORLD, &st);
      int elements = -1;
      MPI_Get_elements(&st, t, &elements);
      CHECK_EQ(elements, n);
      int set = 0;
      for (int i = 0; i < N; ++i) set += got[i] != 0;
      CHECK_EQ(set, n);
      for (int k = 0; k < n; ++k) CHECK_EQ(got[idx[k]], 1000 + idx[k]);
    }
  } else if (rank == last) {
    int plain[N];
    MPI_Status st;
    MPI_Recv(plain, N, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
    int received = -1;
    MPI_Get_count(&st, MPI_INT, &received);
    CHECK_EQ(received, n);
    for (int k = 0; k < n; ++k) CHECK_EQ(plain[k], 1000 + idx[k]);
    if (receivable) MPI_Send(plain, n, MPI_INT, 0, 2, MPI_COMM_WORLD);
  }
}

static void check_bounds(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint extent, MPI_Aint true_lb,
                         MPI_Aint true_extent) {
  int s = -1;
  MPI_Aint l, e, tl, te;
  MPI_Count sx, lx, ex, tlx, tex;
  MPI_Type_size(t, &s);
  MPI_Type_get_extent(t, &l, &e);
  MPI_Type_get_true_extent(t, &tl, &te);
  MPI_Type_size_x(t, &sx);
  MPI_Type_get_extent_x(t, &lx, &ex);
  MPI_Type_get_true_extent_x(t, &tlx, &tex);
  CHECK_EQ(s, size);
  CHECK_EQ(l, lb);
  CHECK_EQ(e, extent);
  CHECK_EQ(tl, true_lb);
  CHECK_EQ(te, true_extent);
  CHECK_EQ(sx, size);
  CHECK_EQ(lx, lb);
  CHECK_EQ(ex, extent);
  CHECK_EQ(tlx, true_lb);
  CHECK_EQ(tex, true_extent);
}

static MPI_Datatype committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

static void constructors(int rank) {
  MPI_Datatype t;
  const int I = (int)sizeof(int);

  MPI_Type_contiguous(5, MPI_INT, &t);
  const int contiguous[] = {0, 1, 2, 3, 4};
  roundtrip(committed(t), 1, 0, contiguous, 5, 1);
  check_bounds(t, 5 * I, 0, 5 * I, 0, 5 * I);
  MPI_Type_free(&t);

  /* 3 blocks of 2 ints, 4 ints apart. */
  MPI_Type_vector(3, 2, 4, MPI_INT, &t);
  const int vector[] = {0, 1, 4, 5, 8, 9};
  roundtrip(committed(t), 1, 0, vector, 6, 1);
  check_bounds(t, 6 * I, 0, 10 * I, 0, 10 * I);
  /* A duplicate is the same layout, committed like its original. */
  MPI_Datatype dup;
  MPI_Type_dup(t, &dup);
  roundtrip(dup, 1, 0, vector, 6, 1);
  MPI_Type_free(&dup);
  MPI_Type_free(&t);

  /* A negative stride walks backwards from the buffer's address: lb is negative. */
  MPI_Type_vector(3, 1, -2, MPI_INT, &t);
  const int backwards[] = {20, 18, 16};
  roundtrip(committed(t), 1, 20, backwards, 3, 1);
  check_bounds(t, 3 * I, -4 * I, 5 * I, -4 * I, 5 * I);
  MPI_Type_free(&t);

  /* Stride less than the block length: overlapping blocks, which may be sent. */
  MPI_Type_vector(2, 3, 1, MPI_INT, &t);
  const int overlapping[] = {0, 1, 2, 1, 2, 3};
  roundtrip(committed(t), 1, 0, overlapping, 6, 0);
  check_bounds(t, 6 * I, 0, 4 * I, 0, 4 * I);
  MPI_Type_free(&t);

  MPI_Type_create_hvector(3, 1, 3 * I, MPI_INT, &t);
  const int hvector[] = {0, 3, 6};
  roundtrip(committed(t), 1, 0, hvector, 3, 1);
  MPI_Type_free(&t);
  MPI_Type_hvector(2, 2, 5 * I, MPI_INT, &t);
  const int old_hvector[] = {0, 1, 5, 6};
  roundtrip(committed(t), 1, 0, old_hvector, 4, 1);
  MPI_Type_free(&t);

  /* Type-map order, not address order: the blocks go out as listed. */
  const int bl[] = {2, 1, 3}, disp[] = {5, 0, 9};
  MPI_Type_indexed(3, bl, disp, MPI_INT, &t);
  const int indexed[] = {5, 6, 0, 9, 10, 11};
  roundtrip(committed(t), 1, 0, indexed, 6, 1);
  check_bounds(t, 6 * I, 0, 12 * I, 0, 12 * I);
  MPI_Type_free(&t);

  const int hbl[] = {1, 2};
  const MPI_Aint hdisp[] = {7 * I, 1 * I};
  MPI_Type_create_hindexed(2, hbl, hdisp, MPI_INT, &t);
  const int hindexed[] = {7, 1, 2};
  roundtrip(committed(t), 1, 0, hindexed, 3, 1);
  check_bounds(t, 3 * I, I, 7 * I, I, 7 * I);
  MPI_Type_free(&t);
  MPI_Type_hindexed(2, hbl, hdisp, MPI_INT, &t);
  roundtrip(committed(t), 1, 0, hindexed, 3, 1);
  MPI_Type_free(&t);

  const int bdisp[] = {6, 1, 10};
  MPI_Type_create_indexed_block(3, 2, bdisp, MPI_INT, &t);
  const int indexed_block[] = {6, 7, 1, 2, 10, 11};
  roundtrip(committed(t), 1, 0, indexed_block, 6, 1);
  MPI_Type_free(&t);

  const MPI_Aint hbdisp[] = {2 * I, 0};
  MPI_Type_create_hindexed_block(2, 1, hbdisp, MPI_INT, &t);
  const int hindexed_block[] = {2, 0};
  roundtrip(committed(t), 1, 0, hindexed_block, 2, 1);
  MPI_Type_free(&t);

  const int sbl[] = {1, 2};
  const MPI_Aint sdisp[] = {3 * I, 8 * I};
  const MPI_Datatype stypes[] = {MPI_INT, MPI_INT};
  MPI_Type_create_struct(2, sbl, sdisp, stypes, &t);
  const int structure[] = {3, 8, 9};
  roundtrip(committed(t), 1, 0, structure, 3, 1);
  MPI_Type_free(&t);
  MPI_Type_struct(2, sbl, sdisp, stypes, &t);
  roundtrip(committed(t), 1, 0, structure, 3, 1);
  MPI_Type_free(&t);

  /* A 4 x 6 array: rows 1..2, columns 2..4 (C order), and the same numbers in Fortran order
   * (element (i, j) at i + 4 j). */
  const int sizes[] = {4, 6}, subsizes[] = {2, 3}, starts[] = {1, 2};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t);
  const int sub_c[] = {8, 9, 10, 14, 15, 16};
  roundtrip(committed(t), 1, 0, sub_c, 6, 1);
  check_bounds(t, 6 * I, 0, 24 * I, 8 * I, 9 * I);
  MPI_Type_free(&t);
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
  const int sub_f[] = {9, 10, 13, 14, 17, 18};
  roundtrip(committed(t), 1, 0, sub_f, 6, 1);
  MPI_Type_free(&t);

  /* Rank 4 of a 2 x 3 process grid over a 4 x 6 array, rows by blocks, columns cyclic: grid
   * coordinates (1, 1), rows 2..3, columns 1 and 4. */
  const int gsizes[] = {4, 6}, distribs[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  const int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {2, 3};
  MPI_Type_create_darray(6, 4, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
  const int darray_c[] = {13, 16, 19, 22};
  roundtrip(committed(t), 1, 0, darray_c, 4, 1);
  check_bounds(t, 4 * I, 0, 24 * I, 13 * I, 10 * I);
  MPI_Type_free(&t);
  /* Rank 1 of a 1 x 2 grid over a 3 x 5 Fortran array, rows not distributed, columns cyclic by
   * 2: columns 2 and 3, each 3 elements. */
  const int g2[] = {3, 5}, d2[] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC};
  const int a2[] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, p2[] = {1, 2};
  MPI_Type_create_darray(2, 1, 2, g2, d2, a2, p2, MPI_ORDER_FORTRAN, MPI_INT, &t);
  const int darray_f[] = {6, 7, 8, 9, 10, 11};
  roundtrip(committed(t), 1, 0, darray_f, 6, 1);
  check_bounds(t, 6 * I, 0, 15 * I, 6 * I, 6 * I);
  MPI_Type_free(&t);

  /* Resized to 3 ints: count 3 takes every third int. */
  MPI_Type_create_resized(MPI_INT, 0, 3 * I, &t);
  const int resized[] = {0, 3, 6};
  roundtrip(committed(t), 3, 0, resized, 3, 1);
  check_bounds(t, I, 0, 3 * I, 0, I);
  MPI_Type_free(&t);

  /* Types of types: a vector of vectors (the inner one freed before use), and count 2 of a type
   * whose extent (3 ints) differs from its size (2 ints). */
  MPI_Datatype inner;
  MPI_Type_vector(2, 1, 2, MPI_INT, &inner);
  MPI_Type_vector(2, 1, 2, inner, &t);
  MPI_Type_free(&inner);
  const int nested[] = {0, 2, 6, 8};
  roundtrip(committed(t), 1, 0, nested, 4, 1);
  check_bounds(t, 4 * I, 0, 9 * I, 0, 9 * I);
  MPI_Type_free(&t);
  MPI_Type_vector(2, 1, 2, MPI_INT, &t);
  const int twice[] = {0, 2, 3, 5};
  roundtrip(committed(t), 2, 0, twice, 4, 1);
  MPI_Type_free(&t);
  (void)rank;
}

struct Mixed {
  char c;
  double d;
  int i;
};

static MPI_Datatype mixed_type(void) {
  const int bl[] = {1, 1, 1};
  const MPI_Aint disp[] = {offsetof(struct Mixed, c), offsetof(struct Mixed, d), offsetof(struct Mixed, i)};
  const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  MPI_Datatype t;
  MPI_Type_create_struct(3, bl, disp, types, &t);
  MPI_Type_commit(&t);
  return t;
}

/* A struct of mixed types: padded to the C struct's size, 13 data bytes per element, element
 * counts in units of its predefined members (MPI_Get_elements) and MPI_UNDEFINED mid-element. */
static void mixed_struct(int rank, int size) {
  MPI_Datatype t = mixed_type();
  check_bounds(t, 13, 0, (MPI_Aint)sizeof(struct Mixed), 0, 20);
  const int last = size - 1;
  struct Mixed a[2] = {{'x', 1.5, 7}, {'y', -2.25, 9}}, b[2];
  if (rank == 0) {
    MPI_Send(a, 2, t, last, 3, MPI_COMM_WORLD);
    MPI_Send(a, 2, t, last, 4, MPI_COMM_WORLD);
    unsigned char bytes[14] = {0};
    MPI_Send(bytes, 14, MPI_BYTE, last, 5, MPI_COMM_WORLD);
    MPI_Send(bytes, 16, MPI_BYTE, last, 6, MPI_COMM_WORLD);
  } else if (rank == last) {
    MPI_Status st;
    memset(b, 0, sizeof b);
    MPI_Recv(b, 2, t, 0, 3, MPI_COMM_WORLD, &st);
    CHECK(b[0].c == 'x' && b[0].d == 1.5 && b[0].i == 7);
    CHECK(b[1].c == 'y' && b[1].d == -2.25 && b[1].i == 9);
    int count = -1, elements = -1;
    MPI_Get_count(&st, t, &count);
    MPI_Get_elements(&st, t, &elements);
    CHECK_EQ(count, 2);
    CHECK_EQ(elements, 6);
    /* Only data bytes travel: c, d, i, c, d, i packed. */
    unsigned char raw[26];
    MPI_Recv(raw, 26, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &st);
    double d;
    int i;
    memcpy(&d, raw + 14, sizeof d);
    memcpy(&i, raw + 22, sizeof i);
    CHECK(raw[0] == 'x' && raw[13] == 'y' && d == -2.25 && i == 9);
    /* 14 bytes: one element and a char. 16 bytes: the next double is cut. */
    MPI_Recv(b, 2, t, 0, 5, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, t, &count);
    MPI_Get_elements(&st, t, &elements);
    CHECK_EQ(count, MPI_UNDEFINED);
    CHECK_EQ(elements, 4);
    MPI_Recv(b, 2, t, 0, 6, MPI_COMM_WORLD, &st);
    MPI_Get_elements(&st, t, &elements);
    CHECK_EQ(elements, MPI_UNDEFINED);
    MPI_Count ex = -1;
    MPI_Get_elements_x(&st, t, &ex);
    CHECK_EQ(ex, MPI_UNDEFINED);
  }
  MPI_Type_free(&t);
}

static void bounds(void) {
  const int I = (int)sizeof(int);
  /* Pair types keep their C layout: data without the padding. */
  check_bounds(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
  check_bounds(MPI_SHORT_INT, 6, 0, 8, 0, 8);
  check_bounds(MPI_2INT, 8, 0, 8, 0, 8);
  check_bounds(MPI_LONG_DOUBLE_INT, (int)sizeof(long double) + I, 0, 2 * (MPI_Aint)sizeof(long double), 0,
               (MPI_Aint)sizeof(long double) + I);
  check_bounds(MPI_C_DOUBLE_COMPLEX, 16, 0, 16, 0, 16);
  /* Explicit bounds (resized) carry into enclosing types and stop the struct's padding. */
  MPI_Datatype r, s;
  MPI_Type_create_resized(MPI_INT, -I, 3 * I, &r);
  check_bounds(r, I, -I, 3 * I, 0, I);
  const int bl[] = {2};
  const MPI_Aint disp[] = {25 * I};
  MPI_Type_create_struct(1, bl, disp, &r, &s);
  check_bounds(s, 2 * I, 24 * I, 6 * I, 25 * I, 4 * I);
  MPI_Type_free(&s);
  MPI_Type_free(&r);
  /* Without markers a struct's extent is padded to its strictest member: {double, char}. */
  const int bl2[] = {1, 1};
  const MPI_Aint disp2[] = {0, 8};
  const MPI_Datatype types2[] = {MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct(2, bl2, disp2, types2, &s);
  check_bounds(s, 9, 0, 16, 0, 9);
  MPI_Type_free(&s);
  /* Zero elements: an empty type. */
  MPI_Type_contiguous(0, MPI_INT, &s);
  check_bounds(s, 0, 0, 0, 0, 0);
  MPI_Type_free(&s);
}

static void envelopes(void) {
  int ni, na, nd, combiner;
  MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &combiner);
  CHECK(ni == 0 && na == 0 && nd == 0 && combiner == MPI_COMBINER_NAMED);

  MPI_Datatype v, s, got[2];
  int ints[8];
  MPI_Aint aints[4];
  MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &v);
  MPI_Type_get_envelope(v, &ni, &na, &nd, &combiner);
  CHECK(ni == 3 && na == 0 && nd == 1 && combiner == MPI_COMBINER_VECTOR);
  MPI_Type_get_contents(v, 8, 4, 2, ints, aints, got);
  CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && got[0] == MPI_DOUBLE);

  const int bl[] = {1, 2};
  const MPI_Aint disp[] = {0, 64};
  const MPI_Datatype types[] = {MPI_INT, v};
  MPI_Type_create_struct(2, bl, disp, types, &s);
  MPI_Type_free(&v);  /* the struct keeps what it was built from */
  MPI_Type_get_envelope(s, &ni, &na, &nd, &combiner);
  CHECK(ni == 3 && na == 2 && nd == 2 && combiner == MPI_COMBINER_STRUCT);
  MPI_Type_get_contents(s, 8, 4, 2, ints, aints, got);
  CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && aints[0] == 0 && aints[1] == 64);
  CHECK_EQ(got[0], MPI_INT);
  /* The derived member comes back as a new handle, the caller's to free. */
  MPI_Type_get_envelope(got[1], &ni, &na, &nd, &combiner);
  CHECK(ni == 3 && combiner == MPI_COMBINER_VECTOR);
  int vsize = 0;
  MPI_Type_size(got[1], &vsize);
  CHECK_EQ(vsize, 6 * (int)sizeof(double));
  MPI_Type_free(&got[1]);

  MPI_Datatype r;
  MPI_Type_create_resized(s, -8, 200, &r);
  MPI_Type_get_envelope(r, &ni, &na, &nd, &combiner);
  CHECK(ni == 0 && na == 2 && nd == 1 && combiner == MPI_COMBINER_RESIZED);
  MPI_Type_get_contents(r, 0, 4, 2, ints, aints, got);
  CHECK(aints[0] == -8 && aints[1] == 200);
  MPI_Type_free(&got[0]);
  MPI_Type_free(&r);
  MPI_Type_free(&s);

  const int sizes[] = {4, 6, 8}, subsizes[] = {1, 2, 3}, starts[] = {0, 1, 2};
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, &s);
  MPI_Type_get_envelope(s, &ni, &na, &nd, &combiner);
  CHECK(ni == 3 * 3 + 2 && na == 0 && nd == 1 && combiner == MPI_COMBINER_SUBARRAY);
  int sub[11];
  MPI_Type_get_contents(s, 11, 0, 1, sub, aints, got);
  CHECK(sub[0] == 3 && sub[4] == 1 && sub[9] == 2 && sub[10] == MPI_ORDER_FORTRAN && got[0] == MPI_FLOAT);
  MPI_Type_free(&s);

  const int hbl[] = {1};
  const MPI_Aint hd[] = {8};
  const int idx[] = {3};
  struct {
    int combiner, ni, na;
  } expect[] = {{MPI_COMBINER_HINDEXED, 2, 1}, {MPI_COMBINER_INDEXED_BLOCK, 3, 0},
                {MPI_COMBINER_HINDEXED_BLOCK, 2, 1}, {MPI_COMBINER_HVECTOR, 2, 1},
                {MPI_COMBINER_CONTIGUOUS, 1, 0}, {MPI_COMBINER_DUP, 0, 0}};
  MPI_Datatype made[6];
  MPI_Type_create_hindexed(1, hbl, hd, MPI_INT, &made[0]);
  MPI_Type_create_indexed_block(1, 2, idx, MPI_INT, &made[1]);
  MPI_Type_create_hindexed_block(1, 2, hd, MPI_INT, &made[2]);
  MPI_Type_create_hvector(2, 1, 16, MPI_INT, &made[3]);
  MPI_Type_contiguous(4, MPI_INT, &made[4]);
  MPI_Type_dup(MPI_INT, &made[5]);
  for (int k = 0; k < 6; ++k) {
    MPI_Type_get_envelope(made[k], &ni, &na, &nd, &combiner);
    CHECK(combiner == expect[k].combiner && ni == expect[k].ni && na == expect[k].na && nd == 1);
    MPI_Type_free(&made[k]);
  }

  /* A predefined type has no contents: an error, returned under MPI_ERRORS_RETURN. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Type_get_contents(MPI_INT, 8, 4, 2, ints, aints, got), MPI_ERR_TYPE);
  CHECK_EQ(MPI_Type_free(&made[0]), MPI_ERR_TYPE);  /* MPI_DATATYPE_NULL */
  int bad[] = {1};
  CHECK_EQ(MPI_Type_indexed(-1, bad, bad, MPI_INT, &s), MPI_ERR_COUNT);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void check_name(MPI_Datatype t, const char* want) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Type_get_name(t, name, &len);
  CHECK(strcmp(name, want) == 0);
  CHECK_EQ(len, (int)strlen(want));
}

static void names(void) {
  check_name(MPI_INT, "MPI_INT");
  check_name(MPI_PACKED, "MPI_PACKED");
  check_name(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
  check_name(MPI_CXX_BOOL, "MPI_CXX_BOOL");
  check_name(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
  check_name(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
  MPI_Datatype t, d;
  MPI_Type_contiguous(2, MPI_INT, &t);
  check_name(t, "");
  MPI_Type_set_name(t, "pair of ints");
  check_name(t, "pair of ints");
  MPI_Type_dup(t, &d);
  check_name(d, "");
  MPI_Type_free(&d);
  MPI_Type_free(&t);
  MPI_Type_set_name(MPI_FLOAT, "single");
  check_name(MPI_FLOAT, "single");
}

/* Absolute addresses: a struct of two separate variables, sent from and received into
 * MPI_BOTTOM; MPI_Aint_add and MPI_Aint_diff do address arithmetic. */
static void bottom(int rank, int size) {
  int x = rank == 0 ? 42 : 0;
  double y[3] = {0, 0, 0};
  if (rank == 0) y[1] = 6.5, y[2] = -1;
  MPI_Aint ax, ay0, ay1;
  MPI_Get_address(&x, &ax);
  MPI_Get_address(&y[0], &ay0);
  MPI_Get_address(&y[1], &ay1);
  CHECK_EQ(MPI_Aint_diff(ay1, ay0), sizeof(double));
  CHECK_EQ(MPI_Aint_add(ay0, sizeof(double)), ay1);
  const int bl[] = {1, 2};
  const MPI_Aint disp[] = {ax, ay1};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype t;
  MPI_Type_create_struct(2, bl, disp, types, &t);
  MPI_Type_commit(&t);
  const int last = size - 1;
  if (rank == 0) MPI_Send(MPI_BOTTOM, 1, t, last, 7, MPI_COMM_WORLD);
  if (rank == last) {
    MPI_Recv(MPI_BOTTOM, 1, t, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(x == 42 && y[0] == 0 && y[1] == 6.5 && y[2] == -1);
  }
  MPI_Type_free(&t);
}

/* Derived types in collectives on the odd/even halves of the world: a broadcast of a column, a
 * transpose by alltoall with a resized column type, and an allgather of mixed structs. */
static void collectives(int rank) {
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int r, p;
  MPI_Comm_rank(half, &r);
  MPI_Comm_size(half, &p);

  enum { C = 5 };
  int grid[4][C];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < C; ++j) grid[i][j] = r == p - 1 ? 10 * i + j : -1;
  MPI_Datatype column;
  MPI_Type_vector(4, 1, C, MPI_INT, &column);
  MPI_Type_commit(&column);
  MPI_Bcast(&grid[0][2], 1, column, p - 1, half);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < C; ++j) CHECK_EQ(grid[i][j], j == 2 || r == p - 1 ? 10 * i + j : -1);
  MPI_Type_free(&column);

  /* Row k of rank r's p x p matrix goes to rank k as column r: a[r][k][j] = 100 r + 10 k + j. */
  int* a = malloc(sizeof(int) * (size_t)(p * p));
  int* t = malloc(sizeof(int) * (size_t)(p * p));
  for (int k = 0; k < p; ++k)
    for (int j = 0; j < p; ++j) a[k * p + j] = 100 * r + 10 * k + j;
  MPI_Datatype col, col_resized;
  MPI_Type_vector(p, 1, p, MPI_INT, &col);
  MPI_Type_create_resized(col, 0, sizeof(int), &col_resized);
  MPI_Type_commit(&col_resized);
  MPI_Alltoall(a, p, MPI_INT, t, 1, col_resized, half);
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) CHECK_EQ(t[i * p + j], 100 * j + 10 * r + i);
  MPI_Type_free(&col);
  MPI_Type_free(&col_resized);
  free(a);
  free(t);

  MPI_Datatype m = mixed_type();
  struct Mixed mine = {(char)('a' + r), r + 0.5, -r};
  struct Mixed* all = calloc((size_t)p, sizeof *all);
  MPI_Allgather(&mine, 1, m, all, 1, m, half);
  for (int i = 0; i < p; ++i) CHECK(all[i].c == 'a' + i && all[i].d == i + 0.5 && all[i].i == -i);
  /* Gatherv to the last rank, in reverse rank order. */
  int* counts = malloc(sizeof(int) * (size_t)p);
  int* displs = malloc(sizeof(int) * (size_t)p);
  for (int i = 0; i < p; ++i) counts[i] = 1, displs[i] = p - 1 - i;
  memset(all, 0, sizeof *all * (size_t)p);
  MPI_Gatherv(&mine, 1, m, all, counts, displs, m, p - 1, half);
  if (r == p - 1)
    for (int i = 0; i < p; ++i) CHECK(all[p - 1 - i].c == 'a' + i && all[p - 1 - i].d == i + 0.5);
  free(counts);
  free(displs);
  free(all);
  /* Scatter from rank 0 of every other int of 4 per rank, received as 2 plain ints. */
  MPI_Datatype pair, pair4;
  MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
  MPI_Type_create_resized(pair, 0, 4 * sizeof(int), &pair4);
  MPI_Type_commit(&pair4);
  int* src = malloc(sizeof(int) * 4 * (size_t)p);
  for (int k = 0; k < 4 * p; ++k) src[k] = k;
  int two[2] = {-1, -1};
  MPI_Scatter(src, 1, pair4, two, 2, MPI_INT, 0, half);
  CHECK(two[0] == 4 * r && two[1] == 4 * r + 2);
  free(src);
  MPI_Type_free(&pair);
  MPI_Type_free(&pair4);
  MPI_Type_free(&m);
  MPI_Comm_free(&half);
}

/* A vector of more separate runs than a type map lists (2^22 + 1 single chars, every other
 * one), and two of it: kept as placements, sent and received like any other type. */
static void huge_vector(int rank, int size) {
  const int n = (1 << 22) + 1;
  MPI_Datatype v, two;
  MPI_Type_vector(n, 1, 2, MPI_CHAR, &v);
  MPI_Type_contiguous(2, v, &two);
  MPI_Type_commit(&two);
  check_bounds(two, 2 * n, 0, 2 * (2 * (MPI_Aint)n - 1), 0, 2 * (2 * (MPI_Aint)n - 1));
  const int last = size - 1;
  char* spread = malloc(4 * (size_t)n);
  char* dense = malloc(2 * (size_t)n);
  for (size_t i = 0; i < 4 * (size_t)n; ++i) spread[i] = (char)(i % 101);
  if (rank == 0) {
    MPI_Send(spread, 1, two, last, 8, MPI_COMM_WORLD);
    memset(spread, 0, 4 * (size_t)n);
    MPI_Recv(spread, 1, two, last, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* The second vector starts one extent (2 n - 1) on: its chars are the odd positions. */
    const size_t second = 2 * (size_t)n - 1;
    CHECK(spread[0] == 0 && spread[2] == 2 && spread[4 * (size_t)n - 1] == 0);
    CHECK(spread[second + 2] == (char)((second + 2) % 101));
    CHECK(spread[second + 2 * (size_t)(n - 1)] == (char)((second + 2 * (size_t)(n - 1)) % 101));
  } else if (rank == last) {
    MPI_Recv(dense, 2 * n, MPI_CHAR, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(dense[1] == 2 && dense[n - 1] == (char)((2 * (size_t)(n - 1)) % 101));
    CHECK(dense[n] == (char)((2 * (size_t)n - 1) % 101));
    MPI_Send(dense, 2 * n, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
  }
  free(spread);
  free(dense);
  MPI_Type_free(&v);
  MPI_Type_free(&two);
}

/* MPI-4.1's MPI_Type_get_value_index: the predefined pair of a value and an index type, the
 * null type for a pair MPI has not, MPI_ERR_TYPE for a handle that is none. */
static void value_index(void) {
  MPI_Datatype pair = MPI_BYTE;
  CHECK_EQ(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair), MPI_SUCCESS);
  CHECK(pair == MPI_DOUBLE_INT);
  MPI_Type_get_value_index(MPI_INT, MPI_INT, &pair);
  CHECK(pair == MPI_2INT);
  MPI_Type_get_value_index(MPI_LONG_DOUBLE, MPI_INT, &pair);
  CHECK(pair == MPI_LONG_DOUBLE_INT);
  MPI_Type_get_value_index(MPI_REAL, MPI_REAL, &pair);
  CHECK(pair == MPI_2REAL);
  MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &pair);
  CHECK(pair == MPI_DATATYPE_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Type_get_value_index((MPI_Datatype)987654, MPI_INT, &pair), MPI_ERR_TYPE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  value_index();
  constructors(rank);
  mixed_struct(rank, size);
  bounds();
  envelopes();
  names();
  bottom(rank, size);
  collectives(rank);
  huge_vector(rank, size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("all checks passed\n");
  MPI_Finalize();
  return 0;
}
