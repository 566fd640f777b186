// The measured regions the ranks marked with MPI_Pcontrol (measure.cpp), summed over the run.
#pragma once
#include <string>

#include "state.hpp"
#include "touchstone/mpirun.hpp"

namespace touchstone::mpi {

/// The run's measured regions; when the ranks marked them inconsistently (different counts, a
/// region never ended), none, and `problem` says why.
MeasuredRegions measured_regions(const Session& s, std::string& problem);

}  // namespace touchstone::mpi
