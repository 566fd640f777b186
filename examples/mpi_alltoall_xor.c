/* The catalog's alltoall/1-lev-xor (paper 000, section 5.1) written as an MPI program, message for
 * message: its own block is copied locally, then in permutation i = 1 .. p-1 every rank j with
 * partner i xor j < p posts the receive from its partner, then the send to it, and waits for both
 * before the next permutation. The all-to-all is the measured region (MPI_Pcontrol(1) ...
 * MPI_Pcontrol(0)); it begins right after MPI_Init, at one instant on every rank, as the catalog's
 * run begins, so `touchstone sweep` shows it beside alltoall/1-lev-xor with the same makespan
 * (docs/benchmarking.md). It checks what it received and exits 1 on a wrong byte.
 *
 * Build: touchstone-mpicc mpi_alltoall_xor.c -o mpi_alltoall_xor
 * Run:   touchstone sweep --program ./mpi_alltoall_xor --args '{size}' --sizes 16:256 --machine mesh:16x16 \
 *          --algorithms alltoall/1-lev-xor */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The byte that rank `from` sends rank `to` at offset k of their block. */
static char pattern(int from, int to, size_t k) { return (char)(from * 31 + to * 7 + (int)k); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long given = argc > 1 ? atol(argv[1]) : 0;
  if (given <= 0 || given > (1L << 26)) {
    if (rank == 0) fprintf(stderr, "usage: mpi_alltoall_xor BYTES (the block each rank sends each other rank)\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const size_t L = (size_t)given;
  char* send = malloc(L * (size_t)p);
  char* recv = malloc(L * (size_t)p);
  for (int to = 0; to < p; ++to)
    for (size_t k = 0; k < L; ++k) send[(size_t)to * L + k] = pattern(rank, to, k);

  MPI_Pcontrol(1);
  memcpy(recv + (size_t)rank * L, send + (size_t)rank * L, L);
  int pow2 = 1;
  while (pow2 < p) pow2 *= 2;
  for (int i = 1; i < pow2; ++i) {
    const int partner = rank ^ i;
    if (partner >= p) continue; /* no partner in this permutation: the catalog skips it too */
    MPI_Request reqs[2];
    MPI_Irecv(recv + (size_t)partner * L, (int)L, MPI_BYTE, partner, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(send + (size_t)partner * L, (int)L, MPI_BYTE, partner, 0, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  }
  MPI_Pcontrol(0);

  int wrong = 0;
  for (int from = 0; from < p && !wrong; ++from)
    for (size_t k = 0; k < L; ++k)
      if (recv[(size_t)from * L + k] != pattern(from, rank, k)) {
        fprintf(stderr, "rank %d: byte %zu from rank %d is wrong\n", rank, k, from);
        wrong = 1;
        break;
      }
  free(send);
  free(recv);
  MPI_Finalize();
  return wrong;
}
