/* MPI-IO (MPI-3.1 chapter 13): files opened collectively, explicit offsets, views interleaving the
 * ranks, the individual and the shared file pointers, nonblocking and split collective accesses,
 * reads past the end of file, error classes and file error handlers, and a file of each half of the
 * world. Every byte of every file is checked against contents computed by hand.
 *   file_io [DIR] [--no-shared] [fatal]
 * DIR is where the files go (default "."): a directory of the test's own, so that tests run at
 * once never share a file; each case deletes its file first, so a run after another starts clean.
 * --no-shared skips MPI_File_write_shared/read_shared (their own case), for runs that may refuse
 * them. "fatal" makes rank 1 open a missing file under MPI_ERRORS_ARE_FATAL: the run must end
 * with a report naming MPI_File_open and the file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"

enum { kInts = 6, kView = 5, kHeader = 3, kMaxRanks = 64, kPath = 1024 };

static int rank, size;
static const char* dir = ".";

/* The path of file `name` in the test's directory. */
static void file_path(char* out, const char* name) { snprintf(out, kPath, "%s/%s", dir, name); }

/* The path of file `name`, which no longer exists when every rank of comm has it: a file left by an
 * earlier run would change sizes and contents. Only one rank deletes, since deleting is not
 * collective and the others would find the file gone. */
static void fresh(MPI_Comm comm, const char* name, char* out) {
  int r;
  MPI_Comm_rank(comm, &r);
  file_path(out, name);
  if (r == 0) MPI_File_delete(out, MPI_INFO_NULL); /* MPI_ERR_NO_SUCH_FILE when absent: fine */
  MPI_Barrier(comm);
}

/* What writes by other processes need before a read sees them, in MPI's default nonatomic mode
 * (MPI-3.1 13.6.1): sync, barrier, sync. */
static void sync_barrier_sync(MPI_File fh, MPI_Comm comm) {
  CHECK_EQ(MPI_File_sync(fh), MPI_SUCCESS);
  MPI_Barrier(comm);
  CHECK_EQ(MPI_File_sync(fh), MPI_SUCCESS);
}

static int count_of(MPI_Status* st, MPI_Datatype type) {
  int n = -1;
  CHECK_EQ(MPI_Get_count(st, type, &n), MPI_SUCCESS);
  return n;
}

static MPI_Offset position(MPI_File fh) {
  MPI_Offset p = -1;
  CHECK_EQ(MPI_File_get_position(fh, &p), MPI_SUCCESS);
  return p;
}

static MPI_Offset shared_position(MPI_File fh) {
  MPI_Offset p = -1;
  CHECK_EQ(MPI_File_get_position_shared(fh, &p), MPI_SUCCESS);
  return p;
}

static MPI_Offset file_size(MPI_File fh) {
  MPI_Offset s = -1;
  CHECK_EQ(MPI_File_get_size(fh, &s), MPI_SUCCESS);
  return s;
}

static int error_class(int code) {
  int c = -1;
  MPI_Error_class(code, &c);
  return c;
}

/* comm's ranks open file p, which must succeed. */
static MPI_File open_file(MPI_Comm comm, const char* p, int amode) {
  MPI_File fh = MPI_FILE_NULL;
  CHECK_EQ(MPI_File_open(comm, p, amode, MPI_INFO_NULL, &fh), MPI_SUCCESS);
  CHECK(fh != MPI_FILE_NULL);
  return fh;
}

/* The error class of MPI_COMM_WORLD's opening file p, which must fail. */
static int open_fails(const char* p, int amode) {
  MPI_File fh = MPI_FILE_NULL;
  return error_class(MPI_File_open(MPI_COMM_WORLD, p, amode, MPI_INFO_NULL, &fh));
}

/* The value rank r writes as the i-th int of its block in region k of a file. */
static int stamp(int k, int r, int i) { return 1000000 * k + 1000 * r + i; }

static void done(const char* what) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("file_io: %s: ok\n", what);
}

/* Case 1: each rank's block at an explicit offset, read back by the next rank. */
static void explicit_offsets(void) {
  char p[kPath];
  fresh(MPI_COMM_WORLD, "offsets.dat", p);
  MPI_File fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR);
  int out[kInts], in[kInts];
  for (int i = 0; i < kInts; ++i) out[i] = stamp(1, rank, i);
  MPI_Status st;
  /* The default view is of bytes: offsets count bytes. */
  CHECK_EQ(MPI_File_write_at(fh, (MPI_Offset)rank * kInts * sizeof(int), out, kInts, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), kInts);
  sync_barrier_sync(fh, MPI_COMM_WORLD);
  const int next = (rank + 1) % size;
  CHECK_EQ(MPI_File_read_at(fh, (MPI_Offset)next * kInts * sizeof(int), in, kInts, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), kInts);
  for (int i = 0; i < kInts; ++i) CHECK_EQ(in[i], stamp(1, next, i));
  CHECK_EQ(file_size(fh), (MPI_Offset)size * kInts * sizeof(int));
  CHECK_EQ(position(fh), 0); /* explicit offsets leave the individual pointer alone */
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  CHECK(fh == MPI_FILE_NULL);
  done("explicit offsets");
}

/* Case 2: a view in which rank r owns ints r, r+size, r+2*size, ... after a header of kHeader ints,
 * written with collective writes through the individual pointer, then read back whole through the
 * default view of a new handle. */
static void views(void) {
  char p[kPath];
  fresh(MPI_COMM_WORLD, "views.dat", p);
  MPI_File fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR);
  const int header[kHeader] = {-1, -2, -3};
  MPI_Status st;
  if (rank == 0) CHECK_EQ(MPI_File_write_at(fh, 0, header, kHeader, MPI_INT, &st), MPI_SUCCESS);
  /* One int at displacement r within an extent of size ints: the filetype tiles the file. */
  MPI_Datatype one, filetype;
  MPI_Type_create_indexed_block(1, 1, &rank, MPI_INT, &one);
  MPI_Type_create_resized(one, 0, (MPI_Aint)size * sizeof(int), &filetype);
  MPI_Type_commit(&filetype);
  MPI_Type_free(&one);
  const MPI_Offset disp = kHeader * sizeof(int);
  CHECK_EQ(MPI_File_set_view(fh, disp, MPI_INT, filetype, "native", MPI_INFO_NULL), MPI_SUCCESS);
  CHECK_EQ(position(fh), 0);
  int out[kView];
  for (int i = 0; i < kView; ++i) out[i] = stamp(2, rank, i);
  /* Two calls: the second goes on where the first left the individual pointer. */
  CHECK_EQ(MPI_File_write_all(fh, out, 2, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), 2);
  CHECK_EQ(position(fh), 2); /* in etypes of the view */
  CHECK_EQ(MPI_File_write_all(fh, out + 2, kView - 2, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), kView - 2);
  CHECK_EQ(position(fh), kView);
  /* The byte of view position k: the header, k whole filetypes, then the rank's hole. */
  MPI_Offset byte = -1;
  CHECK_EQ(MPI_File_get_byte_offset(fh, kView, &byte), MPI_SUCCESS);
  CHECK_EQ(byte, disp + ((MPI_Offset)kView * size + rank) * (MPI_Offset)sizeof(int));
  CHECK_EQ(MPI_File_get_byte_offset(fh, 0, &byte), MPI_SUCCESS);
  CHECK_EQ(byte, disp + rank * (MPI_Offset)sizeof(int));

  MPI_Offset got_disp = -1;
  MPI_Datatype etype = MPI_DATATYPE_NULL, got_filetype = MPI_DATATYPE_NULL;
  char rep[MPI_MAX_DATAREP_STRING];
  CHECK_EQ(MPI_File_get_view(fh, &got_disp, &etype, &got_filetype, rep), MPI_SUCCESS);
  CHECK_EQ(got_disp, disp);
  CHECK(etype == MPI_INT);
  CHECK_EQ(strcmp(rep, "native"), 0);
  int ni, na, nd, combiner = -1;
  MPI_Type_get_envelope(got_filetype, &ni, &na, &nd, &combiner);
  CHECK(combiner != MPI_COMBINER_NAMED); /* a new derived type, the program's to free */
  int tsize = -1;
  MPI_Aint lb = -1, extent = -1;
  MPI_Type_size(got_filetype, &tsize);
  MPI_Type_get_extent(got_filetype, &lb, &extent);
  CHECK_EQ(tsize, sizeof(int));
  CHECK_EQ(lb, 0);
  CHECK_EQ(extent, (MPI_Aint)size * sizeof(int));
  MPI_Type_free(&got_filetype);

  /* Seeks count etypes of the view. The end of file, in it, is position kView for every rank: each
   * rank's kView ints lie before the file's end, and its next int would lie past it. */
  sync_barrier_sync(fh, MPI_COMM_WORLD);
  CHECK_EQ(file_size(fh), disp + (MPI_Offset)size * kView * sizeof(int));
  int v = -1;
  CHECK_EQ(MPI_File_seek(fh, 2, MPI_SEEK_SET), MPI_SUCCESS);
  CHECK_EQ(position(fh), 2);
  CHECK_EQ(MPI_File_seek(fh, 1, MPI_SEEK_CUR), MPI_SUCCESS);
  CHECK_EQ(position(fh), 3);
  CHECK_EQ(MPI_File_read(fh, &v, 1, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(v, stamp(2, rank, 3));
  CHECK_EQ(position(fh), 4);
  CHECK_EQ(MPI_File_seek(fh, -1, MPI_SEEK_END), MPI_SUCCESS);
  CHECK_EQ(position(fh), kView - 1);
  CHECK_EQ(MPI_File_read(fh, &v, 1, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(v, stamp(2, rank, kView - 1));
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  MPI_Type_free(&filetype); /* only now: whether a view outlives its types is left to the implementation */

  /* A new handle has the default view (bytes from 0): every rank reads the whole file. */
  fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_RDONLY);
  CHECK_EQ(MPI_File_get_view(fh, &got_disp, &etype, &got_filetype, rep), MPI_SUCCESS);
  CHECK_EQ(got_disp, 0);
  CHECK(etype == MPI_BYTE);
  CHECK(got_filetype == MPI_BYTE); /* predefined: not freed */
  CHECK_EQ(strcmp(rep, "native"), 0);
  const int total = kHeader + size * kView;
  int whole[kHeader + kMaxRanks * kView];
  CHECK_EQ(MPI_File_read_all(fh, whole, total, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), total);
  CHECK_EQ(position(fh), total * (MPI_Offset)sizeof(int)); /* bytes, now */
  for (int i = 0; i < kHeader; ++i) CHECK_EQ(whole[i], header[i]);
  for (int m = 0; m < size * kView; ++m) CHECK_EQ(whole[kHeader + m], stamp(2, m % size, m / size));
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  done("views");
}

/* Cases 3 and 7: rank r of comm writes r+1 ints of value r in rank order through the shared
 * pointer, so the file is 0,1,1,2,2,2,...; then reads its own part back in order. */
static void ordered(MPI_Comm comm, const char* name) {
  int r, n;
  rank_and_size(comm, &r, &n);
  char p[kPath];
  fresh(comm, name, p);
  MPI_File fh = open_file(comm, p, MPI_MODE_CREATE | MPI_MODE_RDWR);
  /* A view of ints, so that the shared pointer counts ints (setting a view resets it to 0). */
  CHECK_EQ(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
  CHECK_EQ(shared_position(fh), 0);
  MPI_Barrier(comm); /* before any rank moves it: a collective call need not synchronize */
  int out[kMaxRanks], in[kMaxRanks];
  for (int i = 0; i <= r; ++i) out[i] = r;
  MPI_Status st;
  CHECK_EQ(MPI_File_write_ordered(fh, out, r + 1, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), r + 1);
  const int total = n * (n + 1) / 2;
  CHECK_EQ(shared_position(fh), total); /* every rank's part is written when the collective returns */
  CHECK_EQ(position(fh), 0);            /* the individual pointer did not move */
  sync_barrier_sync(fh, comm);
  CHECK_EQ(file_size(fh), total * (MPI_Offset)sizeof(int));

  CHECK_EQ(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
  CHECK_EQ(shared_position(fh), 0);
  MPI_Barrier(comm);
  for (int i = 0; i <= r; ++i) in[i] = -1;
  CHECK_EQ(MPI_File_read_ordered(fh, in, r + 1, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), r + 1);
  for (int i = 0; i <= r; ++i) CHECK_EQ(in[i], r);
  CHECK_EQ(shared_position(fh), total);

  int whole[kMaxRanks * (kMaxRanks + 1) / 2];
  CHECK_EQ(MPI_File_read_at(fh, 0, whole, total, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), total);
  for (int v = 0, m = 0; v < n; ++v)
    for (int i = 0; i <= v; ++i, ++m) CHECK_EQ(whole[m], v);
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
}

/* Case 3's independent shared-pointer accesses, in a case of their own for runs that skip them:
 * one int per rank, in whatever order the ranks come; each value once in the file, and read once. */
static void shared_accesses(void) {
  char p[kPath];
  fresh(MPI_COMM_WORLD, "shared.dat", p);
  MPI_File fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR);
  CHECK_EQ(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
  const int mine = stamp(3, rank, 0);
  MPI_Status st;
  CHECK_EQ(MPI_File_write_shared(fh, &mine, 1, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), 1);
  sync_barrier_sync(fh, MPI_COMM_WORLD);
  CHECK_EQ(shared_position(fh), size);
  int whole[kMaxRanks], seen[kMaxRanks] = {0};
  CHECK_EQ(MPI_File_read_at(fh, 0, whole, size, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), size);
  for (int i = 0; i < size; ++i) {
    const int r = (whole[i] - stamp(3, 0, 0)) / 1000;
    CHECK(r >= 0 && r < size && whole[i] == stamp(3, r, 0));
    CHECK_EQ(seen[r]++, 0);
  }
  /* Every rank has checked the pointer before any sets it, and has set it before any reads. */
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  int got = -1;
  CHECK_EQ(MPI_File_read_shared(fh, &got, 1, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), 1);
  int all[kMaxRanks];
  MPI_Allgather(&got, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; ++i) seen[i] = 0;
  for (int i = 0; i < size; ++i) {
    const int r = (all[i] - stamp(3, 0, 0)) / 1000;
    CHECK(r >= 0 && r < size && all[i] == stamp(3, r, 0));
    CHECK_EQ(seen[r]++, 0);
  }
  CHECK_EQ(shared_position(fh), size); /* after the allgather: every rank has read */
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  done("shared file pointer");
}

/* Case 4: nonblocking accesses (completed by MPI_Wait and by MPI_Test) and split collectives, in
 * three regions of the file: region k holds each rank's kInts ints at byte (k*size + r) * kInts * 4. */
static void nonblocking(void) {
  char p[kPath];
  fresh(MPI_COMM_WORLD, "nonblocking.dat", p);
  MPI_File fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR);
  const MPI_Offset block = kInts * sizeof(int);
  const int next = (rank + 1) % size;
  int out[kInts], in[kInts];
  MPI_Request req;
  MPI_Status st;
  int flag = 0;

  for (int i = 0; i < kInts; ++i) out[i] = stamp(4, rank, i);
  CHECK_EQ(MPI_File_iwrite_at(fh, rank * block, out, kInts, MPI_INT, &req), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&req, &st), MPI_SUCCESS);
  CHECK(req == MPI_REQUEST_NULL);
  CHECK_EQ(count_of(&st, MPI_INT), kInts);
  sync_barrier_sync(fh, MPI_COMM_WORLD);
  for (int i = 0; i < kInts; ++i) in[i] = -1;
  CHECK_EQ(MPI_File_iread_at(fh, next * block, in, kInts, MPI_INT, &req), MPI_SUCCESS);
  for (long tries = 0; !flag && tries < 1000000; ++tries) CHECK_EQ(MPI_Test(&req, &flag, &st), MPI_SUCCESS);
  CHECK(flag);
  CHECK_EQ(count_of(&st, MPI_INT), kInts);
  for (int i = 0; i < kInts; ++i) CHECK_EQ(in[i], stamp(4, next, i));

  /* Region 1 through a view that starts at the rank's block: the individual pointer moves. */
  for (int i = 0; i < kInts; ++i) out[i] = stamp(5, rank, i);
  CHECK_EQ(MPI_File_set_view(fh, (size + rank) * block, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
  CHECK_EQ(MPI_File_iwrite_all(fh, out, kInts, MPI_INT, &req), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&req, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), kInts);
  CHECK_EQ(position(fh), kInts);
  sync_barrier_sync(fh, MPI_COMM_WORLD);
  CHECK_EQ(MPI_File_set_view(fh, (size + next) * block, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
  for (int i = 0; i < kInts; ++i) in[i] = -1;
  CHECK_EQ(MPI_File_iread_all(fh, in, kInts, MPI_INT, &req), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&req, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), kInts);
  for (int i = 0; i < kInts; ++i) CHECK_EQ(in[i], stamp(5, next, i));
  CHECK_EQ(position(fh), kInts);

  /* Region 2: split collectives, an explicit offset in bytes of the default view, then the
   * individual pointer of a view at the next rank's block. */
  CHECK_EQ(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
  for (int i = 0; i < kInts; ++i) out[i] = stamp(6, rank, i);
  CHECK_EQ(MPI_File_write_at_all_begin(fh, (2 * size + rank) * block, out, kInts, MPI_INT), MPI_SUCCESS);
  CHECK_EQ(MPI_File_write_at_all_end(fh, out, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), kInts);
  sync_barrier_sync(fh, MPI_COMM_WORLD);
  CHECK_EQ(MPI_File_set_view(fh, (2 * size + next) * block, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
  for (int i = 0; i < kInts; ++i) in[i] = -1;
  CHECK_EQ(MPI_File_read_all_begin(fh, in, kInts, MPI_INT), MPI_SUCCESS);
  CHECK_EQ(MPI_File_read_all_end(fh, in, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), kInts);
  for (int i = 0; i < kInts; ++i) CHECK_EQ(in[i], stamp(6, next, i));
  CHECK_EQ(position(fh), kInts);
  CHECK_EQ(file_size(fh), 3 * size * block);
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  done("nonblocking and split collective");
}

/* Case 5: a file of 6 ints; a read of 10 ints where 4 remain reads 4 and leaves the rest of the
 * buffer as it was; at the end of file a read reads nothing. */
static void past_the_end(void) {
  char p[kPath];
  fresh(MPI_COMM_WORLD, "eof.dat", p);
  MPI_File fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR);
  const int six[6] = {10, 11, 12, 13, 14, 15};
  MPI_Status st;
  /* Rank 0 writes them all; the others take part in the collective with nothing. */
  CHECK_EQ(MPI_File_write_at_all(fh, 0, six, rank == 0 ? 6 : 0, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), rank == 0 ? 6 : 0);
  sync_barrier_sync(fh, MPI_COMM_WORLD);
  CHECK_EQ(file_size(fh), sizeof six);
  int buf[10];
  for (int i = 0; i < 10; ++i) buf[i] = -7;
  CHECK_EQ(MPI_File_read_at(fh, 2 * sizeof(int), buf, 10, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), 4);
  for (int i = 0; i < 10; ++i) CHECK_EQ(buf[i], i < 4 ? 12 + i : -7);
  /* Through the individual pointer. Where a short read leaves it is not asserted: "the next etype
   * after the last one that will be accessed" (MPI-3.1 13.4.3) is after what was read for ROMIO,
   * after what was asked for in Open MPI's OMPIO. */
  for (int i = 0; i < 10; ++i) buf[i] = -7;
  CHECK_EQ(MPI_File_seek(fh, 4 * sizeof(int), MPI_SEEK_SET), MPI_SUCCESS);
  CHECK_EQ(MPI_File_read(fh, buf, 10, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), 2);
  for (int i = 0; i < 10; ++i) CHECK_EQ(buf[i], i < 2 ? 14 + i : -7);
  CHECK_EQ(MPI_File_seek(fh, sizeof six, MPI_SEEK_SET), MPI_SUCCESS); /* the end of file */
  for (int i = 0; i < 10; ++i) buf[i] = -7;
  CHECK_EQ(MPI_File_read(fh, buf, 10, MPI_INT, &st), MPI_SUCCESS);
  CHECK_EQ(count_of(&st, MPI_INT), 0);
  for (int i = 0; i < 10; ++i) CHECK_EQ(buf[i], -7);
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  done("reads past the end of file");
}

/* Case 6: errors are returned (the default file error handler, MPI-3.1 13.7), each of its class. */
static void errors_returned(void) {
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  CHECK_EQ(MPI_File_get_errhandler(MPI_FILE_NULL, &eh), MPI_SUCCESS);
  CHECK(eh == MPI_ERRORS_RETURN);
  char missing[kPath], p[kPath];
  fresh(MPI_COMM_WORLD, "missing.dat", missing);
  CHECK_EQ(open_fails(missing, MPI_MODE_RDWR), MPI_ERR_NO_SUCH_FILE);
  /* A read-only file cannot be created; exactly one of RDONLY, WRONLY, RDWR. */
  CHECK_EQ(open_fails(missing, MPI_MODE_RDONLY | MPI_MODE_CREATE), MPI_ERR_AMODE);
  CHECK_EQ(open_fails(missing, MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE), MPI_ERR_AMODE);
  CHECK_EQ(error_class(MPI_File_delete(missing, MPI_INFO_NULL)), MPI_ERR_NO_SUCH_FILE);

  fresh(MPI_COMM_WORLD, "errors.dat", p);
  MPI_File fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY);
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  CHECK_EQ(open_fails(p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR), MPI_ERR_FILE_EXISTS);
  /* Writing a file opened read-only: the standard allows either class. */
  fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_RDONLY);
  MPI_Status st;
  const int c = error_class(MPI_File_write_at(fh, 0, &rank, 1, MPI_INT, &st));
  CHECK(c == MPI_ERR_READ_ONLY || c == MPI_ERR_ACCESS);
  CHECK_EQ(file_size(fh), 0);
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  done("errors returned");
}

static int handler_calls = 0, handler_code = MPI_SUCCESS;
static MPI_File handler_file = MPI_FILE_NULL;
static void count_errors(MPI_File* fh, int* code, ...) {
  ++handler_calls;
  handler_file = *fh;
  handler_code = *code;
}

/* Case 6: a file's own error handler, and MPI_FILE_NULL's: the one of MPI_File_open and of the
 * files opened while it is set. */
static void errhandlers(void) {
  MPI_Errhandler counting, eh;
  CHECK_EQ(MPI_File_create_errhandler(count_errors, &counting), MPI_SUCCESS);
  char p[kPath], missing[kPath];
  fresh(MPI_COMM_WORLD, "errhandler.dat", p);
  fresh(MPI_COMM_WORLD, "missing.dat", missing);
  MPI_File fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR);
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_RDONLY);
  CHECK_EQ(MPI_File_set_errhandler(fh, counting), MPI_SUCCESS);
  CHECK_EQ(MPI_File_get_errhandler(fh, &eh), MPI_SUCCESS);
  CHECK(eh == counting);
  MPI_Status st;
  const int code = MPI_File_write_at(fh, 0, &rank, 1, MPI_INT, &st);
  CHECK(code != MPI_SUCCESS); /* the handler returns, and so does the call, with the code */
  CHECK_EQ(handler_calls, 1);
  CHECK(handler_file == fh);
  CHECK_EQ(handler_code, code);
  CHECK_EQ(MPI_File_call_errhandler(fh, MPI_ERR_OTHER), MPI_SUCCESS);
  CHECK_EQ(handler_calls, 2);
  CHECK_EQ(handler_code, MPI_ERR_OTHER);
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);

  CHECK_EQ(MPI_File_set_errhandler(MPI_FILE_NULL, counting), MPI_SUCCESS);
  CHECK_EQ(MPI_File_get_errhandler(MPI_FILE_NULL, &eh), MPI_SUCCESS);
  CHECK(eh == counting);
  CHECK_EQ(open_fails(missing, MPI_MODE_RDONLY), MPI_ERR_NO_SUCH_FILE);
  CHECK_EQ(handler_calls, 3);
  CHECK(handler_file == MPI_FILE_NULL);
  CHECK_EQ(error_class(handler_code), MPI_ERR_NO_SUCH_FILE);
  /* A file opened now starts with MPI_FILE_NULL's handler (MPI-3.1 13.7). */
  fh = open_file(MPI_COMM_WORLD, p, MPI_MODE_RDONLY);
  CHECK_EQ(MPI_File_get_errhandler(fh, &eh), MPI_SUCCESS);
  CHECK(eh == counting);
  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  /* The other cases count on errors being returned. */
  CHECK_EQ(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), MPI_SUCCESS);
  CHECK_EQ(MPI_Errhandler_free(&counting), MPI_SUCCESS);
  CHECK_EQ(handler_calls, 3);
  done("file error handlers");
}

/* The file's size is `expected` at every rank before any changes it again: MPI_File_set_size and
 * MPI_File_preallocate are collective but need not synchronize. */
static void size_is(MPI_File fh, MPI_Offset expected) {
  CHECK_EQ(file_size(fh), expected);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Case 6: what a file handle tells, its size set and preallocated, and deletion on close. */
static void queries(void) {
  char p[kPath];
  fresh(MPI_COMM_WORLD, "queries.dat", p);
  const int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE;
  MPI_File fh = open_file(MPI_COMM_WORLD, p, amode);
  int got = -1;
  CHECK_EQ(MPI_File_get_amode(fh, &got), MPI_SUCCESS);
  CHECK_EQ(got, amode);
  MPI_Group group, world;
  CHECK_EQ(MPI_File_get_group(fh, &group), MPI_SUCCESS);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_compare(group, world, &got);
  CHECK_EQ(got, MPI_IDENT);
  MPI_Group_free(&group);
  MPI_Group_free(&world);

  /* Sizes: set_size truncates or extends; preallocate only extends. */
  size_is(fh, 0);
  CHECK_EQ(MPI_File_set_size(fh, 1000), MPI_SUCCESS);
  size_is(fh, 1000);
  CHECK_EQ(MPI_File_set_size(fh, 100), MPI_SUCCESS);
  size_is(fh, 100);
  CHECK_EQ(MPI_File_preallocate(fh, 400), MPI_SUCCESS);
  size_is(fh, 400);
  CHECK_EQ(MPI_File_preallocate(fh, 200), MPI_SUCCESS);
  size_is(fh, 400);

  MPI_Aint extent = -1;
  CHECK_EQ(MPI_File_get_type_extent(fh, MPI_INT, &extent), MPI_SUCCESS);
  CHECK_EQ(extent, sizeof(int));
  MPI_Datatype three;
  MPI_Type_contiguous(3, MPI_INT, &three);
  MPI_Type_commit(&three);
  CHECK_EQ(MPI_File_get_type_extent(fh, three, &extent), MPI_SUCCESS);
  CHECK_EQ(extent, 3 * sizeof(int));
  MPI_Type_free(&three);

  CHECK_EQ(MPI_File_get_atomicity(fh, &got), MPI_SUCCESS);
  CHECK_EQ(got, 0); /* nonatomic by default */
  CHECK_EQ(MPI_File_set_atomicity(fh, 1), MPI_SUCCESS);
  CHECK_EQ(MPI_File_get_atomicity(fh, &got), MPI_SUCCESS);
  CHECK(got);
  CHECK_EQ(MPI_File_set_atomicity(fh, 0), MPI_SUCCESS);
  CHECK_EQ(MPI_File_get_atomicity(fh, &got), MPI_SUCCESS);
  CHECK_EQ(got, 0);

  /* Hints: an implementation may ignore any, so the info used is only required to exist. */
  MPI_Info hints, used = MPI_INFO_NULL;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "access_style", "read_once,sequential");
  CHECK_EQ(MPI_File_set_info(fh, hints), MPI_SUCCESS);
  MPI_Info_free(&hints);
  CHECK_EQ(MPI_File_get_info(fh, &used), MPI_SUCCESS);
  CHECK(used != MPI_INFO_NULL);
  int nkeys = -1;
  CHECK_EQ(MPI_Info_get_nkeys(used, &nkeys), MPI_SUCCESS);
  CHECK(nkeys >= 0);
  MPI_Info_free(&used);

  CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh);

  CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank's close done: the file is deleted */
  CHECK_EQ(open_fails(p, MPI_MODE_RDONLY), MPI_ERR_NO_SUCH_FILE);
  done("file queries");
}

/* Case 7: each half of the world has a file of its own, written in order through its shared pointer. */
static void halves(void) {
  const int lower = rank < size / 2;
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, lower, rank, &half);
  ordered(half, lower ? "half_lower.dat" : "half_upper.dat");
  MPI_Comm_free(&half);
  done("halves of the world");
}

/* "fatal": rank 1 opens a missing file under MPI_ERRORS_ARE_FATAL, which ends the run. */
static int fatal_open(void) {
  if (rank == 1) {
    char p[kPath];
    file_path(p, "fatal_missing.dat");
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    printf("file_io: rank 1: MPI_File_open of a missing file returned\n");
  }
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv) {
  init_world(&argc, &argv, &rank, &size);
  CHECK(size <= kMaxRanks);
  int shared = 1, fatal = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--no-shared") == 0)
      shared = 0;
    else if (strcmp(argv[i], "fatal") == 0)
      fatal = 1;
    else
      dir = argv[i];
  }
  if (fatal) return fatal_open();
  /* The test's directory, should the build tree's not exist (a run by hand). */
  if (rank == 0 && mkdir(dir, 0777) != 0) CHECK(errno == EEXIST);
  MPI_Barrier(MPI_COMM_WORLD);

  explicit_offsets();
  views();
  ordered(MPI_COMM_WORLD, "ordered.dat");
  done("ordered accesses");
  if (shared) shared_accesses();
  nonblocking();
  past_the_end();
  errors_returned();
  errhandlers();
  queries();
  halves();
  return all_checks_passed("file_io");
}
