// What a page of a fiber stack costs on this host (docs/performance.md, "Fiber stacks"): N stacks'
// top pages, SPACING_KB apart as in a run's stack region, first written either after
// madvise(MADV_POPULATE_WRITE) made them resident or straight away (each write then traps into the
// kernel), on THREADS threads that each take a contiguous range of the stacks; then read again in
// order four times on one thread, as fiber switches visit their stacks. Prints the seconds of the
// populate and of the first writes, and the nanoseconds of a later read. A virtual machine's costs
// per page can differ several times from one run to the next; run it a few times.
//
//   cc -O2 -pthread bench/page_costs.c -o page_costs
//   ./page_costs [THREADS=1] [POPULATE=1] [N=65536] [SPACING_KB=1024]
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it and every write traps
#endif

enum { kPage = 4096, kMaxThreads = 64, kPasses = 4 };

static char* region;
static size_t slot;  // bytes from one stack's top to the next

struct range {
  size_t first, last;
  int populate;
};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void* populate_tops(void* arg) {
  const struct range* r = arg;
  for (size_t i = r->first; i < r->last; ++i)
    if (madvise(region + (i + 1) * slot - kPage, kPage, MADV_POPULATE_WRITE) != 0) break;
  return NULL;
}

static void* write_tops(void* arg) {
  const struct range* r = arg;
  for (size_t i = r->first; i < r->last; ++i) region[(i + 1) * slot - 64] = 1;
  return NULL;
}

static double on_threads(int threads, size_t n, void* (*fn)(void*)) {
  pthread_t t[kMaxThreads];
  struct range r[kMaxThreads];
  const double start = now();
  for (int k = 0; k < threads; ++k) {
    r[k] = (struct range){n * (size_t)k / (size_t)threads, n * (size_t)(k + 1) / (size_t)threads, 0};
    if (pthread_create(&t[k], NULL, fn, &r[k]) != 0) {
      perror("pthread_create");
      exit(1);
    }
  }
  for (int k = 0; k < threads; ++k) pthread_join(t[k], NULL);
  return now() - start;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  const int populate = argc > 2 ? atoi(argv[2]) : 1;
  const size_t n = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 65536;
  const size_t spacing_kb = argc > 4 ? (size_t)strtoull(argv[4], NULL, 10) : 1024;
  if (threads < 1 || threads > kMaxThreads || n == 0 || spacing_kb < 4 || spacing_kb % 4 != 0) {
    fprintf(stderr, "usage: page_costs [THREADS 1..%d] [POPULATE 0|1] [N > 0] [SPACING_KB, a multiple of 4]\n",
            kMaxThreads);
    return 2;
  }
  slot = spacing_kb * 1024;
  region = mmap(NULL, n * slot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  const double populated = populate ? on_threads(threads, n, populate_tops) : 0.0;
  const double written = on_threads(threads, n, write_tops);
  volatile long sum = 0;
  const double start = now();
  for (int pass = 0; pass < kPasses; ++pass)
    for (size_t i = 0; i < n; ++i) sum += region[(i + 1) * slot - 64];
  const double read = (now() - start) / (double)(kPasses * n);
  printf("%zu pages %zu KiB apart, %d thread(s): populate %.3f s, first writes %.3f s (%.1f us per page in all); "
         "later reads %.0f ns each\n",
         n, spacing_kb, threads, populated, written, (populated + written) * 1e6 / (double)n, read * 1e9);
  return 0;
}
