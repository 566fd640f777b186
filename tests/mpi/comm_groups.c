/* Groups and intracommunicators: the group algebra of MPI-3.1 section 6.3, MPI_Comm_create_group,
 * MPI_Comm_idup, MPI_Comm_dup_with_info, MPI_Comm_split_type and communicator names. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void check_members(MPI_Group g, MPI_Group world, int n, const int* expected) {
  int size = -1;
  MPI_Group_size(g, &size);
  CHECK_EQ(size, n);
  for (int i = 0; i < n; ++i) {
    int w = -1;
    MPI_Group_translate_ranks(g, 1, &i, world, &w);
    CHECK_EQ(w, expected[i]);
  }
}

static void group_algebra(int rank, int size) {
  MPI_Group world, evens, odds, firsts, u, x, d, r;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int ev[64], od[64], ne = 0, no = 0;
  for (int i = 0; i < size; ++i) {
    if (i % 2 == 0) ev[ne++] = i;
    else od[no++] = i;
  }
  int even_range[1][3] = {{0, size - 1, 2}};
  MPI_Group_range_incl(world, 1, even_range, &evens);
  check_members(evens, world, ne, ev);
  MPI_Group_range_excl(world, 1, even_range, &odds);
  check_members(odds, world, no, od);
  /* A descending range and an empty one (first > last with a positive stride). */
  int down[2][3] = {{size - 1, size - 3, -1}, {2, 1, 1}};
  MPI_Group_range_incl(world, 2, down, &r);
  int expect_down[3] = {size - 1, size - 2, size - 3};
  check_members(r, world, 3, expect_down);
  MPI_Group_free(&r);

  int first3[3] = {0, 1, 2};
  MPI_Group_incl(world, 3, first3, &firsts);
  /* Union: the first group's members in order, then the second's not in it. */
  MPI_Group_union(odds, firsts, &u);
  int expect_u[64], nu = 0;
  for (int i = 0; i < no; ++i) expect_u[nu++] = od[i];
  expect_u[nu++] = 0;
  expect_u[nu++] = 2;
  check_members(u, world, nu, expect_u);
  MPI_Group_intersection(firsts, odds, &x);
  int expect_x[1] = {1};
  check_members(x, world, 1, expect_x);
  MPI_Group_difference(firsts, odds, &d);
  int expect_d[2] = {0, 2};
  check_members(d, world, 2, expect_d);

  int result = -1;
  MPI_Group_compare(world, world, &result);
  CHECK_EQ(result, MPI_IDENT);
  MPI_Group both, reversed;
  MPI_Group_union(evens, odds, &both);
  MPI_Group_compare(world, both, &result);
  CHECK_EQ(result, MPI_SIMILAR);
  int rev_range[1][3] = {{size - 1, 0, -1}};
  MPI_Group_range_incl(world, 1, rev_range, &reversed);
  MPI_Group_compare(world, reversed, &result);
  CHECK_EQ(result, MPI_SIMILAR);
  MPI_Group_compare(world, evens, &result);
  CHECK_EQ(result, MPI_UNEQUAL);
  MPI_Group empty;
  MPI_Group_difference(evens, evens, &empty);
  CHECK(empty == MPI_GROUP_EMPTY);

  /* Bad input: a rank named twice, a stride of zero. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int twice[2][3] = {{0, 1, 1}, {1, 1, 1}};
  CHECK_EQ(MPI_Group_range_incl(world, 2, twice, &r), MPI_ERR_RANK);
  int zero[1][3] = {{0, 1, 0}};
  CHECK_EQ(MPI_Group_range_excl(world, 1, zero, &r), MPI_ERR_ARG);
  /* Null output arguments, and calls that need an intercommunicator. */
  CHECK_EQ(MPI_Group_union(world, evens, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, NULL), MPI_ERR_ARG);
  int n = 0;
  CHECK_EQ(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
  MPI_Comm m;
  CHECK_EQ(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &m), MPI_ERR_COMM);
  CHECK_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &m), MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  (void)rank;
  MPI_Group_free(&both);
  MPI_Group_free(&reversed);
  MPI_Group_free(&u);
  MPI_Group_free(&x);
  MPI_Group_free(&d);
  MPI_Group_free(&firsts);
  MPI_Group_free(&evens);
  MPI_Group_free(&odds);
  MPI_Group_free(&world);
}

/* MPI_Comm_create_group over the odd ranks, called by them only; a ring on the new communicator. */
static void create_group(int rank, int size) {
  MPI_Group world, odds;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int range[1][3] = {{1, size - 1, 2}};
  MPI_Group_range_incl(world, 1, range, &odds);
  if (rank % 2 == 1) {
    MPI_Comm c;
    MPI_Comm_create_group(MPI_COMM_WORLD, odds, 5, &c);
    int r = -1, n = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    CHECK_EQ(r, rank / 2);
    CHECK_EQ(n, size / 2);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK_EQ(sum, (size / 2) * (size / 2));  /* 1 + 3 + ... */
    MPI_Comm_free(&c);
  }
  /* MPI_Comm_create_group and a pending MPI_Comm_idup in either order on different ranks. */
  MPI_Comm whole, twin;
  MPI_Request req;
  if (rank % 2 == 0) {
    MPI_Comm_create_group(MPI_COMM_WORLD, world, 1, &whole);
    MPI_Comm_idup(MPI_COMM_WORLD, &twin, &req);
  } else {
    MPI_Comm_idup(MPI_COMM_WORLD, &twin, &req);
    MPI_Comm_create_group(MPI_COMM_WORLD, world, 1, &whole);
  }
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  int total = 0;
  MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, whole);
  CHECK_EQ(total, size * (size - 1) / 2);
  MPI_Barrier(twin);
  MPI_Comm_free(&whole);
  MPI_Comm_free(&twin);
  MPI_Group_free(&odds);
  MPI_Group_free(&world);
}

static void dups(int rank, int size) {
  MPI_Comm c;
  MPI_Request req;
  MPI_Comm_idup(MPI_COMM_WORLD, &c, &req);
  int flag = 0;
  MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
  CHECK(flag);
  CHECK(req == MPI_REQUEST_NULL);
  int result = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, c, &result);
  CHECK_EQ(result, MPI_CONGRUENT);
  /* The duplicate is a communicator of its own: a message on it never matches one on the world. */
  int a = rank, b = -1, w = -1;
  MPI_Request rr[2];
  MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &rr[0]);
  MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 0, c, &rr[1]);
  MPI_Send(&a, 1, MPI_INT, (rank + 1) % size, 0, c);
  int neg = -rank;
  MPI_Send(&neg, 1, MPI_INT, (rank + 2) % size, 0, MPI_COMM_WORLD);
  MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
  CHECK_EQ(b, (rank + size - 1) % size);
  CHECK_EQ(w, -((rank + size - 2) % size));
  MPI_Comm c2;
  MPI_Comm_idup(c, &c2, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Comm_free(&c2);
  MPI_Comm_free(&c);

  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "touchstone_hint", "yes");
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
  MPI_Info_free(&info);
  MPI_Info used;
  MPI_Comm_get_info(c, &used);
  char value[MPI_MAX_INFO_VAL + 1];
  MPI_Info_get(used, "touchstone_hint", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag);
  CHECK(strcmp(value, "yes") == 0);
  MPI_Info_free(&used);
  /* MPI_Comm_dup keeps the hints. */
  MPI_Comm c3;
  MPI_Comm_dup(c, &c3);
  MPI_Comm_get_info(c3, &used);
  MPI_Info_get(used, "touchstone_hint", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag);
  MPI_Info_free(&used);
  MPI_Comm_free(&c3);
  /* MPI_Comm_idup_with_info (MPI-4.0) replaces them. */
  MPI_Info_create(&info);
  MPI_Info_set(info, "other", "1");
  MPI_Comm_idup_with_info(c, info, &c3, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Info_free(&info);
  MPI_Comm_get_info(c3, &used);
  MPI_Info_get(used, "touchstone_hint", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(!flag);
  MPI_Info_get(used, "other", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag);
  MPI_Info_free(&used);
  MPI_Comm_free(&c3);
  MPI_Comm_free(&c);
}

/* Every VP is a node of its own: MPI_COMM_TYPE_SHARED gives each rank a communicator of one. */
static void split_type(int rank) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = -1, r = -1;
  MPI_Comm_size(node, &n);
  MPI_Comm_rank(node, &r);
  CHECK_EQ(n, 1);
  CHECK_EQ(r, 0);
  MPI_Comm_free(&node);
  MPI_Comm none;
  MPI_Comm_split_type(MPI_COMM_WORLD, rank % 3 == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &none);
  CHECK((none == MPI_COMM_NULL) == (rank % 3 == 0));
  if (none != MPI_COMM_NULL) MPI_Comm_free(&none);
}

static void names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0);
  CHECK_EQ(len, 14);
  MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
  CHECK(strcmp(name, "MPI_COMM_SELF") == 0);
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_get_name(c, name, &len);
  CHECK_EQ(len, 0); /* names are not copied by MPI_Comm_dup */
  MPI_Comm_set_name(c, "halo exchange");
  MPI_Comm_get_name(c, name, &len);
  CHECK(strcmp(name, "halo exchange") == 0);
  CHECK_EQ(len, 13);
  char longname[300];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  MPI_Comm_set_name(c, longname);
  MPI_Comm_get_name(c, name, &len);
  CHECK_EQ(len, MPI_MAX_OBJECT_NAME - 1);
  MPI_Comm_set_name(MPI_COMM_WORLD, "everyone");
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  CHECK(strcmp(name, "everyone") == 0);
  MPI_Comm_free(&c);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 5);
  group_algebra(rank, size);
  create_group(rank, size);
  dups(rank, size);
  split_type(rank);
  names();
  MPI_Barrier(MPI_COMM_WORLD);
  return all_checks_passed("comm_groups");
}
