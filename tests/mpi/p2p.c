/* Point-to-point semantics: non-overtaking order per tag, wildcards, probe, waitany, testall,
 * ssend, sendrecv, MPI_PROC_NULL, derived datatypes and MPI_Get_count. Needs at least 3 ranks. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 40 };

static void order_and_wildcards(int rank, int size) {
  /* Rank 1 sends N messages to rank 0 with tags 0,1,0,1,...; rank 0 takes all tag-1 messages
   * first, then the tag-0 ones: each tag's messages arrive in the order sent (non-overtaking). */
  if (rank == 1)
    for (int i = 0; i < N; ++i) MPI_Send(&i, 1, MPI_INT, 0, i % 2, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int t = 1; t >= 0; --t)
      for (int k = 0; k < N / 2; ++k) {
        int v = -1;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, 1, t, MPI_COMM_WORLD, &st);
        CHECK_EQ(v, 2 * k + t);
        CHECK_EQ(st.MPI_SOURCE, 1);
        CHECK_EQ(st.MPI_TAG, t);
      }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* Every other rank sends N numbered messages to rank 0, which receives with MPI_ANY_SOURCE and
   * MPI_ANY_TAG: every sender's sequence is seen in order, and every message exactly once. */
  if (rank != 0)
    for (int i = 0; i < N; ++i) {
      int msg[2] = {rank, i};
      MPI_Send(msg, 2, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD);
    }
  if (rank == 0) {
    int* next = calloc((size_t)size, sizeof(int));
    for (int k = 0; k < (size - 1) * N; ++k) {
      int msg[2];
      MPI_Status st;
      MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      CHECK_EQ(st.MPI_SOURCE, msg[0]);
      CHECK_EQ(st.MPI_TAG, 100 + msg[0]);
      CHECK_EQ(msg[1], next[msg[0]]);
      next[msg[0]]++;
    }
    for (int r = 1; r < size; ++r) CHECK_EQ(next[r], N);
    free(next);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void probe_and_count(int rank, int size) {
  /* Rank r > 0 sends r doubles to rank 0, which probes for any source, sizes the buffer with
   * MPI_Get_count, then receives exactly that message. */
  if (rank != 0) {
    double* d = malloc(sizeof(double) * (size_t)rank);
    for (int i = 0; i < rank; ++i) d[i] = rank + i / 10.0;
    MPI_Send(d, rank, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
    free(d);
  } else {
    for (int k = 1; k < size; ++k) {
      MPI_Status st;
      int n = -1, flag = 0;
      MPI_Probe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_DOUBLE, &n);
      CHECK_EQ(n, st.MPI_SOURCE);
      MPI_Iprobe(st.MPI_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      CHECK(flag);
      double* d = malloc(sizeof(double) * (size_t)n);
      MPI_Status st2;
      MPI_Recv(d, n, MPI_DOUBLE, st.MPI_SOURCE, 7, MPI_COMM_WORLD, &st2);
      CHECK_EQ(st2.MPI_SOURCE, st.MPI_SOURCE);
      for (int i = 0; i < n; ++i) CHECK(d[i] == n + i / 10.0);
      int bytes = -1;
      MPI_Get_count(&st2, MPI_BYTE, &bytes);
      CHECK_EQ(bytes, n * 8);
      free(d);
    }
    int flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void waitany_testall(int rank, int size) {
  /* Rank 0 posts one receive per other rank and completes them with MPI_Waitany: every index
   * exactly once, each with its sender's value; then MPI_Testall on sends until all complete. */
  if (rank == 0) {
    int n = size - 1;
    int* vals = malloc(sizeof(int) * (size_t)n);
    int* seen = calloc((size_t)n, sizeof(int));
    MPI_Request* rq = malloc(sizeof(MPI_Request) * (size_t)n);
    for (int i = 0; i < n; ++i) MPI_Irecv(&vals[i], 1, MPI_INT, i + 1, 3, MPI_COMM_WORLD, &rq[i]);
    for (int k = 0; k < n; ++k) {
      int idx = -1;
      MPI_Status st;
      MPI_Waitany(n, rq, &idx, &st);
      CHECK(idx >= 0 && idx < n);
      CHECK(!seen[idx]);
      seen[idx] = 1;
      CHECK_EQ(rq[idx], MPI_REQUEST_NULL);
      CHECK_EQ(vals[idx], 1000 + idx + 1);
      CHECK_EQ(st.MPI_SOURCE, idx + 1);
    }
    int idx = 0;
    MPI_Waitany(n, rq, &idx, MPI_STATUS_IGNORE);
    CHECK_EQ(idx, MPI_UNDEFINED);
    free(vals), free(seen), free(rq);
  } else {
    int v = 1000 + rank;
    MPI_Request r;
    int flag = 0;
    MPI_Isend(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &r);
    while (!flag) MPI_Testall(1, &r, &flag, MPI_STATUSES_IGNORE);
    CHECK_EQ(r, MPI_REQUEST_NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void modes_and_types(int rank, int size) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  /* Sendrecv around the ring, and Ssend to the right with a matching receive from the left
   * (even ranks send first, so it cannot deadlock). */
  int out = rank, in = -1;
  MPI_Sendrecv(&out, 1, MPI_INT, right, 5, &in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(in, left);
  if (rank % 2 == 0) {
    MPI_Ssend(&out, 1, MPI_INT, right, 6, MPI_COMM_WORLD);
    if (!(size % 2 == 1 && rank == 0)) MPI_Recv(&in, 1, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&in, 1, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ssend(&out, 1, MPI_INT, right, 6, MPI_COMM_WORLD);
  }
  if (size % 2 == 1 && rank == 0) MPI_Recv(&in, 1, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(in, left);
  /* MPI_PROC_NULL: completes at once, status source MPI_PROC_NULL, count 0. */
  MPI_Status st;
  int n = -1;
  MPI_Recv(&in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
  MPI_Send(&out, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK_EQ(n, 0);
  /* A vector type (every other int of 2 x 4) goes out as 4 ints and lands in a contiguous buffer;
   * a contiguous type of 3 ints counts elements of 3. */
  MPI_Datatype every_other, triple;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  int sz = 0;
  MPI_Type_size(every_other, &sz);
  CHECK_EQ(sz, 16);
  int src[8], dst[8] = {0}, got[6];
  for (int i = 0; i < 8; ++i) src[i] = 10 * rank + i;
  MPI_Sendrecv(src, 1, every_other, right, 8, dst, 4, MPI_INT, left, 8, MPI_COMM_WORLD, &st);
  for (int i = 0; i < 4; ++i) CHECK_EQ(dst[i], 10 * left + 2 * i);
  MPI_Get_count(&st, triple, &n);
  CHECK_EQ(n, MPI_UNDEFINED); /* 4 ints are not a whole number of triples */
  /* ... and receiving into the vector type scatters the ints back to every other slot. */
  int back[8];
  for (int i = 0; i < 8; ++i) back[i] = -1;
  MPI_Sendrecv(dst, 4, MPI_INT, left, 9, back, 1, every_other, right, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < 8; ++i) CHECK_EQ(back[i], i % 2 ? -1 : 10 * rank + i);
  MPI_Sendrecv(src, 2, triple, right, 10, got, 6, MPI_INT, left, 10, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, triple, &n);
  CHECK_EQ(n, 2);
  CHECK_EQ(got[5], 10 * left + 5);
  MPI_Type_free(&every_other);
  MPI_Type_free(&triple);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void some_and_any(int rank, int size) {
  /* Every other rank sends two ints to rank 0, which completes the receives with MPI_Waitsome,
   * then with MPI_Testsome and MPI_Testany polling: every index exactly once. */
  int n = size - 1;
  if (rank != 0) {
    int v[2] = {rank, 2 * rank};
    MPI_Send(v, 2, MPI_INT, 0, 11, MPI_COMM_WORLD);
    MPI_Send(v, 2, MPI_INT, 0, 12, MPI_COMM_WORLD);
    MPI_Send(v, 2, MPI_INT, 0, 13, MPI_COMM_WORLD);
  } else {
    int* vals;
    MPI_Alloc_mem((MPI_Aint)(sizeof(int) * 2 * (size_t)n), MPI_INFO_NULL, &vals);
    int* seen = calloc((size_t)n, sizeof(int));
    int* idx = malloc(sizeof(int) * (size_t)n);
    MPI_Status* st = malloc(sizeof(MPI_Status) * (size_t)n);
    MPI_Request* rq = malloc(sizeof(MPI_Request) * (size_t)n);
    for (int tag = 11; tag <= 12; ++tag) {
      for (int i = 0; i < n; ++i) MPI_Irecv(&vals[2 * i], 2, MPI_INT, i + 1, tag, MPI_COMM_WORLD, &rq[i]);
      int done = 0, out = 0;
      while (done < n) {
        if (tag == 11) MPI_Waitsome(n, rq, &out, idx, st);
        else MPI_Testsome(n, rq, &out, idx, st);
        CHECK(out >= (tag == 11 ? 1 : 0));
        for (int k = 0; k < out; ++k) {
          CHECK(!seen[idx[k]]);
          seen[idx[k]] = tag;
          CHECK_EQ(vals[2 * idx[k] + 1], 2 * (idx[k] + 1));
          CHECK_EQ(st[k].MPI_SOURCE, idx[k] + 1);
          int elems = -1;
          MPI_Get_elements(&st[k], MPI_INT, &elems);
          CHECK_EQ(elems, 2);
          ++done;
        }
      }
      MPI_Waitsome(n, rq, &out, idx, st);
      CHECK_EQ(out, MPI_UNDEFINED);
      for (int i = 0; i < n; ++i) {
        CHECK_EQ(seen[i], tag);
        seen[i] = 0;
      }
    }
    for (int i = 0; i < n; ++i) MPI_Irecv(&vals[2 * i], 2, MPI_INT, i + 1, 13, MPI_COMM_WORLD, &rq[i]);
    for (int done = 0; done < n;) {
      int index = -5, flag = 0;
      MPI_Testany(n, rq, &index, &flag, MPI_STATUS_IGNORE);
      if (!flag) continue;
      CHECK(index >= 0 && index < n && !seen[index]);
      seen[index] = 1;
      ++done;
    }
    int index = -5, flag = 0;
    MPI_Testany(n, rq, &index, &flag, MPI_STATUS_IGNORE);
    CHECK(flag);
    CHECK_EQ(index, MPI_UNDEFINED);
    MPI_Free_mem(vals);
    free(seen), free(idx), free(st), free(rq);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  int rank, size;
  init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 3);
  order_and_wildcards(rank, size);
  probe_and_count(rank, size);
  waitany_testall(rank, size);
  modes_and_types(rank, size);
  some_and_any(rank, size);
  return all_checks_passed("p2p");
}
