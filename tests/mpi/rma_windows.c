/* Windows (MPI-3.1 11.2) and active-target general synchronization (11.5.2): the predefined
 * attributes and user attributes, names, groups, info, error handlers, dynamic windows with
 * attach/detach, shared windows, post/start/complete/wait and test, and the synchronization
 * errors (MPI_ERR_RMA_SYNC) raised through the window's error handler. */
#include <stdlib.h>

#include "check.h"

static int deleted = 0;
static int count_delete(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win, (void)keyval, (void)extra;
  deleted += *(int*)value;
  return MPI_SUCCESS;
}

static int handler_calls = 0, handler_code = 0;
static void on_error(MPI_Win* win, int* code, ...) {
  (void)win;
  ++handler_calls;
  handler_code = *code;
}

static void attributes_and_names(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int buf[5];
  MPI_Win win;
  MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  void* base = NULL;
  MPI_Aint* size = NULL;
  int *unit = NULL, *flavor = NULL, *model = NULL, flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  CHECK(flag && base == buf);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag);
  CHECK(flag && *size == (MPI_Aint)sizeof buf);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
  CHECK(flag && *unit == (int)sizeof(int));
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
  CHECK(flag && *model == MPI_WIN_UNIFIED);
  /* A user attribute, deleted (its callback run) when the window is freed. */
  int key;
  static int value = 3;
  MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL);
  MPI_Win_set_attr(win, key, &value);
  int* got = NULL;
  MPI_Win_get_attr(win, key, &got, &flag);
  CHECK(flag && got == &value);
  /* Deleted explicitly, then set again. */
  CHECK_EQ(MPI_Win_delete_attr(win, key), MPI_SUCCESS);
  CHECK_EQ(deleted, 3);
  MPI_Win_get_attr(win, key, &got, &flag);
  CHECK(!flag);
  deleted = 0;
  MPI_Win_set_attr(win, key, &value);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Win_set_attr(win, MPI_WIN_BASE, &value), MPI_ERR_KEYVAL);
  CHECK_EQ(MPI_Win_delete_attr(win, MPI_WIN_SIZE), MPI_ERR_KEYVAL);
  /* Names, group, info. */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Win_get_name(win, name, &len);
  CHECK_EQ(len, 0);
  MPI_Win_set_name(win, "halo");
  MPI_Win_get_name(win, name, &len);
  CHECK(len == 4 && strcmp(name, "halo") == 0);
  MPI_Group g, world;
  MPI_Win_get_group(win, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int cmp = -1;
  MPI_Group_compare(g, world, &cmp);
  CHECK_EQ(cmp, MPI_IDENT);
  MPI_Group_free(&g);
  MPI_Group_free(&world);
  MPI_Info info, used;
  MPI_Info_create(&info);
  MPI_Info_set(info, "no_locks", "true");
  MPI_Win_set_info(win, info);
  MPI_Win_get_info(win, &used);
  char v[16];
  MPI_Info_get(used, "no_locks", sizeof v - 1, v, &flag);
  CHECK(flag && strcmp(v, "true") == 0);
  MPI_Info_free(&info);
  MPI_Info_free(&used);
  MPI_Win_free(&win);
  CHECK_EQ(deleted, 3);
  MPI_Win_free_keyval(&key);
}

static void error_handling(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int buf[2] = {0, 0};
  MPI_Win win;
  MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Errhandler eh, got;
  MPI_Win_create_errhandler(on_error, &eh);
  MPI_Win_set_errhandler(win, eh);
  MPI_Win_get_errhandler(win, &got);
  CHECK_EQ(got, eh);
  const int one = 1;
  /* An operation outside any epoch, an unlock without a lock, a complete without a start. */
  CHECK_EQ(MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  CHECK_EQ(handler_calls, 1);
  CHECK_EQ(handler_code, MPI_ERR_RMA_SYNC);
  CHECK_EQ(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
  CHECK_EQ(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
  CHECK_EQ(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
  CHECK_EQ(MPI_Win_lock(99, 0, 0, win), MPI_ERR_LOCKTYPE);
  CHECK_EQ(MPI_Win_fence(12345, win), MPI_ERR_ASSERT);
  CHECK_EQ(handler_calls, 6);
  MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
  CHECK_EQ(handler_calls, 7);
  CHECK_EQ(handler_code, MPI_ERR_OTHER);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  /* Outside the window: MPI_ERR_RMA_RANGE; a bad rank: MPI_ERR_RANK. */
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  CHECK_EQ(MPI_Put(&one, 1, MPI_INT, 0, 2, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
  CHECK_EQ(MPI_Put(&one, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
  CHECK_EQ(MPI_Put(&one, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win), MPI_SUCCESS);
  CHECK_EQ(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
  /* A NULL origin, compare or result buffer with data: MPI_ERR_BUFFER before anything is posted. */
  int result = 0;
  CHECK_EQ(MPI_Get(NULL, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Get_accumulate(&one, 1, MPI_INT, NULL, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Fetch_and_op(&one, NULL, MPI_INT, 0, 0, MPI_SUM, win), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Compare_and_swap(&one, NULL, &result, MPI_INT, 0, 0, win), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Compare_and_swap(&one, &one, NULL, MPI_INT, 0, 0, win), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Win_flush(0, win), MPI_SUCCESS);
  CHECK_EQ(result, 0);
  CHECK_EQ(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
  MPI_Win_unlock(0, win);
  /* Errors of window creation go to the communicator's handler. */
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Win other;
  CHECK_EQ(MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_SELF, &other), MPI_ERR_SIZE);
  CHECK_EQ(MPI_Win_create(buf, 8, 0, MPI_INFO_NULL, MPI_COMM_SELF, &other), MPI_ERR_DISP);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  MPI_Win_free(&win);
  MPI_Win bad = 12345;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Win_fence(0, bad), MPI_ERR_WIN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* A dynamic window: each rank attaches a buffer and publishes its address; the left neighbour
 * puts into it under a lock. Memory outside the attached region is MPI_ERR_RMA_RANGE. */
static void dynamic(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int* flavor = NULL;
  int flag = 0;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC);
  int mine[4] = {0, 0, 0, 0};
  MPI_Win_attach(win, mine, sizeof mine);
  MPI_Aint addr, *addrs = malloc((size_t)size * sizeof(MPI_Aint));
  MPI_Get_address(mine, &addr);
  MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  const int right = (rank + 1) % size, v[2] = {rank, rank * 2};
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  MPI_Put(v, 2, MPI_INT, right, addrs[right] + (MPI_Aint)sizeof(int), 2, MPI_INT, win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Put(v, 2, MPI_INT, right, addrs[right] + 3 * (MPI_Aint)sizeof(int), 2, MPI_INT, win),
           MPI_ERR_RMA_RANGE);
  MPI_Win_unlock(right, win);
  MPI_Barrier(MPI_COMM_WORLD);
  const int left = (rank + size - 1) % size;
  CHECK(mine[0] == 0 && mine[1] == left && mine[2] == 2 * left && mine[3] == 0);
  CHECK_EQ(MPI_Win_detach(win, mine + 1), MPI_ERR_RMA_ATTACH);
  CHECK_EQ(MPI_Win_detach(win, mine), MPI_SUCCESS);
  free(addrs);
  MPI_Win_free(&win);
}

/* A shared window on each rank's node communicator (one rank per node): its memory is the
 * rank's own; on the world communicator (several nodes) it is MPI_ERR_RMA_SHARED. */
static void shared(void) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  double* mem;
  MPI_Win win;
  CHECK_EQ(MPI_Win_allocate_shared(4 * sizeof(double), sizeof(double), MPI_INFO_NULL, node, &mem, &win),
           MPI_SUCCESS);
  MPI_Aint size;
  int unit;
  double* base;
  MPI_Win_shared_query(win, 0, &size, &unit, &base);
  CHECK(base == mem && size == 4 * (MPI_Aint)sizeof(double) && unit == (int)sizeof(double));
  MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &base);
  CHECK(base == mem);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  int size_world;
  MPI_Comm_size(MPI_COMM_WORLD, &size_world);
  if (size_world > 1) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win), MPI_ERR_RMA_SHARED);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
}

/* Post/start/complete/wait: even ranks expose their windows to the odd ranks, which put their
 * rank into slot (origin / 2) of every even rank; MPI_Win_test polls for the end. */
static void pscw(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int* mem;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  for (int i = 0; i < size; ++i) mem[i] = -1;
  MPI_Group world, evens, odds;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int range_even[1][3] = {{0, size - 1, 2}}, range_odd[1][3] = {{1, size - 1, 2}};
  MPI_Group_range_incl(world, 1, range_even, &evens);
  if (size > 1) MPI_Group_range_incl(world, 1, range_odd, &odds);
  else odds = MPI_GROUP_EMPTY;
  for (int round = 0; round < 2; ++round) {
    if (rank % 2 == 0) {
      MPI_Win_post(odds, 0, win);
      if (round == 0) {
        MPI_Win_wait(win);
      } else {
        int flag = 0;
        while (!flag) MPI_Win_test(win, &flag);
      }
      for (int o = 1; o < size; o += 2) CHECK_EQ(mem[o / 2], o + round);
    } else {
      MPI_Win_start(evens, 0, win);
      const int v = rank + round;
      for (int t = 0; t < size; t += 2) MPI_Put(&v, 1, MPI_INT, t, rank / 2, 1, MPI_INT, win);
      int back = -1;
      MPI_Get(&back, 1, MPI_INT, 0, size - 1, 1, MPI_INT, win);
      MPI_Win_complete(win);
      CHECK_EQ(back, -1);
    }
  }
  MPI_Group_free(&evens);
  if (odds != MPI_GROUP_EMPTY) MPI_Group_free(&odds);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  attributes_and_names();
  error_handling();
  dynamic();
  shared();
  pscw();
  MPI_Finalize();
  if (rank == 0) printf("all checks passed\n");
  return 0;
}
