/* The module's own getopt_long and getopt_long_only (mpi/rank/rank_libc.c) against glibc's, on the
 * same argument lists and option strings: every return value, optarg, optind, optopt, long index
 * and the permuted argv must be the same, call after call (the two keep their state alike from
 * one list to the next, optopt included). Exit status: the number of lists that differ. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int rank_optind, rank_opterr, rank_optopt;
extern char* rank_optarg;
int rank_getopt_long(int, char* const*, const char*, const struct option*, int*);
int rank_getopt_long_only(int, char* const*, const char*, const struct option*, int*);
void touchstone_mpi_exit(int status) { exit(status); }  /* what the archive's exit calls */

static const struct option kLongs[] = {{"name", required_argument, NULL, 'N'},
                                       {"verbose", no_argument, NULL, 'v'},
                                       {"opt", optional_argument, NULL, 'o'},
                                       {"nameless", no_argument, NULL, 'L'},
                                       {"flag", no_argument, NULL, 0},
                                       {NULL, 0, NULL, 0}};

/* Parses `in` to the end with one implementation and writes every step and the final argv. */
static void parse(int rank, int long_only, const char* optstring, int argc, const char* const* in, char* out,
                  size_t n) {
  char* argv[16];
  for (int i = 0; i < argc; ++i) argv[i] = strdup(in[i]);
  argv[argc] = NULL;
  size_t len = 0;
  if (rank) rank_optind = 0;
  else optind = 0;
  for (;;) {
    int index = -1;
    const int c = rank ? (long_only ? rank_getopt_long_only : rank_getopt_long)(argc, argv, optstring, kLongs, &index)
                       : (long_only ? getopt_long_only : getopt_long)(argc, argv, optstring, kLongs, &index);
    const char* arg = rank ? rank_optarg : optarg;
    len += (size_t)snprintf(out + len, n - len, "[%d %s %d %d %d]", c, arg ? arg : "-", rank ? rank_optind : optind,
                            rank ? rank_optopt : optopt, index);
    if (c == -1) break;
  }
  for (int i = 0; i < argc; ++i) len += (size_t)snprintf(out + len, n - len, " %s", argv[i]), free(argv[i]);
}

int main(void) {
  static const char* const lists[][10] = {
      {"p", "-a", "x", "-b", "y", "--", "-c", NULL},
      {"p", "x", "-ab", "-cfoo", "y", "-c", "bar", "z", NULL},
      {"p", "--name=foo", "--na", "bar", "--verbose", "--opt", "--opt=3", "q", NULL},
      {"p", "--nam", "x", "--ver=1", "--unknown", "-z", "-c", NULL},
      {"p", "-", "--", NULL},
      {"p", "--flag", "-d", "-dval", "-d", "w", "--n", "k", NULL},
      {"p", "-name", "foo", "-verbose", "-a", "-ab", "r", NULL},
      {"p", "--name", NULL},
      {"p", "x", "y", "-a", NULL},
      {"p", "-W", "verbose", "-Wname=3", NULL},
  };
  static const char* const optstrings[] = {"abc:d::", "+abc:d::", "-abc:d::", ":abc:d::", "abc:d::W;"};
  opterr = rank_opterr = 0;  /* the messages are the same too, but stderr is not compared here */
  int differ = 0, total = 0;
  for (size_t k = 0; k < sizeof lists / sizeof lists[0]; ++k)
    for (size_t o = 0; o < sizeof optstrings / sizeof optstrings[0]; ++o)
      for (int long_only = 0; long_only < 2; ++long_only) {
        int argc = 0;
        while (lists[k][argc]) ++argc;
        char glibc[2048], rank[2048];
        parse(0, long_only, optstrings[o], argc, lists[k], glibc, sizeof glibc);
        parse(1, long_only, optstrings[o], argc, lists[k], rank, sizeof rank);
        ++total;
        if (strcmp(glibc, rank) != 0) {
          ++differ;
          printf("list %zu, optstring \"%s\"%s:\n  glibc: %s\n  rank:  %s\n", k, optstrings[o],
                 long_only ? ", long only" : "", glibc, rank);
        }
      }
  printf("getopt: %d of %d argument lists parse differently from glibc\n", differ, total);
  return differ;
}
