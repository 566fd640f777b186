/* Packing: MPI_Pack/MPI_Unpack round trips of derived types in one buffer, MPI_PACKED messages
 * received as typed data and typed messages received as MPI_PACKED, and the big-endian
 * "external32" representation byte by byte. Needs at least 2 ranks. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct Item {
  short s;
  double d[2];
  char tag;
};

static MPI_Datatype item_type(void) {
  const int bl[] = {1, 2, 1};
  const MPI_Aint disp[] = {0, 8, 24};
  const MPI_Datatype types[] = {MPI_SHORT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype t;
  MPI_Type_create_struct(3, bl, disp, types, &t);
  MPI_Type_commit(&t);
  return t;
}

/* Three items and every other int of ten, packed one after the other and unpacked back. */
static void round_trip(void) {
  MPI_Datatype item = item_type(), every_other;
  MPI_Type_vector(5, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int sz_item = 0, sz_ints = 0;
  MPI_Pack_size(3, item, MPI_COMM_WORLD, &sz_item);
  MPI_Pack_size(1, every_other, MPI_COMM_WORLD, &sz_ints);
  CHECK_EQ(sz_item, 3 * (2 + 16 + 1));
  CHECK_EQ(sz_ints, 5 * (int)sizeof(int));
  struct Item in[3] = {{1, {1.5, 2.5}, 'a'}, {-2, {3.5, 4.5}, 'b'}, {3, {5.5, 6.5}, 'c'}}, out[3];
  int ints[10], back[10];
  for (int i = 0; i < 10; ++i) ints[i] = i * i, back[i] = -1;
  char buf[128];
  int pos = 0;
  MPI_Pack(in, 3, item, buf, sizeof buf, &pos, MPI_COMM_WORLD);
  CHECK_EQ(pos, sz_item);
  MPI_Pack(ints, 1, every_other, buf, sizeof buf, &pos, MPI_COMM_WORLD);
  CHECK_EQ(pos, sz_item + sz_ints);
  /* The packed form is the data in type-map order: item 1's short, then its doubles. */
  short s1;
  memcpy(&s1, buf + 19, sizeof s1);
  CHECK_EQ(s1, -2);
  int third;
  memcpy(&third, buf + sz_item + 2 * sizeof(int), sizeof third);
  CHECK_EQ(third, 16);
  memset(out, 0, sizeof out);
  int at = 0;
  MPI_Unpack(buf, pos, &at, out, 3, item, MPI_COMM_WORLD);
  MPI_Unpack(buf, pos, &at, back, 1, every_other, MPI_COMM_WORLD);
  CHECK_EQ(at, pos);
  for (int k = 0; k < 3; ++k)
    CHECK(out[k].s == in[k].s && out[k].d[0] == in[k].d[0] && out[k].d[1] == in[k].d[1] && out[k].tag == in[k].tag);
  for (int i = 0; i < 10; ++i) CHECK_EQ(back[i], i % 2 ? -1 : i * i);

  /* Not enough room: MPI_ERR_TRUNCATE, returned under MPI_ERRORS_RETURN. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  pos = 0;
  CHECK_EQ(MPI_Pack(in, 3, item, buf, 20, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  at = 0;
  CHECK_EQ(MPI_Unpack(buf, 10, &at, out, 1, item, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Type_free(&item);
  MPI_Type_free(&every_other);
}

/* Rank 0 packs items and sends them as MPI_PACKED; rank 1 receives them as items. Then rank 1
 * sends items typed and rank 0 receives MPI_PACKED and unpacks them. */
static void packed_messages(int rank) {
  MPI_Datatype item = item_type();
  struct Item a[2] = {{7, {0.25, 0.5}, 'p'}, {8, {0.75, 1.0}, 'q'}}, b[2];
  char buf[64];
  if (rank == 0) {
    int pos = 0;
    MPI_Pack(a, 2, item, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Send(buf, pos, MPI_PACKED, 1, 1, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Recv(buf, sizeof buf, MPI_PACKED, 1, 2, MPI_COMM_WORLD, &st);
    int n = -1;
    MPI_Get_count(&st, MPI_PACKED, &n);
    CHECK_EQ(n, 38);
    int at = 0;
    memset(b, 0, sizeof b);
    MPI_Unpack(buf, n, &at, b, 2, item, MPI_COMM_WORLD);
    CHECK(b[0].s == 17 && b[1].d[1] == 2.0 && b[1].tag == 'Q');
  } else if (rank == 1) {
    memset(b, 0, sizeof b);
    MPI_Recv(b, 2, item, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(b[0].s == 7 && b[0].d[0] == 0.25 && b[1].d[1] == 1.0 && b[1].tag == 'q');
    b[0].s = 17, b[1].d[1] = 2.0, b[1].tag = 'Q';
    MPI_Send(b, 2, item, 0, 2, MPI_COMM_WORLD);
  }
  MPI_Type_free(&item);
}

/* external32: big-endian, fixed sizes (a long is 4 bytes), pair types as their members. */
static void external32(void) {
  const int ints[2] = {0x01020304, -2};
  unsigned char buf[64];
  MPI_Aint pos = 0, size = 0;
  MPI_Pack_external_size("external32", 2, MPI_INT, &size);
  CHECK_EQ(size, 8);
  MPI_Pack_external("external32", ints, 2, MPI_INT, buf, sizeof buf, &pos);
  CHECK_EQ(pos, 8);
  const unsigned char want[8] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
  CHECK(memcmp(buf, want, 8) == 0);

  const long l = -5;
  const double d = 1.0;
  pos = 0;
  MPI_Pack_external("external32", &l, 1, MPI_LONG, buf, sizeof buf, &pos);
  MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos);
  CHECK_EQ(pos, 12);
  const unsigned char want_l[4] = {0xff, 0xff, 0xff, 0xfb}, want_d[8] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
  CHECK(memcmp(buf, want_l, 4) == 0 && memcmp(buf + 4, want_d, 8) == 0);
  long l2 = 0;
  double d2 = 0;
  MPI_Aint at = 0;
  MPI_Unpack_external("external32", buf, pos, &at, &l2, 1, MPI_LONG);
  CHECK_EQ(l2, -5);
  MPI_Unpack_external("external32", buf, pos, &at, &d2, 1, MPI_DOUBLE);
  CHECK(d2 == 1.0);

  /* long double: IEEE binary128, 1.0 = 0x3fff then zeros; round trip of 1/3 keeps all 64 bits. */
  long double x[2] = {1.0L, 1.0L / 3}, y[2] = {0, 0};
  pos = 0;
  MPI_Pack_external("external32", x, 2, MPI_LONG_DOUBLE, buf, sizeof buf, &pos);
  CHECK_EQ(pos, 32);
  CHECK(buf[0] == 0x3f && buf[1] == 0xff && buf[2] == 0 && buf[15] == 0);
  at = 0;
  MPI_Unpack_external("external32", buf, pos, &at, y, 2, MPI_LONG_DOUBLE);
  CHECK(y[0] == x[0] && y[1] == x[1]);

  /* A struct with a pair type inside: {double, int} then a short, 8 + 4 + 2 bytes. */
  MPI_Datatype t;
  const int bl[] = {1, 1};
  const MPI_Aint disp[] = {0, 16};
  const MPI_Datatype types[] = {MPI_DOUBLE_INT, MPI_SHORT};
  MPI_Type_create_struct(2, bl, disp, types, &t);
  MPI_Type_commit(&t);
  MPI_Pack_external_size("external32", 3, t, &size);
  CHECK_EQ(size, 3 * 14);
  struct {
    struct {
      double v;
      int i;
    } p;
    short s;
  } e = {{-0.5, 258}, 3}, f = {{0, 0}, 0};
  pos = 0;
  MPI_Pack_external("external32", &e, 1, t, buf, sizeof buf, &pos);
  CHECK(buf[0] == 0xbf && buf[1] == 0xe0 && buf[10] == 1 && buf[11] == 2 && buf[12] == 0 && buf[13] == 3);
  at = 0;
  MPI_Unpack_external("external32", buf, pos, &at, &f, 1, t);
  CHECK(f.p.v == -0.5 && f.p.i == 258 && f.s == 3);
  MPI_Type_free(&t);

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Pack_external_size("native", 1, MPI_INT, &size), MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 2);
  round_trip();
  packed_messages(rank);
  external32();
  MPI_Barrier(MPI_COMM_WORLD);
  return all_checks_passed("datatypes_pack");
}
