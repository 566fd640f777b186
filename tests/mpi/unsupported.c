/* Calls an MPI function Touchstone does not provide: linking it must fail, naming the function. */
#include <mpi.h>
#include <stddef.h>

int MPI_T_event_get_num(int* num_events);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int events = 0;
  MPI_T_event_get_num(&events);
  MPI_Finalize();
  return 0;
}
