/* Fortran's named datatypes used from C (MPI-3.1 3.2.2): sizes and extents of gfortran's default
 * kinds on x86-64, names, the MPI_COMBINER_NAMED envelope, a message of each around a ring, and
 * reductions: MPI_SUM on MPI_INTEGER, MPI_REAL and MPI_DOUBLE_COMPLEX, MPI_LAND on MPI_LOGICAL,
 * MPI_MINLOC on MPI_2INTEGER, with the operations MPI-3.1 5.9.2 does not define refused; and the
 * parameterized types of MPI-3.1 17.1.9 (MPI_Type_create_f90_integer/real/complex): the kind each
 * (p, r) selects, their envelope and contents, one handle per (p, r), a message and a reduction of
 * one, and the errors (no kind, both arguments left out, freeing one). */
#include <complex.h>
#include <stdint.h>

#include "check.h"

static const struct {
  MPI_Datatype type;
  const char* name;
  int size;
} kTypes[] = {
    {MPI_INTEGER, "MPI_INTEGER", 4},
    {MPI_REAL, "MPI_REAL", 4},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8},
    {MPI_COMPLEX, "MPI_COMPLEX", 8},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16},
    {MPI_LOGICAL, "MPI_LOGICAL", 4},
    {MPI_CHARACTER, "MPI_CHARACTER", 1},
    {MPI_2REAL, "MPI_2REAL", 8},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16},
    {MPI_2INTEGER, "MPI_2INTEGER", 8},
    {MPI_INTEGER1, "MPI_INTEGER1", 1},
    {MPI_INTEGER2, "MPI_INTEGER2", 2},
    {MPI_INTEGER4, "MPI_INTEGER4", 4},
    {MPI_INTEGER8, "MPI_INTEGER8", 8},
    {MPI_REAL4, "MPI_REAL4", 4},
    {MPI_REAL8, "MPI_REAL8", 8},
    {MPI_COMPLEX8, "MPI_COMPLEX8", 8},
    {MPI_COMPLEX16, "MPI_COMPLEX16", 16},
    {MPI_INTEGER16, "MPI_INTEGER16", 16},
};
enum { TYPES = sizeof kTypes / sizeof kTypes[0], LEN = 5 };

static void describe(void) {
  for (int k = 0; k < TYPES; ++k) {
    const MPI_Datatype t = kTypes[k].type;
    CHECK(t != MPI_DATATYPE_NULL);
    for (int j = 0; j < k; ++j) CHECK(kTypes[j].type != t);
    int size;
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Type_size(t, &size);
    CHECK_EQ(size, kTypes[k].size);
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &true_lb, &true_extent);
    CHECK_EQ(lb, 0);
    CHECK_EQ(extent, size);
    CHECK_EQ(true_lb, 0);
    CHECK_EQ(true_extent, size);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(t, name, &len);
    CHECK(strcmp(name, kTypes[k].name) == 0);
    CHECK_EQ(len, (int)strlen(kTypes[k].name));
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    CHECK_EQ(combiner, MPI_COMBINER_NAMED);
    CHECK_EQ(ni + na + nd, 0);
  }
  /* A pair type holds two elements of its value's type. */
  MPI_Status st;
  MPI_Sendrecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &st);
  MPI_Status_set_elements(&st, MPI_2INTEGER, 6);
  int count;
  MPI_Get_count(&st, MPI_2INTEGER, &count);
  CHECK_EQ(count, 3);
  MPI_Get_elements(&st, MPI_INTEGER, &count);
  CHECK_EQ(count, 6);
}

/* LEN elements of each type to the right, from the left: the bytes come back exactly. */
static void ring(int rank, int size) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int k = 0; k < TYPES; ++k) {
    unsigned char out[LEN * 16], in[LEN * 16];
    const int n = LEN * kTypes[k].size;
    for (int i = 0; i < n; ++i) out[i] = (unsigned char)(rank * 31 + k * 7 + i), in[i] = 0;
    MPI_Status st;
    MPI_Sendrecv(out, LEN, kTypes[k].type, right, k, in, LEN, kTypes[k].type, left, k, MPI_COMM_WORLD, &st);
    int count;
    MPI_Get_count(&st, kTypes[k].type, &count);
    CHECK_EQ(count, LEN);
    for (int i = 0; i < n; ++i) CHECK_EQ(in[i], (unsigned char)(left * 31 + k * 7 + i));
  }
}

static int class_of(int code) {
  int k;
  MPI_Error_class(code, &k);
  return k;
}

static void reduce(int rank, int size) {
  /* SUM on MPI_INTEGER: 0 + 1 + ... + size-1, and size copies of 7 - rank's neighbour. */
  int32_t i[2] = {rank, 7}, isum[2];
  MPI_Allreduce(i, isum, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(isum[0], size * (size - 1) / 2);
  CHECK_EQ(isum[1], 7 * size);
  /* SUM on MPI_INTEGER16, past 64 bits: rank * 2^64 + 1 from each. */
  __extension__ typedef __int128 int128;
  int128 w = ((int128)rank << 64) + 1, wsum;
  MPI_Allreduce(&w, &wsum, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD);
  CHECK(wsum == ((int128)(size * (size - 1) / 2) << 64) + size);
  /* SUM on MPI_REAL: halves add exactly. */
  float r = 0.5f * (float)rank, rsum;
  MPI_Allreduce(&r, &rsum, 1, MPI_REAL, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rsum == 0.25f * (float)(size * (size - 1)));
  /* SUM on MPI_DOUBLE_COMPLEX: rank + 2i from each. */
  double complex z = (double)rank + 2.0 * I, zsum;
  MPI_Allreduce(&z, &zsum, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(creal(zsum) == (double)(size * (size - 1) / 2));
  CHECK(cimag(zsum) == 2.0 * size);
  /* LAND on MPI_LOGICAL: any nonzero is true; the result is 1 or 0. */
  int32_t l[3] = {rank == 0 ? 1 : rank + 5, rank == size - 1 ? 0 : -3, 0}, land[3];
  MPI_Allreduce(l, land, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD);
  CHECK_EQ(land[0], 1);
  CHECK_EQ(land[1], 0);
  CHECK_EQ(land[2], 0);
  int32_t lor[3];
  MPI_Allreduce(l, lor, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD);
  CHECK_EQ(lor[0], 1);
  CHECK_EQ(lor[1], size > 1 ? 1 : 0);
  CHECK_EQ(lor[2], 0);
  /* MINLOC on MPI_2INTEGER: (value, index) pairs of two INTEGERs. The least value is (rank - 2)^2,
   * at rank 2 (or the last rank); a tie on the value takes the smaller index. */
  const int least = size > 2 ? 2 : size - 1;
  int32_t p[4] = {(rank - 2) * (rank - 2), rank, 9, size - rank}, pmin[4];
  MPI_Allreduce(p, pmin, 2, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD);
  CHECK_EQ(pmin[0], (least - 2) * (least - 2));
  CHECK_EQ(pmin[1], least);
  CHECK_EQ(pmin[2], 9);
  CHECK_EQ(pmin[3], 1);
  /* MAXLOC on MPI_2DOUBLE_PRECISION: the index is a DOUBLE PRECISION too. */
  double d[2] = {(double)(rank % 3), (double)rank}, dmax[2];
  MPI_Allreduce(d, dmax, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD);
  CHECK(dmax[0] == (double)(size >= 3 ? 2 : size - 1));
  CHECK(dmax[1] == (double)(size >= 3 ? 2 : size - 1));

  /* Operations MPI-3.1 5.9.2 does not define on these types: refused on every rank alike. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int32_t x = 1, y;
  CHECK_EQ(class_of(MPI_Allreduce(&x, &y, 1, MPI_INTEGER, MPI_LAND, MPI_COMM_WORLD)), MPI_ERR_OP);
  CHECK_EQ(class_of(MPI_Allreduce(&x, &y, 1, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD)), MPI_ERR_OP);
  CHECK_EQ(class_of(MPI_Allreduce(&z, &zsum, 1, MPI_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD)), MPI_ERR_OP);
  char c = 'a', cr;
  CHECK_EQ(class_of(MPI_Allreduce(&c, &cr, 1, MPI_CHARACTER, MPI_MAX, MPI_COMM_WORLD)), MPI_ERR_OP);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Size and envelope of a parameterized type: the kind selected, and p and r given back. */
static void check_f90(MPI_Datatype t, int size, int combiner, int p, int r) {
  int got_size, ni, na, nd, got_combiner, ints[2] = {-1, -1};
  MPI_Aint aint;
  MPI_Datatype inner;
  MPI_Type_size(t, &got_size);
  CHECK_EQ(got_size, size);
  MPI_Type_get_envelope(t, &ni, &na, &nd, &got_combiner);
  CHECK_EQ(got_combiner, combiner);
  CHECK_EQ(ni, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2);
  CHECK_EQ(na + nd, 0);
  MPI_Type_get_contents(t, 2, 0, 0, ints, &aint, &inner);
  if (combiner == MPI_COMBINER_F90_INTEGER) {
    CHECK_EQ(ints[0], r);
  } else {
    CHECK_EQ(ints[0], p);
    CHECK_EQ(ints[1], r);
  }
}

static void parameterized(int rank, int size) {
  /* gfortran on x86-64: INTEGER(1, 2, 4, 8, 16) hold ranges 2, 4, 9, 18, 38; REAL(4) precision 6
   * and range 37, REAL(8) 15 and 307, REAL(10) 18 and 4931 (16 bytes of storage). */
  static const struct {
    int combiner, p, r, size;
  } kCases[] = {
      {MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, 2, 1},
      {MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, 3, 2},
      {MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, 9, 4},
      {MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, 10, 8},
      {MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, 38, 16},
      {MPI_COMBINER_F90_REAL, 6, MPI_UNDEFINED, 4},
      {MPI_COMBINER_F90_REAL, MPI_UNDEFINED, 37, 4},
      {MPI_COMBINER_F90_REAL, 7, 30, 8},
      {MPI_COMBINER_F90_REAL, 15, 307, 8},
      {MPI_COMBINER_F90_REAL, 6, 308, 16},
      {MPI_COMBINER_F90_COMPLEX, 6, 37, 8},
      {MPI_COMBINER_F90_COMPLEX, 15, MPI_UNDEFINED, 16},
      {MPI_COMBINER_F90_COMPLEX, 18, 4931, 32},
  };
  for (size_t k = 0; k < sizeof kCases / sizeof kCases[0]; ++k) {
    MPI_Datatype t, again;
    if (kCases[k].combiner == MPI_COMBINER_F90_INTEGER) {
      CHECK_EQ(MPI_Type_create_f90_integer(kCases[k].r, &t), MPI_SUCCESS);
      MPI_Type_create_f90_integer(kCases[k].r, &again);
    } else if (kCases[k].combiner == MPI_COMBINER_F90_REAL) {
      CHECK_EQ(MPI_Type_create_f90_real(kCases[k].p, kCases[k].r, &t), MPI_SUCCESS);
      MPI_Type_create_f90_real(kCases[k].p, kCases[k].r, &again);
    } else {
      CHECK_EQ(MPI_Type_create_f90_complex(kCases[k].p, kCases[k].r, &t), MPI_SUCCESS);
      MPI_Type_create_f90_complex(kCases[k].p, kCases[k].r, &again);
    }
    CHECK_EQ(again, t); /* the same (p, r): the same type */
    check_f90(t, kCases[k].size, kCases[k].combiner, kCases[k].p, kCases[k].r);
  }

  /* Predefined: usable without a commit, in a message around the ring and a predefined reduction. */
  MPI_Datatype r8, i8;
  MPI_Type_create_f90_real(15, 300, &r8);
  MPI_Type_create_f90_integer(15, &i8);
  double out[3] = {rank + 0.5, rank * 2.0, -rank}, in[3] = {0, 0, 0};
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Sendrecv(out, 3, r8, next, 7, in, 3, r8, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(in[0], prev + 0.5);
  CHECK_EQ(in[1], prev * 2.0);
  CHECK_EQ(in[2], -prev);
  int64_t mine = (int64_t)rank << 33, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, i8, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(sum, ((int64_t)size * (size - 1) / 2) << 33);

  /* No kind holds them; both left out; predefined, so not freed. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype none = MPI_DATATYPE_NULL;
  int code = MPI_Type_create_f90_integer(39, &none), cls = MPI_SUCCESS;
  MPI_Error_class(code, &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  code = MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &none);
  MPI_Error_class(code, &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  code = MPI_Type_create_f90_real(19, 37, &none); /* REAL(16): IEEE quad, no C type here */
  MPI_Error_class(code, &cls);
  CHECK_EQ(cls, MPI_ERR_ARG);
  MPI_Datatype kept = r8;
  code = MPI_Type_free(&kept);
  MPI_Error_class(code, &cls);
  CHECK_EQ(cls, MPI_ERR_TYPE);
  CHECK_EQ(kept, r8);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  describe();
  ring(rank, size);
  reduce(rank, size);
  parameterized(rank, size);
  return all_checks_passed("datatypes_fortran");
}
