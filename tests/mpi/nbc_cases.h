/* Every collective once, started nonblocking (MPI_Ixxx) or persistent (MPI_Xxx_init, then
 * MPI_Start), with buffers of its own and a check of its results: shared by the nbc_*.c tests.
 * Round k puts other values in the buffers, so that a persistent request started again is seen
 * to read its buffers anew. */
#ifndef TOUCHSTONE_TEST_NBC_CASES_H
#define TOUCHSTONE_TEST_NBC_CASES_H
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { NBC_COUNT = 17, NBC_L = 3 };

/* Value rank r sends to rank d, element i, in round k. */
static int nbc_val(int r, int d, int i, int k) { return 1000 * r + 10 * d + i + 7 * k; }

typedef struct {
  MPI_Comm comm;
  int rank, size;
  int bcast[NBC_L];
  int *gsend, *grecv;        /* gather, scatter, allgather, alltoall: size * L each */
  int *vsend, *vrecv;        /* the v-forms and alltoallw: size * size * L each */
  int *counts, *displs;      /* per rank */
  int *rcounts, *rdispls;
  int* agcounts;             /* allgatherv: rank s contributes nbc_vcount(s, 0) */
  int *wcounts, *wdispls, *wrcounts, *wrdispls; /* alltoallw: displacements in bytes */
  MPI_Datatype* wtypes;
  int gather_send[NBC_L], scatter_recv[NBC_L], v_send[NBC_L], sv_recv[NBC_L];
  int *ag_recv, *agv_recv, *a2a_send, *a2a_recv, *a2av_send, *a2av_recv, *a2aw_send, *a2aw_recv;
  int red_send[NBC_L], red_recv[NBC_L], allred_recv[NBC_L], scan_recv[NBC_L], exscan_recv[NBC_L];
  int *rs_send, rs_recv[2], *rsb_send, rsb_recv[2], *rs_counts;
} NbcBufs;

static int* nbc_ints(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(int)); }

static void nbc_setup(NbcBufs* b, MPI_Comm comm) {
  memset(b, 0, sizeof *b);
  b->comm = comm;
  MPI_Comm_rank(comm, &b->rank);
  MPI_Comm_size(comm, &b->size);
  const int n = b->size, big = n * n * NBC_L;
  b->grecv = nbc_ints(n * NBC_L);
  b->gsend = nbc_ints(n * NBC_L);
  b->vsend = nbc_ints(big);
  b->vrecv = nbc_ints(big);
  b->counts = nbc_ints(n), b->displs = nbc_ints(n), b->rcounts = nbc_ints(n), b->rdispls = nbc_ints(n);
  b->agcounts = nbc_ints(n);
  b->wcounts = nbc_ints(n), b->wdispls = nbc_ints(n), b->wrcounts = nbc_ints(n), b->wrdispls = nbc_ints(n);
  b->wtypes = malloc(sizeof(MPI_Datatype) * (size_t)n);
  b->ag_recv = nbc_ints(n * NBC_L), b->agv_recv = nbc_ints(big);
  b->a2a_send = nbc_ints(n * NBC_L), b->a2a_recv = nbc_ints(n * NBC_L);
  b->a2av_send = nbc_ints(big), b->a2av_recv = nbc_ints(big);
  b->a2aw_send = nbc_ints(big), b->a2aw_recv = nbc_ints(big);
  b->rs_send = nbc_ints(2 * n), b->rsb_send = nbc_ints(2 * n), b->rs_counts = nbc_ints(n);
  for (int d = 0; d < n; ++d) {
    b->wtypes[d] = MPI_INT;
    b->rs_counts[d] = d % 2 + 1;
  }
}

static void nbc_free(NbcBufs* b) {
  int* all[] = {b->gsend, b->grecv, b->vsend, b->vrecv, b->counts, b->displs, b->rcounts, b->rdispls, b->agcounts,
                b->wcounts, b->wdispls, b->wrcounts, b->wrdispls, b->ag_recv, b->agv_recv, b->a2a_send, b->a2a_recv,
                b->a2av_send, b->a2av_recv, b->a2aw_send, b->a2aw_recv, b->rs_send, b->rsb_send, b->rs_counts};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) free(all[i]);
  free(b->wtypes);
}

/* Counts of the v-forms: rank r's block for rank d has (r + d) % 3 + 1 elements. */
static int nbc_vcount(int r, int d) { return (r + d) % 3 + 1; }

/* Fills every send buffer for round k and clears every receive buffer. */
static void nbc_fill(NbcBufs* b, int k) {
  const int r = b->rank, n = b->size;
  for (int i = 0; i < NBC_L; ++i) {
    b->bcast[i] = r == 1 % n ? nbc_val(1 % n, 0, i, k) : -1;
    b->gather_send[i] = nbc_val(r, n - 1, i, k);
    b->v_send[i] = nbc_val(r, 0, i, k);
    b->scatter_recv[i] = b->sv_recv[i] = -1;
    b->red_send[i] = nbc_val(r, 0, i, k);
    b->red_recv[i] = b->allred_recv[i] = b->scan_recv[i] = b->exscan_recv[i] = -1;
  }
  for (int d = 0; d < n; ++d)
    for (int i = 0; i < NBC_L; ++i) {
      b->gsend[d * NBC_L + i] = nbc_val(0, d, i, k);
      b->a2a_send[d * NBC_L + i] = nbc_val(r, d, i, k);
    }
  memset(b->grecv, 0xff, sizeof(int) * (size_t)(n * NBC_L));
  memset(b->ag_recv, 0xff, sizeof(int) * (size_t)(n * NBC_L));
  memset(b->a2a_recv, 0xff, sizeof(int) * (size_t)(n * NBC_L));
  memset(b->vrecv, 0xff, sizeof(int) * (size_t)(n * n * NBC_L));
  memset(b->agv_recv, 0xff, sizeof(int) * (size_t)(n * n * NBC_L));
  memset(b->a2av_recv, 0xff, sizeof(int) * (size_t)(n * n * NBC_L));
  memset(b->a2aw_recv, 0xff, sizeof(int) * (size_t)(n * n * NBC_L));
  /* v-forms: blocks at a stride of L elements, so the layout has holes. */
  for (int d = 0; d < n; ++d) {
    b->counts[d] = nbc_vcount(r, d);
    b->displs[d] = d * NBC_L;
    b->rcounts[d] = nbc_vcount(d, r);
    b->agcounts[d] = nbc_vcount(d, 0);
    b->rdispls[d] = d * NBC_L;
    b->wcounts[d] = nbc_vcount(r, d);
    b->wdispls[d] = (int)sizeof(int) * (n - 1 - d) * NBC_L; /* reversed order, in bytes */
    b->wrcounts[d] = nbc_vcount(d, r);
    b->wrdispls[d] = (int)sizeof(int) * (n - 1 - d) * NBC_L;
    for (int i = 0; i < nbc_vcount(r, d); ++i) {
      b->vsend[d * NBC_L + i] = nbc_val(r, d, i, k);
      b->a2av_send[d * NBC_L + i] = nbc_val(r, d, i, k);
      b->a2aw_send[(n - 1 - d) * NBC_L + i] = nbc_val(r, d, i, k) + 1;
    }
  }
  for (int j = 0; j < 2 * n; ++j) b->rs_send[j] = b->rsb_send[j] = nbc_val(r, j, 0, k);
  b->rs_recv[0] = b->rs_recv[1] = b->rsb_recv[0] = b->rsb_recv[1] = -1;
}

/* Starts collective `which` nonblocking (persistent == 0) or creates its persistent request. */
static void nbc_post(NbcBufs* b, int which, int persistent, MPI_Request* q) {
  const MPI_Comm c = b->comm;
  const int n = b->size, last = n - 1;
  const MPI_Info info = MPI_INFO_NULL;
  int* gvcounts = b->rcounts; /* at root 0: nbc_vcount(s, 0) from rank s, at s * L */
  /* The two forms take the same arguments, the persistent one an info before the request. */
#define NBC_POST(i_call, init_call, ...) \
  CHECK_EQ(persistent ? init_call(__VA_ARGS__, info, q) : i_call(__VA_ARGS__, q), MPI_SUCCESS)
  switch (which) {
    case 0: NBC_POST(MPI_Ibarrier, MPI_Barrier_init, c); break;
    case 1: NBC_POST(MPI_Ibcast, MPI_Bcast_init, b->bcast, NBC_L, MPI_INT, 1 % n, c); break;
    case 2:
      NBC_POST(MPI_Igather, MPI_Gather_init, b->gather_send, NBC_L, MPI_INT, b->grecv, NBC_L, MPI_INT, last, c);
      break;
    case 3: /* rank s sends nbc_vcount(s, 0) elements to root 0 */
      NBC_POST(MPI_Igatherv, MPI_Gatherv_init, b->v_send, nbc_vcount(b->rank, 0), MPI_INT, b->vrecv, gvcounts,
               b->rdispls, MPI_INT, 0, c);
      break;
    case 4:
      NBC_POST(MPI_Iscatter, MPI_Scatter_init, b->gsend, NBC_L, MPI_INT, b->scatter_recv, NBC_L, MPI_INT, 0, c);
      break;
    case 5: /* root last sends nbc_vcount(last, d) elements to rank d */
      NBC_POST(MPI_Iscatterv, MPI_Scatterv_init, b->vsend, b->counts, b->displs, MPI_INT, b->sv_recv,
               nbc_vcount(last, b->rank), MPI_INT, last, c);
      break;
    case 6:
      NBC_POST(MPI_Iallgather, MPI_Allgather_init, b->v_send, NBC_L, MPI_INT, b->ag_recv, NBC_L, MPI_INT, c);
      break;
    case 7: /* rank s contributes nbc_vcount(s, 0) elements at s * L */
      NBC_POST(MPI_Iallgatherv, MPI_Allgatherv_init, b->v_send, nbc_vcount(b->rank, 0), MPI_INT, b->agv_recv,
               b->agcounts, b->rdispls, MPI_INT, c);
      break;
    case 8:
      NBC_POST(MPI_Ialltoall, MPI_Alltoall_init, b->a2a_send, NBC_L, MPI_INT, b->a2a_recv, NBC_L, MPI_INT, c);
      break;
    case 9:
      NBC_POST(MPI_Ialltoallv, MPI_Alltoallv_init, b->a2av_send, b->counts, b->displs, MPI_INT, b->a2av_recv,
               b->rcounts, b->rdispls, MPI_INT, c);
      break;
    case 10:
      NBC_POST(MPI_Ialltoallw, MPI_Alltoallw_init, b->a2aw_send, b->wcounts, b->wdispls, b->wtypes, b->a2aw_recv,
               b->wrcounts, b->wrdispls, b->wtypes, c);
      break;
    case 11: NBC_POST(MPI_Ireduce, MPI_Reduce_init, b->red_send, b->red_recv, NBC_L, MPI_INT, MPI_SUM, 0, c); break;
    case 12:
      NBC_POST(MPI_Iallreduce, MPI_Allreduce_init, b->red_send, b->allred_recv, NBC_L, MPI_INT, MPI_MAX, c);
      break;
    case 13:
      NBC_POST(MPI_Ireduce_scatter, MPI_Reduce_scatter_init, b->rs_send, b->rs_recv, b->rs_counts, MPI_INT, MPI_SUM,
               c);
      break;
    case 14:
      NBC_POST(MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, b->rsb_send, b->rsb_recv, 2, MPI_INT,
               MPI_SUM, c);
      break;
    case 15: NBC_POST(MPI_Iscan, MPI_Scan_init, b->red_send, b->scan_recv, NBC_L, MPI_INT, MPI_SUM, c); break;
    case 16: NBC_POST(MPI_Iexscan, MPI_Exscan_init, b->red_send, b->exscan_recv, NBC_L, MPI_INT, MPI_SUM, c); break;
  }
#undef NBC_POST
}

/* The sum over ranks 0..upto-1 of nbc_val(s, d, i, k). */
static int nbc_sum(int upto, int d, int i, int k) {
  int t = 0;
  for (int s = 0; s < upto; ++s) t += nbc_val(s, d, i, k);
  return t;
}

/* Checks every result of round k. */
static void nbc_check(const NbcBufs* b, int k) {
  const int r = b->rank, n = b->size, last = n - 1;
  for (int i = 0; i < NBC_L; ++i) {
    CHECK_EQ(b->bcast[i], nbc_val(1 % n, 0, i, k));
    CHECK_EQ(b->scatter_recv[i], nbc_val(0, r, i, k));
    if (i < nbc_vcount(last, r)) CHECK_EQ(b->sv_recv[i], nbc_val(last, r, i, k));
    else CHECK_EQ(b->sv_recv[i], -1);
    CHECK_EQ(b->allred_recv[i], nbc_val(last, 0, i, k));
    CHECK_EQ(b->scan_recv[i], nbc_sum(r + 1, 0, i, k));
    if (r > 0) CHECK_EQ(b->exscan_recv[i], nbc_sum(r, 0, i, k));
    if (r == 0) CHECK_EQ(b->red_recv[i], nbc_sum(n, 0, i, k));
  }
  for (int s = 0; s < n; ++s)
    for (int i = 0; i < NBC_L; ++i) {
      if (r == last) CHECK_EQ(b->grecv[s * NBC_L + i], nbc_val(s, last, i, k));
      CHECK_EQ(b->ag_recv[s * NBC_L + i], nbc_val(s, 0, i, k));
      CHECK_EQ(b->a2a_recv[s * NBC_L + i], nbc_val(s, r, i, k));
      const int in_v = i < nbc_vcount(s, r);
      CHECK_EQ(b->a2av_recv[s * NBC_L + i], in_v ? nbc_val(s, r, i, k) : -1);
      CHECK_EQ(b->a2aw_recv[(n - 1 - s) * NBC_L + i], in_v ? nbc_val(s, r, i, k) + 1 : -1);
      const int in_g = i < nbc_vcount(s, 0);
      if (r == 0) CHECK_EQ(b->vrecv[s * NBC_L + i], in_g ? nbc_val(s, 0, i, k) : -1);
      CHECK_EQ(b->agv_recv[s * NBC_L + i], in_g ? nbc_val(s, 0, i, k) : -1);
    }
  /* reduce_scatter: rank r gets rs_counts[r] elements from offset sum(rs_counts[0..r-1]) */
  int off = 0;
  for (int d = 0; d < r; ++d) off += d % 2 + 1;
  for (int j = 0; j < r % 2 + 1; ++j) CHECK_EQ(b->rs_recv[j], nbc_sum(n, off + j, 0, k));
  for (int j = 0; j < 2; ++j) CHECK_EQ(b->rsb_recv[j], nbc_sum(n, 2 * r + j, 0, k));
}

#endif
