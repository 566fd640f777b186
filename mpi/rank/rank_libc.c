/* The C library state an MPI process owns alone (docs/mpi.md, "What each rank has of its own").
 *
 * Under `touchstone mpirun` every rank is a VP inside one host process, and its globals are its own
 * because each rank loads its own copy of the program module. The C library is loaded once, so what
 * glibc keeps process-wide would be shared by the ranks: getopt's optind and its scan position (so
 * ranks 1.. would start with their options already consumed), rand's generator, strtok's position.
 * This archive is linked into every program module (touchstone-mpicc, touchstone_add_mpi_program);
 * the module is linked with -Bsymbolic, so its calls bind to the definitions below, and each rank's
 * copy of the module holds its own state, exactly as each process of a real MPI job would. Nothing
 * is saved or restored at a switch of ranks: there is no shared state left to save.
 *
 * getopt is written here in full, with glibc's behaviour (GNU argument permutation, "+" and "-"
 * optstrings, POSIXLY_CORRECT, long options with unique abbreviations, glibc's messages), because
 * glibc's own scan state is private to it. rand and random use glibc's own generator through its
 * reentrant interface (initstate_r/random_r on a state of this module), so a rank draws exactly the
 * numbers a process of a real MPI job would; drand48, lrand48, mrand48, srand48 and seed48 likewise
 * through drand48_r and friends. strtok is strtok_r on this module's position. setvbuf and its
 * relatives leave stdout and stderr unbuffered, as mpirun's per-rank streams must stay. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ getopt */

char* optarg;
int optind = 1;
int opterr = 1;
int optopt = '?';

/* The scan position: within a group of short options ("-abc"), and the permutation's window of
 * non-options already skipped (argv[first_nonopt .. last_nonopt)). */
static struct {
  int initialized;
  const char* nextchar;
  enum { kPermute, kRequireOrder, kReturnInOrder } ordering;
  int first_nonopt, last_nonopt;
  int optopt;  // glibc keeps its own and copies it to optopt after every call, whatever optopt holds
} scan;

/* Moves the skipped non-options argv[first_nonopt .. last_nonopt) after the options that followed
 * them, argv[last_nonopt .. optind), by rotating the two blocks. */
static void permute(char** argv) {
  int bottom = scan.first_nonopt, middle = scan.last_nonopt, top = optind;
  while (top > middle && middle > bottom) {
    if (top - middle > middle - bottom) {
      const int len = middle - bottom;
      for (int i = 0; i < len; ++i) {
        char* t = argv[bottom + i];
        argv[bottom + i] = argv[top - len + i];
        argv[top - len + i] = t;
      }
      top -= len;
    } else {
      const int len = top - middle;
      for (int i = 0; i < len; ++i) {
        char* t = argv[bottom + i];
        argv[bottom + i] = argv[middle + i];
        argv[middle + i] = t;
      }
      bottom += len;
    }
  }
  scan.first_nonopt += optind - scan.last_nonopt;
  scan.last_nonopt = optind;
}

static const char* start_scan(const char* optstring, int posix) {
  if (optind == 0) optind = 1;
  scan.first_nonopt = scan.last_nonopt = optind;
  scan.nextchar = NULL;
  if (optstring[0] == '-') {
    scan.ordering = kReturnInOrder;
    ++optstring;
  } else if (optstring[0] == '+') {
    scan.ordering = kRequireOrder;
    ++optstring;
  } else if (posix || getenv("POSIXLY_CORRECT")) {
    scan.ordering = kRequireOrder;
  } else {
    scan.ordering = kPermute;
  }
  scan.initialized = 1;
  return optstring;
}

static int is_nonoption(char* const* argv, int i) { return argv[i][0] != '-' || argv[i][1] == '\0'; }

/* A long option at scan.nextchar (after "--", or after "-" for getopt_long_only). */
static int long_option(int argc, char** argv, const char* optstring, const struct option* longopts,
                       int* longind, const char* prefix, int print_errors) {
  const char* name = scan.nextchar;
  const char* end = name;
  while (*end && *end != '=') ++end;
  const size_t len = (size_t)(end - name);
  const struct option* found = NULL;
  int index = -1, exact = 0, ambiguous = 0;
  for (int i = 0; longopts[i].name; ++i) {
    if (strncmp(longopts[i].name, name, len) != 0) continue;
    if (strlen(longopts[i].name) == len) {
      found = &longopts[i], index = i, exact = 1;
      break;
    }
    if (!found) {
      found = &longopts[i], index = i;
    } else if (found->has_arg != longopts[i].has_arg || found->flag != longopts[i].flag ||
               found->val != longopts[i].val) {
      ambiguous = 1;
    }
  }
  if (ambiguous && !exact) {
    if (print_errors) {
      fprintf(stderr, "%s: option '%s%s' is ambiguous; possibilities:", argv[0], prefix, name);
      for (int i = 0; longopts[i].name; ++i)
        if (strncmp(longopts[i].name, name, len) == 0) fprintf(stderr, " '%s%s'", prefix, longopts[i].name);
      fputc('\n', stderr);
    }
    scan.nextchar = NULL;
    ++optind;
    scan.optopt = 0;
    return '?';
  }
  if (!found) {
    /* getopt_long_only: "-x" that is no long option may still be the short option x. */
    if (!strcmp(prefix, "-") && strchr(optstring, *name)) return -2;
    if (print_errors) fprintf(stderr, "%s: unrecognized option '%s%s'\n", argv[0], prefix, name);
    scan.nextchar = NULL;
    ++optind;
    scan.optopt = 0;
    return '?';
  }
  ++optind;
  scan.nextchar = NULL;
  if (*end == '=') {
    if (found->has_arg == no_argument) {
      if (print_errors) fprintf(stderr, "%s: option '%s%s' doesn't allow an argument\n", argv[0], prefix, found->name);
      scan.optopt = found->val;
      return '?';
    }
    optarg = (char*)end + 1;
  } else if (found->has_arg == required_argument) {
    if (optind < argc) {
      optarg = argv[optind++];
    } else {
      if (print_errors) fprintf(stderr, "%s: option '%s%s' requires an argument\n", argv[0], prefix, found->name);
      scan.optopt = found->val;
      return optstring[0] == ':' ? ':' : '?';
    }
  } else {
    optarg = NULL;
  }
  if (longind) *longind = index;
  if (found->flag) {
    *found->flag = found->val;
    return 0;
  }
  return found->val;
}

static int scan_step(int argc, char** argv, const char* optstring, const struct option* longopts, int* longind,
                     int long_only, int posix) {
  if (argc < 1) return -1;
  optarg = NULL;
  if (optind == 0 || !scan.initialized) optstring = start_scan(optstring, posix);
  else if (optstring[0] == '-' || optstring[0] == '+') ++optstring;
  const int print_errors = opterr && optstring[0] != ':';

  if (!scan.nextchar || !*scan.nextchar) {
    /* Between arguments: skip (and, when permuting, set aside) non-options. */
    if (scan.last_nonopt > optind) scan.last_nonopt = optind;
    if (scan.first_nonopt > optind) scan.first_nonopt = optind;
    if (scan.ordering == kPermute) {
      if (scan.first_nonopt != scan.last_nonopt && scan.last_nonopt != optind) permute(argv);
      else if (scan.last_nonopt != optind) scan.first_nonopt = optind;
      while (optind < argc && is_nonoption(argv, optind)) ++optind;
      scan.last_nonopt = optind;
    }
    if (optind != argc && !strcmp(argv[optind], "--")) {
      ++optind;
      if (scan.first_nonopt != scan.last_nonopt && scan.last_nonopt != optind) permute(argv);
      else if (scan.first_nonopt == scan.last_nonopt) scan.first_nonopt = optind;
      scan.last_nonopt = argc;
      optind = argc;
    }
    if (optind == argc) {
      /* The options are done: point optind at the first non-option set aside. */
      if (scan.first_nonopt != scan.last_nonopt) optind = scan.first_nonopt;
      return -1;
    }
    if (is_nonoption(argv, optind)) {
      if (scan.ordering == kRequireOrder) return -1;
      optarg = argv[optind++];
      return 1;
    }
    if (longopts) {
      if (argv[optind][1] == '-') {
        scan.nextchar = argv[optind] + 2;
        return long_option(argc, argv, optstring, longopts, longind, "--", print_errors);
      }
      if (long_only && (argv[optind][2] || !strchr(optstring, argv[optind][1]))) {
        scan.nextchar = argv[optind] + 1;
        const int c = long_option(argc, argv, optstring, longopts, longind, "-", print_errors);
        if (c != -2) return c;
      }
    }
    scan.nextchar = argv[optind] + 1;
  }

  /* A short option, the next character of a group. */
  const char c = *scan.nextchar++;
  const char* spec = strchr(optstring, c);
  if (!*scan.nextchar) ++optind;
  if (!spec || c == ':' || c == ';') {
    if (print_errors) fprintf(stderr, "%s: invalid option -- '%c'\n", argv[0], c);
    scan.optopt = c;
    return '?';
  }
  if (spec[0] == 'W' && spec[1] == ';' && longopts) {
    /* "-W foo" is "--foo". */
    if (*scan.nextchar) {
      optarg = (char*)scan.nextchar;
    } else if (optind == argc) {
      if (print_errors) fprintf(stderr, "%s: option requires an argument -- '%c'\n", argv[0], c);
      scan.optopt = c;
      return optstring[0] == ':' ? ':' : '?';
    } else {
      optarg = argv[optind];
    }
    scan.nextchar = optarg;
    optarg = NULL;
    return long_option(argc, argv, optstring, longopts, longind, "-W ", print_errors);
  }
  if (spec[1] == ':') {
    if (spec[2] == ':') {
      /* An optional argument: only attached ("-ofile"). */
      optarg = *scan.nextchar ? (char*)scan.nextchar : NULL;
      if (*scan.nextchar) ++optind;
    } else if (*scan.nextchar) {
      optarg = (char*)scan.nextchar;
      ++optind;
    } else if (optind == argc) {
      if (print_errors) fprintf(stderr, "%s: option requires an argument -- '%c'\n", argv[0], c);
      scan.optopt = c;
      scan.nextchar = NULL;
      return optstring[0] == ':' ? ':' : '?';
    } else {
      optarg = argv[optind++];
    }
    scan.nextchar = NULL;
  }
  return c;
}

static int scan_next(int argc, char** argv, const char* optstring, const struct option* longopts, int* longind,
                     int long_only, int posix) {
  const int c = scan_step(argc, argv, optstring, longopts, longind, long_only, posix);
  optopt = scan.optopt;
  return c;
}

int getopt(int argc, char* const argv[], const char* optstring) {
  return scan_next(argc, (char**)argv, optstring, NULL, NULL, 0, 0);
}

/* What <unistd.h> calls getopt in strict POSIX modes (no _GNU_SOURCE): no permutation. */
int __posix_getopt(int argc, char* const argv[], const char* optstring) {
  return scan_next(argc, (char**)argv, optstring, NULL, NULL, 0, 1);
}

int getopt_long(int argc, char* const argv[], const char* optstring, const struct option* longopts,
                       int* longind) {
  return scan_next(argc, (char**)argv, optstring, longopts, longind, 0, 0);
}

int getopt_long_only(int argc, char* const argv[], const char* optstring, const struct option* longopts,
                            int* longind) {
  return scan_next(argc, (char**)argv, optstring, longopts, longind, 1, 0);
}

/* ------------------------------------------------------------------ rand, random */

/* glibc's default generator: the additive feedback generator of degree 31 (128 bytes of state),
 * seeded with 1 until the program seeds it. */
static struct random_data generator;
static char generator_state[128];
static int generator_ready;

static void seed_generator(unsigned seed) {
  if (!generator_ready) {
    initstate_r(seed, generator_state, sizeof generator_state, &generator);
    generator_ready = 1;
  } else {
    srandom_r(seed, &generator);
  }
}

long random(void) {
  if (!generator_ready) seed_generator(1);
  int32_t r = 0;
  random_r(&generator, &r);
  return r;
}
void srandom(unsigned seed) { seed_generator(seed); }
int rand(void) { return (int)random(); }
void srand(unsigned seed) { seed_generator(seed); }

/* The 48-bit generators: glibc's own through drand48_r and friends, on a state of this module
 * (zero, as glibc's, until seeded; glibc then starts from the same a and c). */
static struct drand48_data generator48;

double drand48(void) {
  double r = 0;
  drand48_r(&generator48, &r);
  return r;
}
long lrand48(void) {
  long r = 0;
  lrand48_r(&generator48, &r);
  return r;
}
long mrand48(void) {
  long r = 0;
  mrand48_r(&generator48, &r);
  return r;
}
void srand48(long seed) { srand48_r(seed, &generator48); }
unsigned short* seed48(unsigned short seed[3]) {
  static unsigned short previous[3];
  seed48_r(seed, &generator48);
  memcpy(previous, generator48.__old_x, sizeof previous);
  return previous;
}

/* ------------------------------------------------------------------ strtok */

static char* strtok_position;

char* strtok(char* str, const char* delim) { return strtok_r(str, delim, &strtok_position); }

/* ------------------------------------------------------------------ stdout's buffering */

/* Under mpirun, stdout and stderr are unbuffered streams of the launcher's that keep each rank's
 * output apart and write it out when the rank blocks (docs/mpi.md, "Output"); a buffer set on them
 * would be one for all ranks and mix their pieces of lines. So buffering asked for them is taken as
 * done (the rank's own buffer already gives it: nothing of a rank's reaches the file before it
 * blocks, and everything it wrote by then does); other streams get it from glibc. */
extern int _IO_setvbuf(FILE* stream, char* buf, int mode, size_t size);

int setvbuf(FILE* stream, char* buf, int mode, size_t size) {
  if (stream == stdout || stream == stderr) return 0;
  return _IO_setvbuf(stream, buf, mode, size);
}
void setbuf(FILE* stream, char* buf) { setvbuf(stream, buf, buf ? _IOFBF : _IONBF, BUFSIZ); }
void setbuffer(FILE* stream, char* buf, size_t size) { setvbuf(stream, buf, buf ? _IOFBF : _IONBF, size); }
void setlinebuf(FILE* stream) { setvbuf(stream, NULL, _IOLBF, 0); }

/* ------------------------------------------------------------------ exit */

/* exit(n) ends the rank that calls it, as it would end its process: the rank's main is unwound and
 * ends with status n (touchstone_mpi_exit in libtouchstone_mpi.so), and mpirun treats it as a
 * return of n from main. Without this, exit would end the whole run, every rank at once. The
 * module's atexit handlers are not run by it (they are the process's, run when mpirun ends). */
extern void touchstone_mpi_exit(int status) __attribute__((noreturn));

void exit(int status) { touchstone_mpi_exit(status); }

/* ------------------------------------------------------------------ run directly */

/* A program module is a shared object: run as ./prog it would jump to address 0 (a bare SIGSEGV).
 * With this .interp section the module is also an executable for the kernel (as libc.so.6 is): the
 * dynamic loader loads it and its libraries and jumps to module_run_directly (the module is linked
 * with -e module_run_directly), which says how to run the program and exits with status 1.
 * Loaded by dlopen, as `touchstone mpirun` does, neither the section nor the entry point is used. */
#if defined(TOUCHSTONE_RANK_LIBC_NO_ENTRY)  /* compiled into a test executable, which has its own */
#elif defined(__x86_64__)
const char touchstone_module_interp[] __attribute__((section(".interp"), used)) = "/lib64/ld-linux-x86-64.so.2";
#elif defined(__aarch64__)
const char touchstone_module_interp[] __attribute__((section(".interp"), used)) = "/lib/ld-linux-aarch64.so.1";
#endif

#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
__attribute__((force_align_arg_pointer))
#endif
__attribute__((noreturn, used)) void touchstone_module_run_directly(void) {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  path[n > 0 ? n : 0] = '\0';
  static const char head[] =
      "this is an MPI program for Touchstone, a module to be run by its launcher:\n"
      "  touchstone mpirun [--machine SPEC] [-np N] ";
  static const char tail[] = " [ARGS...]\n(touchstone mpirun --help lists the options)\n";
  if (write(STDERR_FILENO, head, sizeof head - 1) < 0 || write(STDERR_FILENO, path, strlen(path)) < 0 ||
      write(STDERR_FILENO, tail, sizeof tail - 1) < 0)
    _exit(1);
  _exit(1);
}
