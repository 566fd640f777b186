// Datatypes and predefined reduction operations of the MPI interface: type maps, their
// composition by the constructors, packing, and reductions on packed elements. Internal.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "state.hpp"
#include "touchstone/machine.hpp"

namespace touchstone::mpi {

/// Every predefined type's handle is below this (mpi.h numbers them from 1, MPI_INTEGER16 last).
inline constexpr std::size_t kPredefinedHandles = static_cast<std::size_t>(MPI_INTEGER16) + 1;
/// The predefined datatype `t`, or nullptr.
const Type* predefined_type(MPI_Datatype t);
/// The standard name of a predefined type ("MPI_INT"), or "datatype N".
std::string type_name(MPI_Datatype t);

/// The most runs a flat type map lists; a longer one (a vector of a billion strided blocks) is
/// kept as its placements (Type::parts), and a type signature of more runs than that is refused
/// (MPI_ERR_UNSUPPORTED_OPERATION).
inline constexpr std::size_t kMaxRuns = std::size_t{1} << 22;

/// A copy of t that outlives its handle, made once per type (predefined types are static, so
/// they are not copied).
std::shared_ptr<const Type> shared_copy(const Type& t);
/// A handle for a new derived type: the lowest free one, as handles of freed types are reused.
MPI_Datatype new_type_handle(RankState& rs, Type t);
/// A type of MPI_Type_create_f90_integer/real/complex: predefined (MPI-3.1 17.1.9), never freed,
/// although its handle is made as a derived type's.
inline bool parameterized(const Type& t) {
  return t.combiner == MPI_COMBINER_F90_INTEGER || t.combiner == MPI_COMBINER_F90_REAL ||
         t.combiner == MPI_COMBINER_F90_COMPLEX;
}

/// `count` consecutive copies of `type` (each `type->extent` after the last) from `disp` bytes,
/// and `repeat` times so, each `stride` bytes after the last (a vector in one placement).
struct Placement {
  const Type* type;
  MPI_Aint disp;
  std::size_t count;
  std::size_t repeat = 1;
  MPI_Aint stride = 0;
};
/// The type whose type map is the placements' in order (every constructor is one); its bounds
/// follow MPI-3.1 4.1.7 (explicit markers win), and `as_struct` pads the extent to the alignment
/// of the strictest member (4.1.6's epsilon), as MPI_Type_create_struct does. Uncommitted.
Type compose(std::span<const Placement> parts, bool as_struct);
/// MPI_Type_create_resized's layout: old's data with bounds lb, lb + extent marked explicit.
Type resized(const Type& old, MPI_Aint lb, MPI_Aint extent);
/// A type that is `runs` (start index, length) of a dimension of `elements` elements, each a copy
/// of `inner` (whose extent is one element's stride), resized to the whole dimension: one level of
/// MPI_Type_create_subarray and MPI_Type_create_darray.
Type dimension(const Type& inner, std::span<const std::pair<MPI_Aint, MPI_Aint>> runs, MPI_Aint elements);

/// Copies `count` elements of t at buf into out (count * t.size bytes), and back. Addresses are
/// buf + offset, so buf may be MPI_BOTTOM for types holding absolute addresses.
void pack(const void* buf, std::size_t count, const Type& t, std::span<std::byte> out);
/// Calls run(offset, length) for each run of data of `count` elements of t, in type-map order
/// (offsets from the buffer's address): the runs pack and unpack copy.
void for_each_run(const Type& t, std::size_t count, const std::function<void(MPI_Aint, std::size_t)>& run);
/// Copies as many whole or partial runs as `in` holds.
void unpack(std::span<const std::byte> in, void* buf, std::size_t count, const Type& t);
/// The predefined elements in `bytes` bytes of packed elements of t (MPI_Get_elements), or
/// nothing when the bytes end inside one (MPI_UNDEFINED).
std::optional<MPI_Count> elements(const Type& t, std::size_t bytes);

/// The bytes `count` elements of t take in the external32 representation (MPI-3.1 13.5.2; pack.cpp).
std::size_t external_size(const Type& t, std::size_t count);
/// Converts `count` elements of t between their native packed bytes and their external32 bytes.
void convert_external(const Type& t, std::size_t count, std::byte* native, std::byte* external, bool to_external);

/// The packed bytes of the first n predefined elements of a sequence of elements of t.
std::size_t element_bytes(const Type& t, MPI_Count n);

/// A reduction on packed elements of t: inout = in (op) inout, both the same number of bytes.
using PackedReducer = std::function<void(std::span<const std::byte> in, std::span<std::byte> inout)>;
/// The reduction of `op` (predefined or user) on packed elements of `t` (handle `dt`); MpiError
/// MPI_ERR_OP when op is not defined on t, before any data moves. Sets whether op commutes.
PackedReducer packed_reducer(RankState& rs, MPI_Op op, MPI_Datatype dt, const Type& t, bool& commutative);
/// inout[k] = in[k] op inout[k] for n elements of the predefined type `base`; MpiError
/// MPI_ERR_OP when op is not defined on that type.
void apply_predefined(MPI_Op op, MPI_Datatype base, const void* in, void* inout, std::size_t n);
/// The operand class of a predefined type, which sets the operator's cost per byte
/// (NodeCosts::reduce_per_byte): floating point for the real types and their MINLOC/MAXLOC pairs,
/// integer for the rest. Collectives and accumulates charge by it alike.
OperandClass operand_class(MPI_Datatype base);

}  // namespace touchstone::mpi
