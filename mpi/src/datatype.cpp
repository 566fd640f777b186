// MPI datatypes (docs/mpi.md): the constructors, queries, envelopes and names, and user reduction
// operations; the type maps themselves and the predefined operations are in types.cpp.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "attributes.hpp"
#include "call.hpp"
#include "check.hpp"
#include "request.hpp"
#include "types.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace {

// A constructor's old type, kept inside the new one for MPI_Type_get_contents.
std::shared_ptr<const Type> keep(RankState& rs, MPI_Datatype t) { return shared_copy(type_of(rs, t)); }

// Registers a new type with what MPI_Type_get_envelope/contents return about its construction.
MPI_Datatype add(RankState& rs, Type t, int combiner, std::vector<int> ints, std::vector<MPI_Aint> aints,
                 std::vector<std::shared_ptr<const Type>> inner) {
  t.combiner = combiner;
  t.handle = MPI_DATATYPE_NULL;
  t.name.clear();
  t.committed = false;
  t.ints = std::move(ints);
  t.aints = std::move(aints);
  t.inner = std::move(inner);
  return new_type_handle(rs, std::move(t));
}

Type& derived(RankState& rs, MPI_Datatype t) {
  type_of(rs, t);
  if (t < kFirstDerivedType) throw MpiError{MPI_ERR_TYPE, fmt::format("{} is a predefined datatype", type_name(t))};
  return *rs.types[static_cast<std::size_t>(t - kFirstDerivedType)];
}

void check_blocklength(int b) {
  if (b < 0) throw MpiError{MPI_ERR_ARG, fmt::format("block length {} is negative", b)};
}

std::size_t ucount(int n) { return static_cast<std::size_t>(n); }

// count blocks of blocklength[i] old elements at displacement displ[i] (in units of `unit` bytes).
template <class Displ>
Type blocks_of(const Type& old, int count, const int* blocklength, int same_length, const Displ* displ, MPI_Aint unit) {
  std::vector<Placement> parts;
  for (int i = 0; i < count; ++i) {
    const int b = blocklength ? blocklength[i] : same_length;
    check_blocklength(b);
    parts.push_back({&old, static_cast<MPI_Aint>(displ[i]) * unit, ucount(b)});
  }
  return compose(parts, false);
}

// MPI_Type_vector and MPI_Type_create_hvector: the stride in bytes.
Type strided(const Type& old, int count, int blocklength, MPI_Aint stride_bytes) {
  check_count(count);
  check_blocklength(blocklength);
  if (stride_bytes == blocklength * old.extent) {  // the blocks touch: one run of copies
    const Placement all{&old, 0, ucount(count) * ucount(blocklength)};
    return compose({&all, 1}, false);
  }
  const Placement blocks{&old, 0, ucount(blocklength), ucount(count), stride_bytes};
  return compose({&blocks, 1}, false);
}

int hvector(const char* name, int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
            MPI_Datatype* newtype) {
  return call(name, MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newtype, "newtype");
    Type t = strided(type_of(rs, oldtype), count, blocklength, stride);
    *newtype = add(rs, std::move(t), MPI_COMBINER_HVECTOR, {count, blocklength}, {stride}, {keep(rs, oldtype)});
  });
}

int hindexed(const char* name, int count, const int blocklengths[], const MPI_Aint displacements[],
             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call(name, MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    check_arrays(count, {{"array_of_blocklengths", blocklengths}, {"array_of_displacements", displacements}});
    check_out(newtype, "newtype");
    Type t = blocks_of(type_of(rs, oldtype), count, blocklengths, 0, displacements, 1);
    std::vector<int> ints{count};
    ints.insert(ints.end(), blocklengths, blocklengths + count);
    *newtype = add(rs, std::move(t), MPI_COMBINER_HINDEXED, std::move(ints),
                   std::vector<MPI_Aint>(displacements, displacements + count), {keep(rs, oldtype)});
  });
}

int structure(const char* name, int count, const int blocklengths[], const MPI_Aint displacements[],
              const MPI_Datatype types[], MPI_Datatype* newtype) {
  return call(name, MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    check_arrays(count, {{"array_of_blocklengths", blocklengths},
                         {"array_of_displacements", displacements},
                         {"array_of_types", types}});
    check_out(newtype, "newtype");
    std::vector<Placement> parts;
    std::vector<std::shared_ptr<const Type>> inner;
    for (int i = 0; i < count; ++i) {
      check_blocklength(blocklengths[i]);
      parts.push_back({&type_of(rs, types[i]), displacements[i], ucount(blocklengths[i])});
      inner.push_back(keep(rs, types[i]));
    }
    Type t = compose(parts, true);
    std::vector<int> ints{count};
    ints.insert(ints.end(), blocklengths, blocklengths + count);
    *newtype = add(rs, std::move(t), MPI_COMBINER_STRUCT, std::move(ints),
                   std::vector<MPI_Aint>(displacements, displacements + count), std::move(inner));
  });
}

void check_order(int order) {
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    throw MpiError{MPI_ERR_ARG, fmt::format("order {} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order)};
}

// Builds an array type dimension by dimension from the fastest varying one (the last in C
// order, the first in Fortran order); runs(d) gives the (start, length) index runs taken in d.
template <class Runs>
Type array_type(const Type& old, int ndims, const int sizes[], int order, Runs runs) {
  Type t;
  const Type* inner = &old;
  for (int k = 0; k < ndims; ++k) {
    const int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
    const std::vector<std::pair<MPI_Aint, MPI_Aint>> r = runs(d);
    t = dimension(*inner, r, sizes[d]);
    inner = &t;
  }
  return t;
}

// The index runs of dimension d that process coordinate `coord` owns in a darray (MPI-3.1 4.1.4).
std::vector<std::pair<MPI_Aint, MPI_Aint>> darray_runs(int gsize, int distrib, int darg, int psize, int coord) {
  std::vector<std::pair<MPI_Aint, MPI_Aint>> runs;
  if (distrib == MPI_DISTRIBUTE_NONE) {
    if (psize != 1) throw MpiError{MPI_ERR_ARG, "a dimension with MPI_DISTRIBUTE_NONE must have one process"};
    runs.emplace_back(0, gsize);
  } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
    const int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
    if (b <= 0 || static_cast<long long>(b) * psize < gsize)
      throw MpiError{MPI_ERR_ARG, fmt::format("block size {} times {} processes does not cover {} elements", b, psize,
                                              gsize)};
    const MPI_Aint start = std::min<MPI_Aint>(static_cast<MPI_Aint>(coord) * b, gsize);
    runs.emplace_back(start, std::min<MPI_Aint>(start + b, gsize) - start);
  } else if (distrib == MPI_DISTRIBUTE_CYCLIC) {
    const int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    if (b <= 0) throw MpiError{MPI_ERR_ARG, fmt::format("cyclic block size {} is not positive", b)};
    for (MPI_Aint s = static_cast<MPI_Aint>(coord) * b; s < gsize; s += static_cast<MPI_Aint>(psize) * b)
      runs.emplace_back(s, std::min<MPI_Aint>(s + b, gsize) - s);
  } else {
    throw MpiError{MPI_ERR_ARG, fmt::format("distribution {} is not valid", distrib)};
  }
  return runs;
}

void set_count(MPI_Count n, int* out) { *out = n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n); }

// MPI_Type_get_(true_)extent(_x): the type's bounds (its data's, when `of_data`) stored through lb
// and extent, MPI_Aint or MPI_Count. Inlined, so that the call site is the program's (call.hpp).
template <class Int>
[[gnu::always_inline]] inline int type_bounds(const char* name, MPI_Datatype datatype, bool of_data, Int* lb,
                                              Int* extent) {
  return call(name, MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    check_out(lb, "lb");
    check_out(extent, "extent");
    *lb = of_data ? t.true_lb : t.lb;
    *extent = of_data ? t.true_extent : t.extent;
  });
}

}  // namespace

int MPI_Type_size(MPI_Datatype datatype, int* size) {
  return call("MPI_Type_size", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(size, "size");
    set_count(static_cast<MPI_Count>(type_of(rs, datatype).size), size);
  });
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  return call("MPI_Type_size_x", MPI_COMM_WORLD,
              [&](RankState& rs) {
                check_out(size, "size");
                *size = static_cast<MPI_Count>(type_of(rs, datatype).size);
              });
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return type_bounds("MPI_Type_get_extent", datatype, false, lb, extent);
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  return type_bounds("MPI_Type_get_extent_x", datatype, false, lb, extent);
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  return type_bounds("MPI_Type_get_true_extent", datatype, true, true_lb, true_extent);
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  return type_bounds("MPI_Type_get_true_extent_x", datatype, true, true_lb, true_extent);
}

// MPI-4.1 5.9.4's table: the pair types MPI_MINLOC and MPI_MAXLOC reduce, by value and index type.
int MPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype* pair_type) {
  return call("MPI_Type_get_value_index", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(pair_type, "pair_type");
    type_of(rs, value_type);
    type_of(rs, index_type);
    static const struct {
      MPI_Datatype value, index, pair;
    } kPairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},     {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},       {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},     {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},         {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER}};
    *pair_type = MPI_DATATYPE_NULL;
    for (const auto& p : kPairs)
      if (p.value == value_type && p.index == index_type) *pair_type = p.pair;
  });
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_contiguous", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    check_out(newtype, "newtype");
    const Type& old = type_of(rs, oldtype);
    Type t = strided(old, 1, count, 0);
    *newtype = add(rs, std::move(t), MPI_COMBINER_CONTIGUOUS, {count}, {}, {keep(rs, oldtype)});
  });
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_vector", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newtype, "newtype");
    const Type& old = type_of(rs, oldtype);
    Type t = strided(old, count, blocklength, stride * old.extent);
    *newtype = add(rs, std::move(t), MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {keep(rs, oldtype)});
  });
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return hvector("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype);
}

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return hvector("MPI_Type_hvector", count, blocklength, stride, oldtype, newtype);
}

int MPI_Type_indexed(int count, const int blocklengths[], const int displacements[], MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  return call("MPI_Type_indexed", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    check_arrays(count, {{"array_of_blocklengths", blocklengths}, {"array_of_displacements", displacements}});
    check_out(newtype, "newtype");
    const Type& old = type_of(rs, oldtype);
    Type t = blocks_of(old, count, blocklengths, 0, displacements, old.extent);
    std::vector<int> ints{count};
    ints.insert(ints.end(), blocklengths, blocklengths + count);
    ints.insert(ints.end(), displacements, displacements + count);
    *newtype = add(rs, std::move(t), MPI_COMBINER_INDEXED, std::move(ints), {}, {keep(rs, oldtype)});
  });
}

int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[],
                             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return hindexed("MPI_Type_create_hindexed", count, blocklengths, displacements, oldtype, newtype);
}

int MPI_Type_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  return hindexed("MPI_Type_hindexed", count, blocklengths, displacements, oldtype, newtype);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype* newtype) {
  return call("MPI_Type_create_indexed_block", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    check_arrays(count, {{"array_of_displacements", displacements}});
    check_out(newtype, "newtype");
    const Type& old = type_of(rs, oldtype);
    Type t = blocks_of(old, count, nullptr, blocklength, displacements, old.extent);
    std::vector<int> ints{count, blocklength};
    ints.insert(ints.end(), displacements, displacements + count);
    *newtype = add(rs, std::move(t), MPI_COMBINER_INDEXED_BLOCK, std::move(ints), {}, {keep(rs, oldtype)});
  });
}

int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  return call("MPI_Type_create_hindexed_block", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    check_arrays(count, {{"array_of_displacements", displacements}});
    check_out(newtype, "newtype");
    Type t = blocks_of(type_of(rs, oldtype), count, nullptr, blocklength, displacements, 1);
    *newtype = add(rs, std::move(t), MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength},
                   std::vector<MPI_Aint>(displacements, displacements + count), {keep(rs, oldtype)});
  });
}

int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                           const MPI_Datatype types[], MPI_Datatype* newtype) {
  return structure("MPI_Type_create_struct", count, blocklengths, displacements, types, newtype);
}

int MPI_Type_struct(int count, const int blocklengths[], const MPI_Aint displacements[], const MPI_Datatype types[],
                    MPI_Datatype* newtype) {
  return structure("MPI_Type_struct", count, blocklengths, displacements, types, newtype);
}

int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_create_subarray", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newtype, "newtype");
    check_order(order);
    if (ndims <= 0) throw MpiError{MPI_ERR_ARG, fmt::format("{} dimensions: at least one is needed", ndims)};
    check_arrays(ndims, {{"array_of_sizes", sizes}, {"array_of_subsizes", subsizes}, {"array_of_starts", starts}});
    for (int d = 0; d < ndims; ++d)
      if (sizes[d] <= 0 || subsizes[d] <= 0 || starts[d] < 0 || starts[d] + subsizes[d] > sizes[d])
        throw MpiError{MPI_ERR_ARG, fmt::format("dimension {}: subarray of {} from {} does not fit {} elements (or is "
                                                "empty)", d, subsizes[d], starts[d], sizes[d])};
    const Type t = array_type(type_of(rs, oldtype), ndims, sizes, order, [&](int d) {
      return std::vector<std::pair<MPI_Aint, MPI_Aint>>{{starts[d], subsizes[d]}};
    });
    std::vector<int> ints{ndims};
    for (const int* a : {sizes, subsizes, starts}) ints.insert(ints.end(), a, a + ndims);
    ints.push_back(order);
    *newtype = add(rs, t, MPI_COMBINER_SUBARRAY, std::move(ints), {}, {keep(rs, oldtype)});
  });
}

int MPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                           const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_create_darray", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newtype, "newtype");
    check_order(order);
    if (ndims <= 0) throw MpiError{MPI_ERR_ARG, fmt::format("{} dimensions: at least one is needed", ndims)};
    check_arrays(ndims, {{"array_of_gsizes", gsizes},
                         {"array_of_distribs", distribs},
                         {"array_of_dargs", dargs},
                         {"array_of_psizes", psizes}});
    long long procs = 1;
    for (int d = 0; d < ndims; ++d) {
      if (gsizes[d] <= 0 || psizes[d] <= 0)
        throw MpiError{MPI_ERR_ARG, fmt::format("dimension {}: {} elements on {} processes", d, gsizes[d], psizes[d])};
      procs *= psizes[d];
    }
    if (procs != size)
      throw MpiError{MPI_ERR_ARG, fmt::format("the process grid has {} processes, not {}", procs, size)};
    if (rank < 0 || rank >= size) throw MpiError{MPI_ERR_RANK, fmt::format("rank {} is not in 0..{}", rank, size - 1)};
    // The process grid is row-major whatever the array's order (MPI-3.1 4.1.4).
    std::vector<int> coord(static_cast<std::size_t>(ndims));
    for (int d = ndims - 1, r = rank; d >= 0; --d) {
      coord[static_cast<std::size_t>(d)] = r % psizes[d];
      r /= psizes[d];
    }
    const Type t = array_type(type_of(rs, oldtype), ndims, gsizes, order, [&](int d) {
      return darray_runs(gsizes[d], distribs[d], dargs[d], psizes[d], coord[static_cast<std::size_t>(d)]);
    });
    std::vector<int> ints{size, rank, ndims};
    for (const int* a : {gsizes, distribs, dargs, psizes}) ints.insert(ints.end(), a, a + ndims);
    ints.push_back(order);
    *newtype = add(rs, t, MPI_COMBINER_DARRAY, std::move(ints), {}, {keep(rs, oldtype)});
  });
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  return call("MPI_Type_create_resized", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newtype, "newtype");
    Type t = resized(type_of(rs, oldtype), lb, extent);
    *newtype = add(rs, std::move(t), MPI_COMBINER_RESIZED, {}, {lb, extent}, {keep(rs, oldtype)});
  });
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_dup", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newtype, "newtype");
    const Type& old = type_of(rs, oldtype);
    const bool was_committed = old.committed;
    Type t = old;
    *newtype = add(rs, std::move(t), MPI_COMBINER_DUP, {}, {}, {keep(rs, oldtype)});
    derived(rs, *newtype).committed = was_committed;  // a duplicate of a committed type is committed
    copy_attributes(rs, AttrKind::type, oldtype, *newtype);
  });
}

int MPI_Type_commit(MPI_Datatype* datatype) {
  return call("MPI_Type_commit", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(datatype, "datatype");
    type_of(rs, *datatype);
    if (*datatype >= kFirstDerivedType) derived(rs, *datatype).committed = true;
  });
}

int MPI_Type_free(MPI_Datatype* datatype) {
  return call("MPI_Type_free", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(datatype, "datatype");
    if (parameterized(derived(rs, *datatype)))
      throw MpiError{MPI_ERR_TYPE,
                     "a type of MPI_Type_create_f90_integer/real/complex is predefined: it cannot be freed"};
    delete_attributes(rs, AttrKind::type, *datatype);
    // Types built from it keep their own copy (Type::inner), so they stay valid.
    rs.types[static_cast<std::size_t>(*datatype - kFirstDerivedType)].reset();
    *datatype = MPI_DATATYPE_NULL;
  });
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes,
                          int* combiner) {
  return call("MPI_Type_get_envelope", MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    for (const auto& [out, what] : {std::pair{num_integers, "num_integers"}, {num_addresses, "num_addresses"},
                                    {num_datatypes, "num_datatypes"}, {combiner, "combiner"}})
      check_out(out, what);
    *num_integers = static_cast<int>(t.ints.size());
    *num_addresses = static_cast<int>(t.aints.size());
    *num_datatypes = static_cast<int>(t.inner.size());
    *combiner = t.combiner;
  });
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                          int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  return call("MPI_Type_get_contents", MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    if (t.combiner == MPI_COMBINER_NAMED)
      throw MpiError{MPI_ERR_TYPE, fmt::format("{} is predefined: it has no contents", type_name(datatype))};
    if (max_integers < static_cast<int>(t.ints.size()) || max_addresses < static_cast<int>(t.aints.size()) ||
        max_datatypes < static_cast<int>(t.inner.size()))
      throw MpiError{MPI_ERR_ARG, fmt::format("the arrays hold {}/{}/{} entries; the contents need {}/{}/{}",
                                              max_integers, max_addresses, max_datatypes, t.ints.size(),
                                              t.aints.size(), t.inner.size())};
    check_arrays(static_cast<std::int64_t>(t.ints.size()), {{"array_of_integers", array_of_integers}});
    check_arrays(static_cast<std::int64_t>(t.aints.size()), {{"array_of_addresses", array_of_addresses}});
    check_arrays(static_cast<std::int64_t>(t.inner.size()), {{"array_of_datatypes", array_of_datatypes}});
    std::copy(t.ints.begin(), t.ints.end(), array_of_integers);
    std::copy(t.aints.begin(), t.aints.end(), array_of_addresses);
    // Copied first: adding types may move the table `t` lives in.
    const std::vector<std::shared_ptr<const Type>> inner = t.inner;
    for (std::size_t i = 0; i < inner.size(); ++i) {
      const Type& x = *inner[i];
      if (x.handle != MPI_DATATYPE_NULL) {
        array_of_datatypes[i] = x.handle;
        continue;
      }
      // A derived type comes back as a new handle the caller frees (MPI-3.1 4.1.13).
      array_of_datatypes[i] = new_type_handle(rs, x);
    }
  });
}

int MPI_Type_set_name(MPI_Datatype datatype, const char* type_name_in) {
  return call("MPI_Type_set_name", MPI_COMM_WORLD, [&](RankState& rs) {
    if (!type_name_in) throw MpiError{MPI_ERR_ARG, "the name is a null pointer"};
    std::string name(type_name_in, strnlen(type_name_in, MPI_MAX_OBJECT_NAME - 1));
    if (type_of(rs, datatype).handle != MPI_DATATYPE_NULL) rs.predefined_type_names[datatype] = std::move(name);
    else derived(rs, datatype).name = std::move(name);
  });
}

int MPI_Type_get_name(MPI_Datatype datatype, char* type_name_out, int* resultlen) {
  return call("MPI_Type_get_name", MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    check_out(type_name_out, "type_name");
    check_out(resultlen, "resultlen");
    std::string name = t.name;
    if (t.handle != MPI_DATATYPE_NULL) {
      const auto renamed = rs.predefined_type_names.find(t.handle);
      name = renamed != rs.predefined_type_names.end() ? renamed->second : type_name(t.handle);
    }
    std::memcpy(type_name_out, name.c_str(), name.size() + 1);
    *resultlen = static_cast<int>(name.size());
  });
}

namespace {
// The arguments of MPI_Get_count and MPI_Get_elements(_x): a status to read (MPI_STATUS_IGNORE is
// none) and a count to write.
void check_status(const MPI_Status* status, const void* count) {
  if (status == MPI_STATUS_IGNORE) throw MpiError{MPI_ERR_ARG, "the status is MPI_STATUS_IGNORE (a null pointer)"};
  check_out(count, "count");
}
}  // namespace

int MPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return call("MPI_Get_elements_x", MPI_COMM_WORLD, [&](RankState& rs) {
    check_status(status, count);
    const auto n = elements(type_of(rs, datatype), status->touchstone_bytes);
    *count = n ? *n : MPI_UNDEFINED;
  });
}

int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_elements", MPI_COMM_WORLD, [&](RankState& rs) {
    check_status(status, count);
    const auto n = elements(type_of(rs, datatype), status->touchstone_bytes);
    if (n) set_count(*n, count);
    else *count = MPI_UNDEFINED;
  });
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_count", MPI_COMM_WORLD, [&](RankState& rs) {
    check_status(status, count);
    const Type& t = type_of(rs, datatype);
    if (t.size == 0) *count = 0;
    else if (status->touchstone_bytes % t.size) *count = MPI_UNDEFINED;
    else set_count(static_cast<MPI_Count>(status->touchstone_bytes / t.size), count);
  }, true, Reach::own);
}

int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return call("MPI_Op_create", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(reinterpret_cast<const void*>(user_fn), "user_fn");
    check_out(op, "op");
    rs.ops.emplace_back(UserOp{user_fn, commute != 0});
    *op = static_cast<MPI_Op>(kFirstUserOp + rs.ops.size() - 1);
    made(rs, 'o', *op);
  });
}

int MPI_Op_free(MPI_Op* op) {
  return call("MPI_Op_free", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(op, "op");
    if (!user_op(rs, *op)) throw MpiError{MPI_ERR_OP, fmt::format("operation {} is not a user operation", *op)};
    rs.ops[static_cast<std::size_t>(*op - kFirstUserOp)].reset();
    *op = MPI_OP_NULL;
  });
}

int MPI_Op_commutative(MPI_Op op, int* commute) {
  return call("MPI_Op_commutative", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(commute, "commute");
    if (const UserOp* u = user_op(rs, op)) *commute = u->commute;
    else if (op >= MPI_MAX && op <= MPI_MAXLOC) *commute = 1;
    else throw MpiError{MPI_ERR_OP, fmt::format("operation {} is not valid", op)};
  });
}

int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  return call("MPI_Reduce_local", MPI_COMM_WORLD, [&](RankState& rs) {
    check_count(count);
    const Type& t = type_of(rs, datatype);
    check_buffer(inbuf, count, t);
    check_buffer(inoutbuf, count, t);
    bool commutative = true;
    const PackedReducer fn = packed_reducer(rs, op, datatype, t, commutative);
    const std::size_t n = ucount(count) * t.size;
    std::vector<std::byte> in(n), inout(n);
    pack(inbuf, ucount(count), t, in);
    pack(inoutbuf, ucount(count), t, inout);
    fn(in, inout);
    unpack(inout, inoutbuf, ucount(count), t);
  });
}

// The bounds queries MPI-3.0 removed, kept for older programs.
int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  return call("MPI_Type_extent", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(extent, "extent");
    *extent = type_of(rs, datatype).extent;
  });
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  return call("MPI_Type_lb", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(displacement, "displacement");
    *displacement = type_of(rs, datatype).lb;
  });
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  return call("MPI_Type_ub", MPI_COMM_WORLD, [&](RankState& rs) {
    const Type& t = type_of(rs, datatype);
    check_out(displacement, "displacement");
    *displacement = t.lb + t.extent;
  });
}

int MPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  return call("MPI_Status_set_elements_x", MPI_COMM_WORLD, [&](RankState& rs) {
    if (status == MPI_STATUS_IGNORE) throw MpiError{MPI_ERR_ARG, "the status is MPI_STATUS_IGNORE"};
    if (count < 0) throw MpiError{MPI_ERR_COUNT, fmt::format("count {} is negative", count)};
    status->touchstone_bytes = element_bytes(type_of(rs, datatype), count);
  });
}

int MPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return MPI_Status_set_elements_x(status, datatype, count);
}

namespace {
// The datatype of gfortran's kind selected_int_kind(r), selected_real_kind(p, r) (MPI-3.1 17.1.9):
// a predefined type that cannot be freed, of its own handle per (combiner, p, r) and rank, whose
// envelope gives the combiner and whose contents give p and r. MPI_UNDEFINED leaves p or r out.
MPI_Datatype f90_type(RankState& rs, int combiner, int p, int r) {
  const bool integer = combiner == MPI_COMBINER_F90_INTEGER;
  if (!integer && p == MPI_UNDEFINED && r == MPI_UNDEFINED)
    throw MpiError{MPI_ERR_ARG, "p and r are both MPI_UNDEFINED: one of them must be given"};
  if (const auto known = rs.f90_types.find({combiner, p, r}); known != rs.f90_types.end()) return known->second;
  const int want_p = p == MPI_UNDEFINED ? 0 : p, want_r = r == MPI_UNDEFINED ? 0 : r;
  // gfortran's kinds on x86-64, each with the decimal range (and precision) it holds: the intrinsic
  // functions RANGE and PRECISION. REAL(16) is IEEE quad precision, which no C type here holds.
  struct IntegerKind {
    int range;
    MPI_Datatype type;
  };
  static const IntegerKind integers[] = {
      {2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8}, {38, MPI_INTEGER16}};
  struct RealKind {
    int precision, range;
    MPI_Datatype real, complex;
  };
  static const RealKind reals[] = {{6, 37, MPI_REAL4, MPI_COMPLEX8},
                                   {15, 307, MPI_REAL8, MPI_COMPLEX16},
                                   {18, 4931, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX}};
  MPI_Datatype base = MPI_DATATYPE_NULL;
  if (integer) {
    for (const IntegerKind& k : integers)
      if (k.range >= want_r) {
        base = k.type;
        break;
      }
  } else {
    for (const RealKind& k : reals)
      if (k.precision >= want_p && k.range >= want_r) {
        base = combiner == MPI_COMBINER_F90_REAL ? k.real : k.complex;
        break;
      }
  }
  if (base == MPI_DATATYPE_NULL)
    throw MpiError{MPI_ERR_ARG, integer ? fmt::format("no INTEGER kind holds a range of 10^{}", r)
                                        : fmt::format("no kind of {} holds precision {} and range 10^{}{}",
                                                      combiner == MPI_COMBINER_F90_REAL ? "REAL" : "COMPLEX", p, r,
                                                      want_p <= 33 && want_r <= 4931 ? " here (REAL(16), IEEE quad "
                                                                                       "precision, has no C type)"
                                                                                     : "")};
  const MPI_Datatype h = add(rs, type_of(rs, base), combiner, integer ? std::vector{r} : std::vector{p, r}, {}, {});
  derived(rs, h).committed = true;
  rs.f90_types.emplace(std::array{combiner, p, r}, h);
  return h;
}

template <class Make>
int f90_call(const char* name, MPI_Datatype* newtype, Make&& make) {
  return call(name, MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(newtype, "newtype");
    *newtype = make(rs);
  });
}
}  // namespace

int MPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  return f90_call("MPI_Type_create_f90_integer", newtype,
                  [&](RankState& rs) { return f90_type(rs, MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r); });
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  return f90_call("MPI_Type_create_f90_real", newtype,
                  [&](RankState& rs) { return f90_type(rs, MPI_COMBINER_F90_REAL, p, r); });
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  return f90_call("MPI_Type_create_f90_complex", newtype,
                  [&](RankState& rs) { return f90_type(rs, MPI_COMBINER_F90_COMPLEX, p, r); });
}

// The predefined C type of a type class and size (MPI-3.1 17.1.9, for C programs: the C types).
int MPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  return call("MPI_Type_match_size", MPI_COMM_WORLD, [&](RankState&) {
    if (!datatype) throw MpiError{MPI_ERR_ARG, "datatype is a null pointer"};
    struct Match {
      int typeclass, size;
      MPI_Datatype type;
    };
    static const Match matches[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INT8_T},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INT16_T},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INT32_T},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INT64_T},
        {MPI_TYPECLASS_REAL, static_cast<int>(sizeof(float)), MPI_FLOAT},
        {MPI_TYPECLASS_REAL, static_cast<int>(sizeof(double)), MPI_DOUBLE},
        {MPI_TYPECLASS_REAL, static_cast<int>(sizeof(long double)), MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_COMPLEX, static_cast<int>(2 * sizeof(float)), MPI_C_FLOAT_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, static_cast<int>(2 * sizeof(double)), MPI_C_DOUBLE_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, static_cast<int>(2 * sizeof(long double)), MPI_C_LONG_DOUBLE_COMPLEX},
    };
    if (typeclass < MPI_TYPECLASS_INTEGER || typeclass > MPI_TYPECLASS_COMPLEX)
      throw MpiError{MPI_ERR_ARG, fmt::format("type class {} is not MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX", typeclass)};
    for (const Match& m : matches)
      if (m.typeclass == typeclass && m.size == size) {
        *datatype = m.type;
        return;
      }
    throw MpiError{MPI_ERR_ARG, fmt::format("no predefined type of class {} has {} bytes", typeclass, size)};
  });
}
