/* The C library state each rank owns (docs/mpi.md, "What each rank has of its own"): getopt,
 * rand, strtok and errno behave on every rank as in a process of its own, even when the ranks take
 * turns in the middle of using them (a barrier between two steps lets every other rank run).
 * Run as: rank_libc input -v -n 5 --name=abc -qw rest -- -x
 * (with MPI_Init called after the options are parsed, as many programs do, and once more with
 * barriers in the loop). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Parses this program's arguments with getopt_long; `sync` puts a barrier after every option so
 * that the other ranks parse theirs in between. */
static void parse(int argc, char** argv, int sync) {
  static const struct option longs[] = {{"name", required_argument, NULL, 'N'}, {NULL, 0, NULL, 0}};
  int verbose = 0, n = 0, q = 0, w = 0;
  const char* name = NULL;
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, "vn:qw", longs, NULL)) != -1;) {
    switch (c) {
      case 'v': ++verbose; break;
      case 'n': n = atoi(optarg); break;
      case 'N': name = optarg; break;
      case 'q': ++q; break;
      case 'w': ++w; break;
      default: CHECK(!"an option this test does not give");
    }
    if (sync) MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK_EQ(verbose, 1);
  CHECK_EQ(n, 5);
  CHECK(name && strcmp(name, "abc") == 0);
  CHECK_EQ(q, 1);
  CHECK_EQ(w, 1);
  /* GNU permutation: the non-options come last, in order, and optind names the first of them. */
  CHECK_EQ(argc - optind, 3);
  CHECK(strcmp(argv[optind], "input") == 0);
  CHECK(strcmp(argv[optind + 1], "rest") == 0);
  CHECK(strcmp(argv[optind + 2], "-x") == 0);
}

int main(int argc, char** argv) {
  char** copy = malloc(sizeof(char*) * (size_t)(argc + 1));
  memcpy(copy, argv, sizeof(char*) * (size_t)(argc + 1));
  parse(argc, argv, 0);  // before MPI_Init
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  parse(argc, copy, 1);  // interleaved with the other ranks' parses

  /* rand after srand(rank): glibc's own generator, per rank, as a process of its own would draw. */
  struct random_data ref;
  char ref_state[128];
  memset(&ref, 0, sizeof ref);
  initstate_r((unsigned)rank, ref_state, sizeof ref_state, &ref);
  srand((unsigned)rank);
  int mine[4];
  for (int i = 0; i < 4; ++i) {
    mine[i] = rand();
    int32_t want = 0;
    random_r(&ref, &want);
    CHECK_EQ(mine[i], want);
    MPI_Barrier(MPI_COMM_WORLD);  // the others draw in between
  }
  int first[2];
  MPI_Allreduce(&mine[0], &first[0], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine[0], &first[1], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(first[0] != first[1]);  // seeds 0 and 1 are one stream in glibc, but 2.. differ

  /* strtok interleaved across ranks. */
  char text[64];
  snprintf(text, sizeof text, "r%d,alpha;beta,%d", rank, rank * 7);
  char want_first[16], want_last[16];
  snprintf(want_first, sizeof want_first, "r%d", rank);
  snprintf(want_last, sizeof want_last, "%d", rank * 7);
  const char* tok = strtok(text, ",;");
  CHECK(tok && strcmp(tok, want_first) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  tok = strtok(NULL, ",;");
  CHECK(tok && strcmp(tok, "alpha") == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  tok = strtok(NULL, ",;");
  CHECK(tok && strcmp(tok, "beta") == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  tok = strtok(NULL, ",;");
  CHECK(tok && strcmp(tok, want_last) == 0);
  CHECK(strtok(NULL, ",;") == NULL);

  /* errno across a blocking call: the ring's receives block while the other ranks run. */
  errno = 1000 + rank;
  int token = rank, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(errno, 1000 + rank);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(errno, 1000 + rank);
  CHECK_EQ(got, (rank + size - 1) % size);

  free(copy);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("rank_libc: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
