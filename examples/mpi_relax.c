/* A program that computes between exchanges: every rank relaxes its own vector of doubles twenty
 * times, then trades its edge values with its two ring neighbours (MPI_Irecv, MPI_Isend,
 * MPI_Waitall), ITERATIONS times, and every EVERY iterations says where it is. Its computing runs
 * between MPI calls, so on several host cores the ranks compute at once (docs/parallel.md, "The
 * programs of an instant"): the output, the times and the trace_hash are those of one core.
 * With a fourth argument `residual` every iteration also sums, over all ranks, how far the
 * relaxation moved their values (MPI_Allreduce), as an iterative solver checks its convergence,
 * and rank 0 prints that sum every EVERY iterations; the ranks then leave the allreduce one at a
 * time, and their computing gains far less from more cores (docs/parallel.md, "Programs that
 * leave a collective at instants of their own").
 * Build: touchstone-mpicc -O2 mpi_relax.c -o mpi_relax -lm (or touchstone_add_mpi_program);
 * run:   touchstone mpirun --machine torus:4x4 ./mpi_relax [POINTS [ITERATIONS [EVERY [residual]]]]
 * (default 2000 points, 8 iterations, every 4). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int points = argc > 1 ? atoi(argv[1]) : 2000, iterations = argc > 2 ? atoi(argv[2]) : 8,
            every = argc > 3 ? atoi(argv[3]) : 4;
  const int residual = argc > 4 && strcmp(argv[4], "residual") == 0;
  if (points < 3 || iterations < 1 || every < 1 || argc > 5 || (argc > 4 && !residual)) {
    if (rank == 0) fprintf(stderr, "usage: mpi_relax [POINTS>=3 [ITERATIONS>=1 [EVERY>=1 [residual]]]]\n");
    MPI_Finalize();
    return 1;
  }
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double* u = malloc(sizeof(double) * (size_t)points);
  double* v = malloc(sizeof(double) * (size_t)points);
  for (int i = 0; i < points; ++i) u[i] = v[i] = rank;
  for (int it = 1; it <= iterations; ++it) {
    const double before = u[points / 2];
    for (int sweep = 0; sweep < 20; ++sweep) {
      for (int i = 1; i + 1 < points; ++i) v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]) + 1e-9 * sqrt(u[i] + 1);
      double* t = u;
      u = v;
      v = t;
    }
    if (it % every == 0) printf("rank %d, iteration %d: middle %.12f\n", rank, it, u[points / 2]);
    double edge[2] = {u[1], u[points - 2]}, halo[2];
    MPI_Request q[4];
    MPI_Irecv(&halo[0], 1, MPI_DOUBLE, left, it, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(&halo[1], 1, MPI_DOUBLE, right, it, MPI_COMM_WORLD, &q[1]);
    MPI_Isend(&edge[0], 1, MPI_DOUBLE, left, it, MPI_COMM_WORLD, &q[2]);
    MPI_Isend(&edge[1], 1, MPI_DOUBLE, right, it, MPI_COMM_WORLD, &q[3]);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    u[0] = v[0] = halo[0];
    u[points - 1] = v[points - 1] = halo[1];
    if (residual) {
      double moved = fabs(u[points / 2] - before), total_moved = 0;
      MPI_Allreduce(&moved, &total_moved, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      if (rank == 0 && it % every == 0) printf("iteration %d: residual %.12e\n", it, total_moved);
    }
  }
  double mine = 0, total = 0;
  for (int i = 0; i < points; ++i) mine += u[i];
  MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("sum of every point %.9f at t=%.3f us\n", total, MPI_Wtime() * 1e6);
  free(u);
  free(v);
  MPI_Finalize();
  return 0;
}
