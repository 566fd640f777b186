/* Buffered mode: MPI_Bsend and MPI_Ibsend through an attached buffer whose capacity is enforced
 * (each message takes its size plus MPI_BSEND_OVERHEAD until its send completes; one that does not
 * fit is MPI_ERR_BUFFER), space freed as messages leave, MPI_Buffer_detach giving the buffer back
 * after every message has left, derived datatypes, MPI_PROC_NULL, and MPI-4.1's buffers of a
 * communicator and automatic buffers. Needs at least 3 ranks. */
#include <stdlib.h>

#include "check.h"

enum { N = 1000 };

static int class_of(int code) {
  int k;
  MPI_Error_class(code, &k);
  return k;
}

/* Virtual time: a buffered send costs what a nonblocking standard send costs to post, plus the copy
 * into the buffer (Proc::local_copy: bytes * copy_per_byte + pieces * copy_per_piece). Given the
 * machine's copy costs in ps per byte and per piece (argv), rank 0 posts the same message both
 * ways to rank 1, each from an idle node, and compares: the difference is exactly the copy. */
static void copy_cost(int rank, long long ps_per_byte, long long ps_per_piece) {
  enum { M = 1000 };
  static int v[2 * M], in[2 * M];
  MPI_Datatype every_other;
  MPI_Type_vector(M, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  char* buf = malloc(2 * (M * sizeof(int) + MPI_BSEND_OVERHEAD));
  MPI_Buffer_attach(buf, 2 * (M * (int)sizeof(int) + MPI_BSEND_OVERHEAD));
  for (int contiguous = 1; contiguous >= 0; --contiguous) {
    const MPI_Datatype t = contiguous ? MPI_INT : every_other;
    const int count = contiguous ? M : 1;
    if (rank == 0) {
      MPI_Request r;
      double t0 = MPI_Wtime();
      MPI_Isend(v, count, t, 1, 40, MPI_COMM_WORLD, &r);
      const double standard = MPI_Wtime() - t0;
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Recv(NULL, 0, MPI_INT, 1, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* both nodes idle again */
      t0 = MPI_Wtime();
      MPI_Bsend(v, count, t, 1, 40, MPI_COMM_WORLD);
      const double buffered = MPI_Wtime() - t0;
      const long long copy_ps = (M * (long long)sizeof(int)) * ps_per_byte + (contiguous ? 1 : M) * ps_per_piece;
      CHECK_EQ((long long)((buffered - standard) * 1e12 + 0.5), copy_ps);
      MPI_Recv(NULL, 0, MPI_INT, 1, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      for (int k = 0; k < 2; ++k) {
        MPI_Recv(in, M, MPI_INT, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_INT, 0, 41, MPI_COMM_WORLD);
      }
    }
  }
  void* back;
  int n;
  MPI_Buffer_detach(&back, &n);
  free(buf);
  MPI_Type_free(&every_other);
}

/* MPI-4.1's buffers of a communicator: a communicator's buffered sends go through its own buffer
 * (never the process's), flushes wait for what went through it, detach gives it back; with
 * MPI_BUFFER_AUTOMATIC, for a communicator or the process, every message finds room. Each rank
 * sends to the next; nothing may be attached to the process on entry. */
static void communicator_buffers(int rank, int size, int* data, int* in) {
  const int one = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD, next = (rank + 1) % size;
  const int prev = (rank + size - 1) % size;
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  CHECK_EQ(class_of(MPI_Bsend(data, N, MPI_INT, next, 1, dup)), MPI_ERR_BUFFER);
  char* cbuf = malloc((size_t)one);
  CHECK_EQ(MPI_Comm_attach_buffer(dup, cbuf, one), MPI_SUCCESS);
  CHECK_EQ(class_of(MPI_Comm_attach_buffer(dup, cbuf, one)), MPI_ERR_BUFFER); /* one at a time */
  for (int i = 0; i < N; ++i) data[i] = rank + i;
  CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, 1, dup), MPI_SUCCESS);
  /* Its packets are still leaving: no room in the communicator's buffer, and the world has none. */
  CHECK_EQ(class_of(MPI_Bsend(data, N, MPI_INT, next, 2, dup)), MPI_ERR_BUFFER);
  CHECK_EQ(class_of(MPI_Bsend(data, N, MPI_INT, next, 2, MPI_COMM_WORLD)), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Comm_flush_buffer(dup), MPI_SUCCESS); /* the first has left: room again */
  for (int i = 0; i < N; ++i) data[i] = 2 * rank + i;
  CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, 2, dup), MPI_SUCCESS);
  MPI_Request r;
  CHECK_EQ(MPI_Comm_iflush_buffer(dup, &r), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  void* back = NULL;
  int back_size = -1;
  CHECK_EQ(MPI_Comm_detach_buffer(dup, &back, &back_size), MPI_SUCCESS);
  CHECK(back == cbuf && back_size == one);
  /* Automatic: three messages of N ints at once, with no size given. */
  CHECK_EQ(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0), MPI_SUCCESS);
  for (int k = 3; k <= 5; ++k) {
    for (int i = 0; i < N; ++i) data[i] = k * rank + i;
    CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, k, dup), MPI_SUCCESS);
  }
  CHECK_EQ(MPI_Comm_detach_buffer(dup, &back, &back_size), MPI_SUCCESS);
  CHECK(back == MPI_BUFFER_AUTOMATIC && back_size == 0);
  CHECK_EQ(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0), MPI_SUCCESS);
  for (int k = 6; k <= 7; ++k) {
    for (int i = 0; i < N; ++i) data[i] = k * rank + i;
    CHECK_EQ(MPI_Bsend(data, N, MPI_INT, next, k, dup), MPI_SUCCESS); /* dup has none now: the process's */
  }
  for (int k = 1; k <= 7; ++k) {
    MPI_Recv(in, N, MPI_INT, prev, k, dup, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; ++i) CHECK_EQ(in[i], k * prev + i);
  }
  CHECK_EQ(MPI_Buffer_detach(&back, &back_size), MPI_SUCCESS);
  CHECK(back == MPI_BUFFER_AUTOMATIC && back_size == 0);
  MPI_Comm_free(&dup);
  free(cbuf);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  if (argc == 3) {
    copy_cost(rank, atoll(argv[1]), atoll(argv[2]));
    MPI_Finalize();
    if (rank == 0) printf("p2p_bsend copy cost: all checks passed on %d ranks\n", size);
    return 0;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int one = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD; /* one message of N ints */
  int* data = malloc(sizeof(int) * N);
  int* in = malloc(sizeof(int) * N);

  /* No buffer attached: a buffered send is MPI_ERR_BUFFER (to MPI_PROC_NULL it needs none). */
  CHECK_EQ(class_of(MPI_Bsend(data, N, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD)), MPI_ERR_BUFFER);
  CHECK_EQ(MPI_Bsend(data, N, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  char* buf = malloc((size_t)(2 * one));
  CHECK_EQ(MPI_Buffer_attach(buf, 2 * one - 1), MPI_SUCCESS);
  CHECK_EQ(class_of(MPI_Buffer_attach(buf, one)), MPI_ERR_BUFFER); /* one buffer at a time */

  if (rank == 0) {
    /* A message of N ints fits once into 2 * one - 1 bytes, not twice: right after the first
     * MPI_Bsend its packets are still leaving the node, so its space is not free yet. */
    for (int i = 0; i < N; ++i) data[i] = i;
    CHECK_EQ(MPI_Bsend(data, N, MPI_INT, 1, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int i = 0; i < N; ++i) data[i] = -1; /* the buffered copy is what goes */
    CHECK_EQ(class_of(MPI_Bsend(data, N, MPI_INT, 2, 1, MPI_COMM_WORLD)), MPI_ERR_BUFFER);
    /* A smaller one fits in what is left: N/2 ints need N/2 * 4 + MPI_BSEND_OVERHEAD bytes. */
    for (int i = 0; i < N / 2; ++i) data[i] = 7 * i;
    MPI_Request r;
    CHECK_EQ(MPI_Ibsend(data, N / 2, MPI_INT, 2, 2, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    int flag = 0;
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE); /* complete once copied */
    CHECK_EQ(flag, 1);
    CHECK(r == MPI_REQUEST_NULL);
    MPI_Send(&flag, 1, MPI_INT, 1, 9, MPI_COMM_WORLD); /* rank 1 may receive now */
    /* Once rank 1 has received the first message, its space is free again. */
    MPI_Recv(&flag, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; ++i) data[i] = 3 * i;
    CHECK_EQ(MPI_Bsend(data, N, MPI_INT, 2, 3, MPI_COMM_WORLD), MPI_SUCCESS);
  } else if (rank == 1) {
    int go;
    MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(in, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; ++i) CHECK_EQ(in[i], i);
    MPI_Send(&go, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
  } else if (rank == 2) {
    MPI_Status st;
    MPI_Recv(in, N, MPI_INT, 0, 2, MPI_COMM_WORLD, &st);
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, N / 2);
    for (int i = 0; i < N / 2; ++i) CHECK_EQ(in[i], 7 * i);
    MPI_Recv(in, N, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; ++i) CHECK_EQ(in[i], 3 * i);
  }
  /* Detach waits until every buffered message has left, and gives the buffer back. */
  void* back = NULL;
  int back_size = 0;
  CHECK_EQ(MPI_Buffer_detach(&back, &back_size), MPI_SUCCESS);
  CHECK(back == buf);
  CHECK_EQ(back_size, 2 * one - 1);

  /* Every rank Bsends a strided vector (every other int) to the next rank on a sub-communicator of
   * all ranks but the last, with exactly the room it needs; the receiver gets it contiguous. */
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank == size - 1 ? MPI_UNDEFINED : 0, rank, &sub);
  if (sub != MPI_COMM_NULL) {
    int sr, ss;
    MPI_Comm_rank(sub, &sr);
    MPI_Comm_size(sub, &ss);
    MPI_Datatype every_other;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int i = 0; i < N; ++i) data[i] = i % 2 ? -1 : 100 * sr + i;
    CHECK_EQ(MPI_Buffer_attach(buf, N / 2 * (int)sizeof(int) + MPI_BSEND_OVERHEAD), MPI_SUCCESS);
    CHECK_EQ(MPI_Bsend(data, 1, every_other, (sr + 1) % ss, 4, sub), MPI_SUCCESS);
    MPI_Recv(in, N / 2, MPI_INT, (sr + ss - 1) % ss, 4, sub, MPI_STATUS_IGNORE);
    for (int i = 0; i < N / 2; ++i) CHECK_EQ(in[i], 100 * ((sr + ss - 1) % ss) + 2 * i);
    CHECK_EQ(MPI_Buffer_detach(&back, &back_size), MPI_SUCCESS);
    MPI_Type_free(&every_other);
    MPI_Comm_free(&sub);
  }
  /* With nothing attached, detach gives NULL and 0. */
  CHECK_EQ(MPI_Buffer_detach(&back, &back_size), MPI_SUCCESS);
  CHECK(back == NULL);
  CHECK_EQ(back_size, 0);
  communicator_buffers(rank, size, data, in);
  /* A buffer left attached at MPI_Finalize: its message is still delivered. */
  MPI_Buffer_attach(buf, one);
  int token = rank;
  MPI_Bsend(&token, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD);
  MPI_Recv(&token, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(token, (rank + size - 1) % size);
  MPI_Finalize();
  free(buf);
  free(data);
  free(in);
  if (rank == 0) printf("p2p_bsend: all checks passed on %d ranks\n", size);
  return 0;
}
