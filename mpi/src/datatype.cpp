// MPI datatypes and user reduction operations (docs/mpi.md); the type layouts and predefined
// operations themselves are in types.cpp.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "types.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Type_size(MPI_Datatype datatype, int* size) {
  return call("MPI_Type_size", MPI_COMM_WORLD, [&](RankState& rs) { *size = static_cast<int>(type_of(rs, datatype).size); });
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return call("MPI_Type_get_extent", MPI_COMM_WORLD, [&](RankState& rs) {
    *lb = 0;
    *extent = static_cast<MPI_Aint>(type_of(rs, datatype).extent);
  });
}

namespace {
int new_type(const char* name, int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call(name, MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    if (blocklength < 0) throw MpiError{MPI_ERR_ARG, fmt::format("block length {} is negative", blocklength)};
    if (stride < blocklength && count > 1)
      throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                     fmt::format("a vector whose stride ({}) is less than its block length ({}) is not supported", stride,
                                 blocklength)};
    const Type& old = type_of(rs, oldtype);
    rs.types.emplace_back(make_vector(count, blocklength, stride, old));
    *newtype = static_cast<MPI_Datatype>(kFirstDerivedType + rs.types.size() - 1);
  });
}
}  // namespace

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return new_type("MPI_Type_contiguous", 1, count, 1, oldtype, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return new_type("MPI_Type_vector", count, blocklength, stride, oldtype, newtype);
}

int MPI_Type_commit(MPI_Datatype* datatype) {
  return call("MPI_Type_commit", MPI_COMM_WORLD, [&](RankState& rs) {
    type_of(rs, *datatype);
    if (*datatype >= kFirstDerivedType) rs.types[static_cast<std::size_t>(*datatype - kFirstDerivedType)]->committed = true;
  });
}

int MPI_Type_free(MPI_Datatype* datatype) {
  return call("MPI_Type_free", MPI_COMM_WORLD, [&](RankState& rs) {
    type_of(rs, *datatype);
    if (*datatype < kFirstDerivedType) throw MpiError{MPI_ERR_TYPE, "a predefined datatype cannot be freed"};
    rs.types[static_cast<std::size_t>(*datatype - kFirstDerivedType)].reset();
    *datatype = MPI_DATATYPE_NULL;
  });
}

int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_elements", MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    const std::size_t base = t.base_count ? t.size / t.base_count : 0;  // bytes of one predefined element
    if (base == 0) *count = 0;
    else if (status->touchstone_bytes % base) *count = MPI_UNDEFINED;
    else *count = static_cast<int>(status->touchstone_bytes / base);
  });
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_count", MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    if (t.size == 0) *count = 0;
    else if (status->touchstone_bytes % t.size) *count = MPI_UNDEFINED;
    else *count = static_cast<int>(status->touchstone_bytes / t.size);
  });
}
int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return call("MPI_Op_create", MPI_COMM_WORLD, [&](RankState& rs) {
    rs.ops.emplace_back(UserOp{user_fn, commute != 0});
    *op = static_cast<MPI_Op>(kFirstUserOp + rs.ops.size() - 1);
  });
}

int MPI_Op_free(MPI_Op* op) {
  return call("MPI_Op_free", MPI_COMM_WORLD, [&](RankState& rs) {
    if (!user_op(rs, *op)) throw MpiError{MPI_ERR_OP, fmt::format("operation {} is not a user operation", *op)};
    rs.ops[static_cast<std::size_t>(*op - kFirstUserOp)].reset();
    *op = MPI_OP_NULL;
  });
}
