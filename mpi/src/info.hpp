// MPI_Info objects (info.cpp), for the calls that take or return one. Internal.
#pragma once
#include <string>

#include "state.hpp"

namespace touchstone::mpi {

/// The pairs of info handle `info` (MPI_INFO_NULL: none); MpiError MPI_ERR_INFO when it is not valid.
const InfoPairs& info_of(RankState& rs, MPI_Info info);
/// A new info handle holding `pairs`.
MPI_Info new_info(RankState& rs, InfoPairs pairs);
/// Sets key to value in pairs: a key set again keeps its place.
void set_info_value(InfoPairs& pairs, const std::string& key, const std::string& value);
/// Sets every key of `from` in `into` (MPI_Comm_set_info, MPI_Win_set_info).
void merge_info(InfoPairs& into, const InfoPairs& from);

}  // namespace touchstone::mpi
