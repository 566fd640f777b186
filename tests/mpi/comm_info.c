/* MPI_Info (MPI-3.1 section 9): keys in the order first set, values replaced in place, lengths,
 * truncation, deletion, duplication, the error classes, MPI_INFO_ENV, and a communicator's hints
 * through MPI_Comm_set_info / MPI_Comm_get_info. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  /* MPI-4.0 lets info objects be used before MPI_Init. */
  MPI_Info early;
  MPI_Info_create(&early);
  MPI_Info_set(early, "before", "init");
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  {
    char v[8];
    int f = 0;
    MPI_Info_get(early, "before", 7, v, &f);
    CHECK(f && strcmp(v, "init") == 0);
    MPI_Info_free(&early);
  }
  MPI_Info info;
  MPI_Info_create(&info);
  int n = -1, flag = -1, len = -1;
  MPI_Info_get_nkeys(info, &n);
  CHECK_EQ(n, 0);
  MPI_Info_set(info, "color", "red");
  MPI_Info_set(info, "shape", "round");
  MPI_Info_set(info, "color", "blue"); /* a key set again keeps its place */
  MPI_Info_get_nkeys(info, &n);
  CHECK_EQ(n, 2);
  char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
  MPI_Info_get_nthkey(info, 0, key);
  CHECK(strcmp(key, "color") == 0);
  MPI_Info_get_nthkey(info, 1, key);
  CHECK(strcmp(key, "shape") == 0);
  MPI_Info_get(info, "color", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag && strcmp(value, "blue") == 0);
  MPI_Info_get_valuelen(info, "shape", &len, &flag);
  CHECK(flag);
  CHECK_EQ(len, 5);
  MPI_Info_get(info, "shape", 3, value, &flag); /* truncated to 3 characters */
  CHECK(flag && strcmp(value, "rou") == 0);
  MPI_Info_get(info, "size", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(!flag);

  MPI_Info copy;
  MPI_Info_dup(info, &copy);
  MPI_Info_delete(info, "color");
  MPI_Info_get_nkeys(info, &n);
  CHECK_EQ(n, 1);
  MPI_Info_get_nkeys(copy, &n);
  CHECK_EQ(n, 2);
  MPI_Info_get(copy, "color", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag && strcmp(value, "blue") == 0);

  /* The error classes. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_EQ(MPI_Info_delete(info, "color"), MPI_ERR_INFO_NOKEY);
  CHECK_EQ(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
  char longkey[MPI_MAX_INFO_KEY + 2];
  memset(longkey, 'k', sizeof longkey - 1);
  longkey[sizeof longkey - 1] = '\0';
  CHECK_EQ(MPI_Info_set(info, longkey, "x"), MPI_ERR_INFO_KEY);
  CHECK_EQ(MPI_Info_set(info, "k", ""), MPI_ERR_INFO_VALUE);
  CHECK_EQ(MPI_Info_get_nthkey(info, 1, key), MPI_ERR_ARG);
  CHECK_EQ(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);
  MPI_Info bad = 12345;
  CHECK_EQ(MPI_Info_get_nkeys(bad, &n), MPI_ERR_INFO);
  int one = 1;
  CHECK_EQ(MPI_Info_get_nkeys(MPI_INFO_NULL, &one), MPI_ERR_INFO);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

  /* MPI_Info_get_string (MPI-4.0): the length with the null, and a value cut to the room given. */
  int buflen = 0;
  MPI_Info_get_string(copy, "shape", &buflen, NULL, &flag);
  CHECK(flag);
  CHECK_EQ(buflen, 6);
  buflen = 4;
  MPI_Info_get_string(copy, "shape", &buflen, value, &flag);
  CHECK(strcmp(value, "rou") == 0);
  CHECK_EQ(buflen, 6);

  /* MPI_INFO_ENV: what mpirun started the program with. */
  MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag);
  CHECK_EQ(atoi(value), size);

  /* Communicator hints: kept as given, merged by key, copied by MPI_Comm_dup. */
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_info(c, copy);
  MPI_Info_set(info, "shape", "square");
  MPI_Comm_set_info(c, info);
  MPI_Info used;
  MPI_Comm_get_info(c, &used);
  MPI_Info_get_nkeys(used, &n);
  CHECK_EQ(n, 2);
  MPI_Info_get(used, "shape", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag && strcmp(value, "square") == 0);
  MPI_Info_free(&used);
  CHECK(used == MPI_INFO_NULL);
  MPI_Info_free(&info);
  MPI_Info_free(&copy);
  MPI_Comm_free(&c);

  /* MPI_Alloc_mem takes an info handle. */
  void* mem = NULL;
  MPI_Alloc_mem(64, MPI_INFO_NULL, &mem);
  CHECK(mem != NULL);
  MPI_Free_mem(mem);

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("comm_info: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
