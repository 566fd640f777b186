/* libtouchstone_mpi_rank.a's C library functions under other names, so that one test program can
 * call them and glibc's side by side (getopt_matches_glibc.c). */
#define getopt rank_getopt
#define getopt_long rank_getopt_long
#define getopt_long_only rank_getopt_long_only
#define __posix_getopt rank_posix_getopt
#define optind rank_optind
#define optarg rank_optarg
#define opterr rank_opterr
#define optopt rank_optopt
#define exit rank_exit
#define rand rank_rand
#define srand rank_srand
#define random rank_random
#define srandom rank_srandom
#define strtok rank_strtok
#define drand48 rank_drand48
#define lrand48 rank_lrand48
#define mrand48 rank_mrand48
#define srand48 rank_srand48
#define seed48 rank_seed48
#define touchstone_module_run_directly rank_module_run_directly
#define TOUCHSTONE_RANK_LIBC_NO_ENTRY
#include "mpi/rank/rank_libc.c"
