/* Windows for the one-sided communication tests. */
#ifndef TOUCHSTONE_TEST_MPI_RMA_WINDOW_H
#define TOUCHSTONE_TEST_MPI_RMA_WINDOW_H
#include <mpi.h>
#include <string.h>

/* A window of `bytes` bytes on every rank of comm, all zero, with displacement unit disp_unit
 * (MPI_Win_allocate): the start of most tests. Returns its memory. */
static inline void* zeroed_window(MPI_Comm comm, MPI_Aint bytes, int disp_unit, MPI_Win* win) {
  void* mem;
  MPI_Win_allocate(bytes, disp_unit, MPI_INFO_NULL, comm, &mem, win);
  memset(mem, 0, (size_t)bytes);
  return mem;
}

#endif
