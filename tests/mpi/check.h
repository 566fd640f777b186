/* Assertions for the MPI semantics tests: a failed check names the rank and the line and aborts
 * the run with exit status 3 (MPI_Abort), so the test fails. */
#ifndef TOUCHSTONE_TEST_MPI_CHECK_H
#define TOUCHSTONE_TEST_MPI_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* The source file's name without its directory, so that a report (and docs/debugging.md, which
 * shows one) does not depend on where the project was checked out. */
static inline const char* check_file_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The rank a failed check names and how it ends the run: MPI_COMM_WORLD's rank and MPI_Abort. A
 * program that runs without MPI_Init defines both before including this header. */
#ifndef CHECK_RANK
static inline int check_world_rank(void) {
  int r = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
#define CHECK_RANK() check_world_rank()
#define CHECK_STOP() MPI_Abort(MPI_COMM_WORLD, 3)
#endif

#define CHECK(cond)                                                                                              \
  do {                                                                                                           \
    if (!(cond)) {                                                                                               \
      fprintf(stderr, "rank %d: check failed at %s:%d: %s\n", CHECK_RANK(), check_file_name(__FILE__), __LINE__, \
              #cond);                                                                                            \
      CHECK_STOP();                                                                                              \
    }                                                                                                            \
  } while (0)

#define CHECK_EQ(a, b)                                                                           \
  do {                                                                                           \
    long long a_ = (long long)(a), b_ = (long long)(b);                                          \
    if (a_ != b_) {                                                                              \
      fprintf(stderr, "rank %d: check failed at %s:%d: %s == %s (%lld != %lld)\n", CHECK_RANK(), \
              check_file_name(__FILE__), __LINE__, #a, #b, a_, b_);                              \
      CHECK_STOP();                                                                              \
    }                                                                                            \
  } while (0)

/* MPI_Init, then this process's rank in MPI_COMM_WORLD and its size: every test starts so. */
static inline void init_world(int* argc, char*** argv, int* rank, int* size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* This process's rank in comm and comm's size. */
static inline void rank_and_size(MPI_Comm comm, int* rank, int* size) {
  MPI_Comm_rank(comm, rank);
  MPI_Comm_size(comm, size);
}

/* The end of a test program: rank 0 of MPI_COMM_WORLD says that all checks passed (the line the
 * test looks for, beside exit status 0), then MPI_Finalize. Returns main's exit status. */
static inline int all_checks_passed(const char* program) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) printf("%s: all checks passed on %d ranks\n", program, size);
  MPI_Finalize();
  return 0;
}

/* Rank 0 of MPI_COMM_WORLD prints "makespan_us T": the longest `seconds` (of MPI_Wtime, virtual
 * time) of any rank. */
static inline void print_makespan(double seconds) {
  int rank;
  double longest = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Reduce(&seconds, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("makespan_us %.6f\n", longest * 1e6);
}

#endif
