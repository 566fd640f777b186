/* The tool information interface (MPI-3.1 14.3): initialization around MPI_Init, the control
 * variables (the machine, constants), the performance variables counted exactly over a ring
 * exchange (messages, bytes, virtual time in MPI), their handles' start, stop, reset, write and
 * read-reset, the category, and the errors MPI_T functions return. With the argument "compute",
 * under --compute host, the time in MPI leaves out the host time computed between the calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { kInts = 100, kRounds = 3 };

static int pvar(const char* name, int var_class) {
  int i = -1;
  CHECK_EQ(MPI_T_pvar_get_index(name, var_class, &i), MPI_SUCCESS);
  return i;
}

static unsigned long long read_count(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  unsigned long long v = 0;
  CHECK_EQ(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
  return v;
}

/* Virtual seconds as whole picoseconds: both sides come from the same integer clock. */
static long long ps(double seconds) { return llround(seconds * 1e12); }

int main(int argc, char** argv) {
  int n = 0, provided = -1;
  CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_EQ(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS); /* before MPI_Init */
  CHECK_EQ(provided, MPI_THREAD_SINGLE);
  CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS); /* counted: two finalizes */
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  const int computes = argc > 1 && strcmp(argv[1], "compute") == 0;

  /* Control variables: the machine, as MPI_Get_processor_name names it too. */
  CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
  CHECK_EQ(n, 5);
  int index = -1, count = -1;
  CHECK_EQ(MPI_T_cvar_get_index("touchstone_machine", &index), MPI_SUCCESS);
  char name[64];
  int len = sizeof name, scope = -1, bind = -1;
  MPI_Datatype type;
  CHECK_EQ(MPI_T_cvar_get_info(index, name, &len, NULL, &type, NULL, NULL, NULL, &bind, &scope), MPI_SUCCESS);
  CHECK_EQ(strcmp(name, "touchstone_machine"), 0);
  CHECK_EQ(len, (int)strlen("touchstone_machine") + 1);
  CHECK_EQ(type, MPI_CHAR);
  CHECK_EQ(bind, MPI_T_BIND_NO_OBJECT);
  CHECK_EQ(scope, MPI_T_SCOPE_CONSTANT);
  len = 0; /* the length alone */
  CHECK_EQ(MPI_T_cvar_get_info(index, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK_EQ(len, (int)strlen("touchstone_machine") + 1);
  len = 5; /* cut to fit */
  CHECK_EQ(MPI_T_cvar_get_info(index, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
  CHECK_EQ(strcmp(name, "touc"), 0);
  CHECK_EQ(len, 5);
  MPI_T_cvar_handle ch;
  CHECK_EQ(MPI_T_cvar_handle_alloc(index, NULL, &ch, &count), MPI_SUCCESS);
  char machine[256], processor[MPI_MAX_PROCESSOR_NAME];
  CHECK(count > 1 && count <= (int)sizeof machine);
  CHECK_EQ(MPI_T_cvar_read(ch, machine), MPI_SUCCESS);
  CHECK_EQ((int)strlen(machine) + 1, count);
  int plen = 0;
  MPI_Get_processor_name(processor, &plen);
  CHECK_EQ(strncmp(processor, machine, strlen(machine)), 0); /* "MACHINE-vpRANK" */
  CHECK_EQ(MPI_T_cvar_write(ch, "ring"), MPI_T_ERR_CVAR_SET_NEVER);
  CHECK_EQ(MPI_T_cvar_handle_free(&ch), MPI_SUCCESS);
  CHECK_EQ(ch, MPI_T_CVAR_HANDLE_NULL);
  CHECK_EQ(MPI_T_cvar_get_index("touchstone_packet_payload", &index), MPI_SUCCESS);
  CHECK_EQ(MPI_T_cvar_handle_alloc(index, NULL, &ch, &count), MPI_SUCCESS);
  int payload = -1;
  CHECK_EQ(MPI_T_cvar_read(ch, &payload), MPI_SUCCESS);
  CHECK(payload > 0);
  MPI_T_cvar_handle_free(&ch);

  /* Performance variables over a ring: each rank sends kRounds messages of kInts ints to the next. */
  MPI_T_pvar_session s;
  CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
  const char* counters[4] = {"touchstone_messages_sent", "touchstone_bytes_sent", "touchstone_messages_received",
                             "touchstone_bytes_received"};
  MPI_T_pvar_handle h[5];
  for (int i = 0; i < 4; ++i) {
    CHECK_EQ(MPI_T_pvar_handle_alloc(s, pvar(counters[i], MPI_T_PVAR_CLASS_COUNTER), NULL, &h[i], &count), MPI_SUCCESS);
    CHECK_EQ(count, 1);
  }
  CHECK_EQ(MPI_T_pvar_handle_alloc(s, pvar("touchstone_mpi_time", MPI_T_PVAR_CLASS_TIMER), NULL, &h[4], &count),
           MPI_SUCCESS);
  int continuous = -1, readonly = -1, var_class = -1;
  CHECK_EQ(MPI_T_pvar_get_info(pvar("touchstone_mpi_time", MPI_T_PVAR_CLASS_TIMER), NULL, NULL, NULL, &var_class, &type,
                               NULL, NULL, NULL, NULL, &readonly, &continuous, NULL),
           MPI_SUCCESS);
  CHECK_EQ(var_class, MPI_T_PVAR_CLASS_TIMER);
  CHECK_EQ(type, MPI_DOUBLE);
  CHECK_EQ(continuous, 0);
  CHECK_EQ(read_count(s, h[0]), 0); /* not started: counts nothing yet */

  int out[kInts], in[kInts];
  for (int i = 0; i < kInts; ++i) out[i] = rank * kInts + i;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK_EQ(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
  const double t0 = MPI_Wtime();
  volatile double sink = 0;
  for (int r = 0; r < kRounds; ++r) {
    /* With "compute" (run under --compute host), host time passes between the exchanges too. */
    for (int i = 0; computes && i < 20000000; ++i) sink += i;
    MPI_Sendrecv(out, kInts, MPI_INT, next, r, in, kInts, MPI_INT, prev, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  const double t1 = MPI_Wtime();
  CHECK_EQ(in[0], prev * kInts);
  const unsigned long long bytes = kRounds * kInts * sizeof(int);
  CHECK_EQ(read_count(s, h[0]), kRounds);
  CHECK_EQ(read_count(s, h[1]), bytes);
  CHECK_EQ(read_count(s, h[2]), kRounds);
  CHECK_EQ(read_count(s, h[3]), bytes);
  double in_mpi = -1;
  CHECK_EQ(MPI_T_pvar_read(s, h[4], &in_mpi), MPI_SUCCESS);
  CHECK(t1 > t0);
  if (!computes)
    CHECK_EQ(ps(in_mpi), ps(t1 - t0)); /* the exchanges were the only MPI calls that took time */
  else /* the computation between the calls, milliseconds against their microseconds, is not in MPI */
    CHECK(in_mpi > 0 && in_mpi < (t1 - t0) / 10);

  /* Stopped, a handle keeps its value; a second handle of the same variable counts on its own. */
  CHECK_EQ(MPI_T_pvar_stop(s, h[0]), MPI_SUCCESS);
  MPI_T_pvar_handle fresh;
  CHECK_EQ(MPI_T_pvar_handle_alloc(s, pvar(counters[0], MPI_T_PVAR_CLASS_COUNTER), NULL, &fresh, &count), MPI_SUCCESS);
  CHECK_EQ(MPI_T_pvar_start(s, fresh), MPI_SUCCESS);
  MPI_Sendrecv(out, kInts, MPI_INT, next, 9, in, kInts, MPI_INT, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(read_count(s, h[0]), kRounds);
  CHECK_EQ(read_count(s, fresh), 1);
  CHECK_EQ(read_count(s, h[2]), kRounds + 1);
  /* Read-reset, reset and write change the handle's view only. */
  unsigned long long v = 0;
  CHECK_EQ(MPI_T_pvar_readreset(s, h[2], &v), MPI_SUCCESS);
  CHECK_EQ(v, kRounds + 1);
  CHECK_EQ(read_count(s, h[2]), 0);
  CHECK_EQ(MPI_T_pvar_reset(s, h[0]), MPI_SUCCESS);
  CHECK_EQ(read_count(s, h[0]), 0);
  v = 40;
  CHECK_EQ(MPI_T_pvar_write(s, fresh, &v), MPI_SUCCESS);
  MPI_Sendrecv(out, kInts, MPI_INT, next, 10, in, kInts, MPI_INT, prev, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(read_count(s, fresh), 41);
  CHECK_EQ(read_count(s, h[2]), 1);

  /* The category, and the errors. */
  CHECK_EQ(MPI_T_category_get_num(&n), MPI_SUCCESS);
  CHECK_EQ(n, 1);
  int ncvars = -1, npvars = -1, ncats = -1;
  len = sizeof name;
  CHECK_EQ(MPI_T_category_get_info(0, name, &len, NULL, NULL, &ncvars, &npvars, &ncats), MPI_SUCCESS);
  CHECK_EQ(ncvars, 5);
  CHECK_EQ(npvars, 5);
  CHECK_EQ(ncats, 0);
  CHECK_EQ(MPI_T_category_get_index(name, &index), MPI_SUCCESS);
  CHECK_EQ(index, 0);
  int indices[5] = {-1, -1, -1, -1, -1};
  CHECK_EQ(MPI_T_category_get_pvars(0, 5, indices), MPI_SUCCESS);
  for (int i = 0; i < 5; ++i) CHECK_EQ(indices[i], i);
  CHECK_EQ(MPI_T_cvar_get_info(5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
  CHECK_EQ(MPI_T_cvar_get_index("no such variable", &index), MPI_T_ERR_INVALID_NAME);
  CHECK_EQ(MPI_T_pvar_get_index(counters[0], MPI_T_PVAR_CLASS_TIMER, &index), MPI_T_ERR_INVALID_NAME);
  CHECK_EQ(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
  CHECK_EQ(MPI_T_pvar_read(s + 1, h[0], &v), MPI_T_ERR_INVALID_SESSION);
  CHECK_EQ(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
  char text[MPI_MAX_ERROR_STRING];
  MPI_Error_string(MPI_T_ERR_INVALID_NAME, text, &len);
  CHECK(strstr(text, "no variable or category of that name") != NULL);
  CHECK_EQ(MPI_T_pvar_handle_free(s, &fresh), MPI_SUCCESS);
  CHECK_EQ(fresh, MPI_T_PVAR_HANDLE_NULL);
  CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
  CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_T_ERR_INVALID_SESSION);

  CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
  CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_SUCCESS); /* one init is still open */
  CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
  CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
  CHECK_EQ(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  return all_checks_passed("tool_interface");
}
