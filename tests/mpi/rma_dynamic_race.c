/* A dynamic window whose target attaches or detaches memory while an origin puts into it, with no
 * message between the two: an erroneous program (the origin cannot know whether the memory is
 * attached), whose outcome the order of the two calls decides. On mesh:1x4, after the barrier,
 * rank 3 acts before rank 1 and after rank 0:
 *   detach_before_put   rank 3 detaches, then rank 1 puts: MPI_ERR_RMA_RANGE
 *   put_before_detach   rank 0 puts, then rank 3 detaches: the put is accepted
 *   attach_before_put   rank 3 attaches again, then rank 1 puts: accepted
 *   put_before_attach   rank 0 puts, then rank 3 attaches again: MPI_ERR_RMA_RANGE
 * With "_returns" after the mode the window returns errors to the calls (MPI_ERRORS_RETURN) and the
 * origin prints what its put returned. In a run split over processes the target is in another
 * process than the origin (docs/parallel.md, "Failures a layer finds at the window's end"). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "";
  const int detach = strstr(mode, "detach") != NULL;
  const int origin = strstr(mode, "_put") ? 1 : 0, target = 3;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (strstr(mode, "_returns")) MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  int buf[4] = {0, 0, 0, 0}, v = 7;
  MPI_Win_attach(win, buf, sizeof buf);
  MPI_Aint addr;
  MPI_Get_address(buf, &addr);
  MPI_Bcast(&addr, 1, MPI_AINT, target, MPI_COMM_WORLD);
  if (!detach && rank == target) MPI_Win_detach(win, buf);
  MPI_Win_lock_all(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == target) {
    if (detach)
      MPI_Win_detach(win, buf);
    else
      MPI_Win_attach(win, buf, sizeof buf);
  }
  if (rank == origin) {
    const int err = MPI_Put(&v, 1, MPI_INT, target, addr, 1, MPI_INT, win);
    if (err == MPI_SUCCESS) {
      printf("rank %d put into rank %d\n", rank, target);
    } else {
      int class;
      MPI_Error_class(err, &class);
      printf("rank %d's put into rank %d returned %s\n", rank, target,
             class == MPI_ERR_RMA_RANGE ? "MPI_ERR_RMA_RANGE" : "another error");
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == target && !detach) MPI_Win_detach(win, buf);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
