/* Starting processes (MPI-3.1 10.3): the world spawns two copies of this program and then, with
 * MPI_Comm_spawn_multiple, two more from two commands; parents and children talk over the
 * intercommunicator (point-to-point, a broadcast, a merge and an allreduce over the merged group),
 * then disconnect. Also MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_Comm_get_parent before and after the
 * disconnect, and the errors: more processes than the machine has free, a program that does not
 * exist, and the VPs of the first processes taken again once they have ended. Run with at least four
 * VPs of the machine free beyond -np.
 *
 * Parents: no argument, or a failure to show: "spawn-noinit" spawns a child that returns without
 * calling MPI_Init (the parents wait in MPI_Comm_spawn: a deadlock), "spawn-status" one that exits
 * with status 3.
 * Children: "child WORLD_SIZE", "multi WORLD_SIZE APPNUM", "noinit" or "status". */
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Set by the parents before they spawn: a spawned process has globals of its own, at 0. */
static int parents_mark = 0;

static void talk(MPI_Comm inter, int parent_side) {
  int me, size, remote;
  MPI_Comm_rank(inter, &me);
  MPI_Comm_size(inter, &size);
  MPI_Comm_remote_size(inter, &remote);
  /* The parents' root sends each child its rank times ten; each answers with its rank plus 100. */
  if (parent_side && me == 0) {
    for (int c = 0; c < remote; ++c) {
      int v = 10 * c, back = -1;
      CHECK(MPI_Send(&v, 1, MPI_INT, c, 7, inter) == MPI_SUCCESS);
      CHECK(MPI_Recv(&back, 1, MPI_INT, c, 8, inter, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      CHECK(back == c + 100);
    }
  } else if (!parent_side) {
    int v = -1, back = me + 100;
    CHECK(MPI_Recv(&v, 1, MPI_INT, 0, 7, inter, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(v == 10 * me);
    CHECK(MPI_Send(&back, 1, MPI_INT, 0, 8, inter) == MPI_SUCCESS);
  }
  /* A broadcast from the parents' root to every child. */
  int word = parent_side ? 4242 : 0;
  CHECK(MPI_Bcast(&word, 1, MPI_INT, parent_side ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter) == MPI_SUCCESS);
  if (!parent_side) CHECK(word == 4242);
  /* Merged, parents first: the sum of every rank of the merged group. */
  MPI_Comm merged;
  CHECK(MPI_Intercomm_merge(inter, parent_side ? 0 : 1, &merged) == MPI_SUCCESS);
  int msize, mrank, sum = 0;
  MPI_Comm_size(merged, &msize);
  MPI_Comm_rank(merged, &mrank);
  CHECK(msize == size + remote);
  CHECK(mrank == (parent_side ? me : remote + me));
  CHECK(MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged) == MPI_SUCCESS);
  CHECK(sum == msize * (msize - 1) / 2);
  MPI_Comm_free(&merged);
}

/* The parents' root takes each child's last word; then the intercommunicator goes. */
static void farewell(MPI_Comm* inter) {
  int me, remote;
  MPI_Comm_rank(*inter, &me);
  MPI_Comm_remote_size(*inter, &remote);
  for (int c = 0; me == 0 && c < remote; ++c) {
    int who = -1;
    CHECK(MPI_Recv(&who, 1, MPI_INT, c, 9, *inter, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(who == c);
  }
  CHECK(MPI_Comm_free(inter) == MPI_SUCCESS);
}

static int child(int argc, char** argv, MPI_Comm parent) {
  CHECK(argc >= 3);
  CHECK(parents_mark == 0);
  int size, parents, *appnum, flag = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == atoi(argv[2]));
  MPI_Comm_remote_size(parent, &parents);
  CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag) == MPI_SUCCESS && flag);
  CHECK(*appnum == (strcmp(argv[1], "multi") == 0 ? atoi(argv[3]) : 0));
  talk(parent, 0);
  if (strcmp(argv[1], "child") == 0) {
    /* A last word to the parents' root, then the parent communicator goes: the process ends before
     * the word arrives, so the root knows that its VP is free once it has the word. */
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    CHECK(MPI_Send(&me, 1, MPI_INT, 0, 9, parent) == MPI_SUCCESS);
    CHECK(MPI_Comm_free(&parent) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Comm_disconnect(&parent) == MPI_SUCCESS);
  }
  CHECK(parent == MPI_COMM_NULL);
  MPI_Comm again;
  CHECK(MPI_Comm_get_parent(&again) == MPI_SUCCESS && again == MPI_COMM_NULL);
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  MPI_Comm parent = MPI_COMM_NULL;
  if (strcmp(mode, "noinit") == 0) return 0;
  MPI_Init(&argc, &argv);
  CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS);
  if (parent != MPI_COMM_NULL && strcmp(mode, "status") == 0) {
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 3;
  }
  if (parent != MPI_COMM_NULL) return child(argc, argv, parent);
  if (strcmp(mode, "spawn-noinit") == 0 || strcmp(mode, "spawn-status") == 0) {
    MPI_Comm inter;
    char* one[] = {(char*)mode + strlen("spawn-"), NULL};
    MPI_Comm_spawn(argv[0], one, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    MPI_Comm_disconnect(&inter);
    MPI_Finalize();
    return 0;
  }

  int me, size, *universe, flag = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag) == MPI_SUCCESS && flag);
  CHECK(*universe >= size + 4);
  parents_mark = 1;
  char size_text[16];
  snprintf(size_text, sizeof size_text, "%d", 2);

  /* Two copies of this program. */
  char* args[] = {"child", size_text, NULL};
  int codes[2] = {-1, -1};
  MPI_Comm inter;
  CHECK(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes) == MPI_SUCCESS);
  CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS);
  int remote;
  MPI_Comm_remote_size(inter, &remote);
  CHECK(remote == 2);
  talk(inter, 1);
  farewell(&inter);

  /* Two commands, one process each: MPI_APPNUM 0 and 1 in one world of two. */
  char* multi0[] = {"multi", size_text, "0", NULL};
  char* multi1[] = {"multi", size_text, "1", NULL};
  char* commands[] = {argv[0], argv[0]};
  char** argvs[] = {multi0, multi1};
  int maxprocs[] = {1, 1};
  MPI_Info infos[] = {MPI_INFO_NULL, MPI_INFO_NULL};
  CHECK(MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, infos, size - 1, MPI_COMM_WORLD, &inter,
                                MPI_ERRCODES_IGNORE) == MPI_SUCCESS);
  MPI_Comm_remote_size(inter, &remote);
  CHECK(remote == 2);
  talk(inter, 1);
  CHECK(MPI_Comm_disconnect(&inter) == MPI_SUCCESS);

  /* More processes than the machine has free, and a program that does not exist: MPI_ERR_SPAWN at
   * every member, each error code too at the root. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int many[64];
  int rc = MPI_Comm_spawn(argv[0], args, *universe, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, me == 0 ? many : NULL);
  int klass = -1;
  MPI_Error_class(rc, &klass);
  CHECK(klass == MPI_ERR_SPAWN);
  if (me == 0 && *universe <= 64)
    for (int i = 0; i < *universe; ++i) CHECK(many[i] == MPI_ERR_SPAWN);
  rc = MPI_Comm_spawn("./no-such-program", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                      MPI_ERRCODES_IGNORE);
  MPI_Error_class(rc, &klass);
  CHECK(klass == MPI_ERR_SPAWN);

  /* The VPs of the first two processes, which have ended (their last words came), are taken again,
   * with every VP never used: all but the two of MPI_Comm_spawn_multiple's processes. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  const int all = *universe - size - 2;
  snprintf(size_text, sizeof size_text, "%d", all);
  CHECK(MPI_Comm_spawn(argv[0], args, all, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE) ==
        MPI_SUCCESS);
  MPI_Comm_remote_size(inter, &remote);
  CHECK(remote == all);
  talk(inter, 1);
  farewell(&inter);

  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) printf("all checks passed\n");
  MPI_Finalize();
  return 0;
}
