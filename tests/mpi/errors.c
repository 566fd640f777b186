/* Errors through error handlers: with MPI_ERRORS_RETURN a truncated receive returns
 * MPI_ERR_TRUNCATE (and fills the buffer and status), a bad rank MPI_ERR_RANK, a bad tag
 * MPI_ERR_TAG, a bad communicator MPI_ERR_COMM, an op on the wrong type MPI_ERR_OP, a NULL buffer
 * MPI_ERR_BUFFER, a null pointer argument (an output of a query or a constructor among them) MPI_ERR_ARG;
 * a user error handler is called with the code.
 * Needs 2 ranks or more. */
#include "check.h"

static int handler_calls = 0, handler_code = 0;
static void on_error(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++handler_calls;
  handler_code = *code;
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int big[4] = {1, 2, 3, 4}, small[2] = {0, 0};
  if (rank == 1) MPI_Send(big, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Status st;
    int rc = MPI_Recv(small, 2, MPI_INT, 1, 0, MPI_COMM_WORLD, &st);
    CHECK_EQ(rc, MPI_ERR_TRUNCATE);
    CHECK_EQ(st.MPI_ERROR, MPI_ERR_TRUNCATE);
    CHECK_EQ(small[0], 1);
    CHECK_EQ(small[1], 2);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    CHECK(len > 0);
  }
  /* Truncation seen through MPI_Waitall: MPI_ERR_IN_STATUS, the status says MPI_ERR_TRUNCATE. */
  if (rank == 1) MPI_Send(big, 3, MPI_INT, 0, 1, MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Request r[2];
    MPI_Status st[2];
    int ok = 0;
    MPI_Irecv(small, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&ok, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[1]);
    int rc = MPI_Waitall(2, r, st);
    CHECK_EQ(rc, MPI_ERR_IN_STATUS);
    CHECK_EQ(st[0].MPI_ERROR, MPI_ERR_TRUNCATE);
    CHECK_EQ(st[1].MPI_ERROR, MPI_SUCCESS);
    CHECK_EQ(r[0], MPI_REQUEST_NULL);
  }
  int v = 0;
  CHECK_EQ(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
  CHECK_EQ(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 0, (MPI_Comm)12345), MPI_ERR_COMM);
  CHECK_EQ(MPI_Send(&v, 1, (MPI_Datatype)4242, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
  CHECK_EQ(MPI_Bcast(&v, 1, MPI_INT, size + 3, MPI_COMM_WORLD), MPI_ERR_ROOT);
  /* A NULL buffer with a predefined type and a positive count is no memory: MPI_ERR_BUFFER, and
   * nothing is posted (each of these would be matched by the next message to rank 0, tag 0). */
  static char attached[256];
  MPI_Buffer_attach(attached, sizeof attached);
  MPI_Request nreq = MPI_REQUEST_NULL;
  CHECK_EQ(MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Bsend(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Isend(NULL, 2, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &nreq), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Recv(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Irecv(NULL, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &nreq), MPI_ERR_BUFFER);
  CHECK_EQ(nreq, MPI_REQUEST_NULL);
  /* A persistent request is refused by the init that was given the buffer, not at its first start;
   * to MPI_PROC_NULL it starts and completes as an empty one. */
  MPI_Status status_of_null;
  CHECK_EQ(MPI_Send_init(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &nreq), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Ssend_init(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &nreq), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Bsend_init(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &nreq), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Rsend_init(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &nreq), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Recv_init(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &nreq), MPI_ERR_BUFFER);
  CHECK_EQ(nreq, MPI_REQUEST_NULL);
  CHECK_EQ(MPI_Recv_init(NULL, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &nreq), MPI_SUCCESS);
  CHECK_EQ(MPI_Start(&nreq), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&nreq, &status_of_null), MPI_SUCCESS);
  CHECK_EQ(status_of_null.MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(MPI_Request_free(&nreq), MPI_SUCCESS);
  CHECK_EQ(MPI_Sendrecv(NULL, 4, MPI_INT, 0, 0, &v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  /* The same in collectives, on every rank: each refuses the call before it communicates (a
   * nonblocking one at its start or at its completion, as MPI allows). */
  int four[4] = {0};
  CHECK_EQ(MPI_Bcast(NULL, 4, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Allreduce(four, NULL, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  int rc = MPI_Iallreduce(NULL, four, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &nreq);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&nreq, MPI_STATUS_IGNORE);
  CHECK_EQ(rc, MPI_ERR_BUFFER);
  /* Null pointer arguments: MPI_ERR_ARG, and a nonblocking call refused so posts nothing. */
  MPI_Status status;
  int flag = 0, index = 0, count = 0;
  CHECK_EQ(MPI_Isend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Irecv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Send_init(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Wait(NULL, &status), MPI_ERR_ARG);
  CHECK_EQ(MPI_Test(NULL, &flag, &status), MPI_ERR_ARG);
  CHECK_EQ(MPI_Waitall(2, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
  CHECK_EQ(MPI_Testall(2, NULL, &flag, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
  CHECK_EQ(MPI_Waitany(2, NULL, &index, &status), MPI_ERR_ARG);
  CHECK_EQ(MPI_Startall(1, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  CHECK_EQ(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &count), MPI_ERR_ARG);
  CHECK_EQ(MPI_Get_elements(&status, MPI_INT, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Error_string(MPI_ERR_ARG, NULL, NULL), MPI_ERR_ARG);
  MPI_Aint lb = 0;
  int position = 0;
  CHECK_EQ(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Type_get_extent(MPI_INT, &lb, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Iprobe(0, 0, MPI_COMM_WORLD, NULL, MPI_STATUS_IGNORE), MPI_ERR_ARG);
  CHECK_EQ(MPI_Op_free(NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Initialized(NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Get_processor_name(NULL, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Get_address(&v, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Pack(&v, 1, MPI_INT, four, (int)sizeof four, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
  CHECK_EQ(MPI_Pack(&v, 1, MPI_INT, NULL, 16, &position, MPI_COMM_WORLD), MPI_ERR_ARG);
  MPI_Aint at = 0;
  CHECK_EQ(MPI_Pack_external("external32", &v, 1, MPI_INT, NULL, 16, &at), MPI_ERR_ARG);
  CHECK_EQ(MPI_Pack_external("external32", &v, 1, MPI_INT, four, 16, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Unpack_external("external32", NULL, 16, &at, &v, 1, MPI_INT), MPI_ERR_ARG);
  CHECK_EQ(at, 0);
  MPI_Datatype pair, inner;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  CHECK_EQ(MPI_Type_get_contents(pair, 1, 0, 1, NULL, NULL, &inner), MPI_ERR_ARG);
  CHECK_EQ(MPI_Type_get_contents(pair, 1, 0, 1, four, NULL, NULL), MPI_ERR_ARG);
  MPI_Type_free(&pair);
  CHECK_EQ(MPI_Reduce_local(NULL, four, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Reduce_local(four, NULL, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Mrecv(&v, 1, MPI_INT, NULL, &status), MPI_ERR_ARG);
  MPI_Request mreq = MPI_REQUEST_NULL;
  CHECK_EQ(MPI_Imrecv(&v, 1, MPI_INT, NULL, &mreq), MPI_ERR_ARG);
  CHECK_EQ(mreq, MPI_REQUEST_NULL);
  CHECK_EQ(position, 0);
  /* A v-collective's null count or displacement array, on every rank: refused before it communicates. */
  int zeros[64] = {0};
  CHECK_EQ(MPI_Alltoallv(four, zeros, NULL, MPI_INT, four, zeros, zeros, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG);
  CHECK_EQ(MPI_Allgatherv(four, 0, MPI_INT, four, NULL, zeros, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG);
  MPI_Datatype ints[64];
  for (int i = 0; i < 64; ++i) ints[i] = MPI_INT;
  CHECK_EQ(MPI_Alltoallw(four, zeros, NULL, ints, four, zeros, zeros, ints, MPI_COMM_WORLD), MPI_ERR_ARG);
  CHECK_EQ(MPI_Alltoallw(four, zeros, zeros, ints, four, zeros, NULL, ints, MPI_COMM_WORLD), MPI_ERR_ARG);
  CHECK_EQ(MPI_Alltoallw(four, zeros, zeros, NULL, four, zeros, zeros, ints, MPI_COMM_WORLD), MPI_ERR_ARG);
  MPI_Comm cart = MPI_COMM_NULL;
  int dims[2] = {0, 0};
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, NULL, dims, 0, &cart), MPI_ERR_ARG);
  CHECK_EQ(MPI_Dims_create(size, 2, NULL), MPI_ERR_ARG);
  CHECK_EQ(cart, MPI_COMM_NULL);
  /* The queries' and constructors' outputs: MPI_ERR_ARG, never a write through the null pointer. */
  int out = 0, no_period = 0;
  MPI_Op op = MPI_OP_NULL;
  MPI_Errhandler refused_handler = MPI_ERRHANDLER_NULL;
  MPI_Aint extent = 0;
  CHECK_EQ(MPI_Query_thread(NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Is_thread_main(NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Get_version(NULL, &out), MPI_ERR_ARG);
  CHECK_EQ(MPI_Get_library_version(NULL, &out), MPI_ERR_ARG);
  CHECK_EQ(MPI_Error_class(MPI_ERR_ARG, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Type_get_name(MPI_INT, NULL, &out), MPI_ERR_ARG);
  CHECK_EQ(MPI_Type_get_envelope(MPI_INT, &out, &out, NULL, &out), MPI_ERR_ARG);
  CHECK_EQ(MPI_Type_extent(MPI_INT, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Type_ub(MPI_INT, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Type_lb(MPI_INT, &extent), MPI_SUCCESS);
  CHECK_EQ(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
  CHECK_EQ(op, MPI_OP_NULL);
  CHECK_EQ(MPI_Op_commutative(MPI_SUM, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Topo_test(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Cart_map(MPI_COMM_WORLD, 1, &size, &no_period, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Pack_external_size("external32", 1, MPI_INT, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Test_cancelled(&status, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Alloc_mem(16, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  CHECK_EQ(MPI_Comm_create_errhandler(NULL, &refused_handler), MPI_ERR_ARG);
  CHECK_EQ(refused_handler, MPI_ERRHANDLER_NULL);
  CHECK_EQ(MPI_Errhandler_free(NULL), MPI_ERR_ARG);
  MPI_Errhandler not_a_handler = (MPI_Errhandler)9999;
  CHECK_EQ(MPI_Errhandler_free(&not_a_handler), MPI_ERR_ARG);
  CHECK_EQ(not_a_handler, (MPI_Errhandler)9999);
  /* On every rank, refused before it communicates. */
  CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, NULL),
           MPI_ERR_ARG);
  /* A refused detach leaves the buffer attached: the detach below still gets it. */
  CHECK_EQ(MPI_Buffer_detach(NULL, &out), MPI_ERR_ARG);
  void* detached = NULL;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  CHECK_EQ(detached_size, (int)sizeof attached);
  double d = 1.0, e = 0;
  CHECK_EQ(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BXOR, MPI_COMM_WORLD), MPI_ERR_OP);
  /* A user handler sees the code; the call then returns it. */
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(on_error, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
  CHECK_EQ(MPI_Send(&v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
  CHECK_EQ(handler_calls, 1);
  CHECK_EQ(handler_code, MPI_ERR_RANK);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("errors: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
