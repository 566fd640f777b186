/* The payload floor of the peer comparison (docs/performance.md): what the Figure-9 workload's data
 * movement alone costs on this host, with no emulation. The same loop as the SMPI baseline's
 * alltoall.c (256 ranks, L = 16 .. argv[1] doubling, a p*L send and receive buffer per rank
 * allocated and freed at every L, the send buffer filled byte by byte), with MPI_Alltoall replaced
 * by the one copy of every block into its receiver's buffer that any emulator moving real payloads
 * makes. The allocator keeps freed memory for the next L (Touchstone's settings, cli/main.cpp), so
 * only the largest L's buffers are first touched; compiled with -O3, the fill is vectorised. Neither
 * SMPI nor Touchstone can do this workload in less host CPU than this program. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  enum { p = 256 };
  const size_t maxL = argc > 1 ? (size_t)atol(argv[1]) : 16384;
  char* s[p];
  char* r[p];
  unsigned long sum = 0;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, -1);
  for (size_t L = 16; L <= maxL; L *= 2) {
    for (int i = 0; i < p; ++i) {
      s[i] = malloc(L * p);
      r[i] = malloc(L * p);
      if (!s[i] || !r[i]) { fprintf(stderr, "payload_floor: out of memory\n"); return 1; }
      for (size_t k = 0; k < L * p; ++k) s[i][k] = (char)(i + k);
    }
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) memcpy(r[j] + (size_t)i * L, s[i] + (size_t)j * L, L);
    for (int i = 0; i < p; ++i) {
      sum += (unsigned char)r[i][L];  /* keeps the copies from being optimised away */
      free(s[i]);
      free(r[i]);
    }
  }
  printf("payload floor: 256 ranks, L = 16 .. %zu, checksum %lu\n", maxL, sum);
  return 0;
}
