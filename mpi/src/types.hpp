// Datatypes and predefined reduction operations of the MPI interface. Internal.
#pragma once
#include <cstddef>
#include <span>
#include <string>

#include "state.hpp"

namespace touchstone::mpi {

/// The predefined datatype `t`, or nullptr.
const Type* predefined_type(MPI_Datatype t);
std::string type_name(MPI_Datatype t);
/// MPI_Type_vector (MPI_Type_contiguous is the vector of `count` blocks of one with stride 1).
Type make_vector(int count, int blocklength, int stride, const Type& old);
/// Copies `count` elements of t at buf into out (count * t.size bytes), and back.
void pack(const void* buf, int count, const Type& t, std::span<std::byte> out);
/// Copies as many whole or partial blocks as `in` holds.
void unpack(std::span<const std::byte> in, void* buf, int count, const Type& t);
/// inout[k] = in[k] op inout[k] for n elements of the predefined type `base`; MpiError
/// MPI_ERR_OP when op is not defined on that type.
void apply_predefined(MPI_Op op, MPI_Datatype base, const void* in, void* inout, std::size_t n);

}  // namespace touchstone::mpi
