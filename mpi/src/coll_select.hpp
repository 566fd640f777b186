// The decision rules of real MPI libraries (`mpirun --coll-selector mpich|ompi`, docs/cli.md):
// which of the catalog's algorithms MPICH and Open MPI would run for a call. Internal.
#pragma once
#include <cstddef>
#include <string>

namespace touchstone::mpi {

/// What a decision rule sees of a collective call.
struct CallShape {
  int size = 1;           ///< the communicator's processes
  std::size_t bytes = 0;  ///< bcast, reductions: the message or vector; allgather, alltoall: one rank's block;
                          ///< reduce_scatter: the whole vector
  std::size_t count = 0;  ///< reductions: elements of the vector
  bool commutative = true;
  bool builtin_op = true;  ///< a predefined MPI_Op (MPICH splits only those)
  bool in_place = false;   ///< alltoall with MPI_IN_PLACE
};

/// The selectors `--coll-selector` accepts, besides "default".
inline bool known_selector(const std::string& s) { return s.empty() || s == "default" || s == "mpich" || s == "ompi"; }

/// The algorithm (a name under `collective`/ in the catalog, or "machine" for the barrier) the
/// selector picks for a call of `collective` ("bcast", "reduce", "allreduce", "reduce_scatter",
/// "allgather", "alltoall", "barrier", "scan", "exscan"), or "" when it has no rule for it.
std::string select_algorithm(const std::string& selector, const std::string& collective, const CallShape& call);

}  // namespace touchstone::mpi
