// What the collectives (coll.cpp) share with the rest of the MPI interface (mpi.cpp). Internal.
#pragma once
#include <functional>

#include "state.hpp"

namespace touchstone::mpi {

Comm& comm_for(RankState& rs, MPI_Comm c);
const Type& datatype_for(RankState& rs, MPI_Datatype t);  ///< committed, else MpiError
void check_collective_root(const Comm& c, int root);
void check_collective_count(int count);
const UserOp* user_op(RankState& rs, MPI_Op op);  ///< nullptr for predefined or unknown ops
/// Runs body as MPI function `name` on communicator c, errors through c's error handler.
int run_call(const char* name, MPI_Comm c, const std::function<void(RankState&)>& body);

/// Checks a --coll selection: every collective known, every algorithm one of its own.
/// Throws UsageError naming the bad entry.
void check_selection(const std::map<std::string, std::string>& coll);

}  // namespace touchstone::mpi
