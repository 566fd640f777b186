// MPI_Info objects (info.cpp), for the calls that take or return one. Internal.
#pragma once
#include "state.hpp"

namespace touchstone::mpi {

/// The pairs of info handle `info` (MPI_INFO_NULL: none); MpiError MPI_ERR_INFO when it is not valid.
const InfoPairs& info_of(RankState& rs, MPI_Info info);
/// A new info handle holding `pairs`.
MPI_Info new_info(RankState& rs, InfoPairs pairs);

}  // namespace touchstone::mpi
