// MPI packing (docs/mpi.md): MPI_Pack/MPI_Unpack in the native representation (the packed bytes a
// message carries), the "external32" representation of MPI-3.1 13.5.2, and addresses.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "request.hpp"
#include "types.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace {

std::size_t ucount(int n) { return static_cast<std::size_t>(n); }

// The packed size of count elements, checked against what is left of a buffer.
std::size_t fits(std::size_t need, MPI_Aint size, MPI_Aint position, const char* what) {
  if (position < 0 || position > size)
    throw MpiError{MPI_ERR_ARG, fmt::format("position {} is outside the {} buffer of {} bytes", position, what, size)};
  if (need > static_cast<std::size_t>(size - position))
    throw MpiError{MPI_ERR_TRUNCATE, fmt::format("{} bytes do not fit the {} bytes left in the {} buffer", need,
                                                 size - position, what)};
  return need;
}

// How external32 stores one predefined type: `parts` components (two for complex types) of
// `native` bytes here and `external` bytes there, big-endian.
struct External {
  enum Kind { integer, signed_integer, ieee, extended };
  std::size_t parts, native, external;
  Kind kind;
};

External external_of(MPI_Datatype p) {
  const std::size_t n = predefined_type(p)->size;
  switch (p) {
    case MPI_LONG: return {1, n, 4, External::signed_integer};  // external32 longs are 4 bytes
    case MPI_UNSIGNED_LONG: return {1, n, 4, External::integer};
    case MPI_FLOAT: case MPI_DOUBLE: case MPI_REAL: case MPI_DOUBLE_PRECISION: case MPI_REAL4: case MPI_REAL8:
      return {1, n, n, External::ieee};
    case MPI_LONG_DOUBLE: return {1, n, 16, External::extended};
    case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX:
    case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_COMPLEX: case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX8: case MPI_COMPLEX16:
      return {2, n / 2, n / 2, External::ieee};
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX: return {2, n / 2, 16, External::extended};
    default: return {1, n, n, External::integer};
  }
}

// x87 80-bit extended <-> IEEE binary128: the same sign, exponent and bias; binary128 drops the
// explicit integer bit and widens the fraction from 63 to 112 bits.
static_assert(std::numeric_limits<long double>::digits == 64, "long double is the x87 80-bit format");

void extended_to_quad(const std::byte* in, std::byte* out) {
  std::uint64_t mantissa;
  std::uint16_t sign_exp;
  std::memcpy(&mantissa, in, 8);
  std::memcpy(&sign_exp, in + 8, 2);
  const std::uint64_t fraction = mantissa & ((std::uint64_t{1} << 63) - 1);
  const std::uint64_t hi = (std::uint64_t{sign_exp} << 48) | (fraction >> 15), lo = fraction << 49;
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<std::byte>(hi >> (56 - 8 * i));
    out[8 + i] = static_cast<std::byte>(lo >> (56 - 8 * i));
  }
}

void quad_to_extended(const std::byte* in, std::byte* out) {
  std::uint64_t hi = 0, lo = 0;
  for (int i = 0; i < 8; ++i) {
    hi = (hi << 8) | std::to_integer<std::uint64_t>(in[i]);
    lo = (lo << 8) | std::to_integer<std::uint64_t>(in[8 + i]);
  }
  const auto sign_exp = static_cast<std::uint16_t>(hi >> 48);
  const std::uint64_t integer_bit = (sign_exp & 0x7fff) != 0 ? std::uint64_t{1} << 63 : 0;
  const std::uint64_t mantissa = integer_bit | ((hi & 0xffffffffffff) << 15) | (lo >> 49);
  std::memset(out, 0, 16);
  std::memcpy(out, &mantissa, 8);
  std::memcpy(out + 8, &sign_exp, 2);
}

// One component, native (little-endian) -> external32 (big-endian), or back.
void convert(const External& e, const std::byte* in, std::byte* out, bool to_external) {
  if (e.kind == External::extended) return to_external ? extended_to_quad(in, out) : quad_to_extended(in, out);
  if (to_external) {
    for (std::size_t i = 0; i < e.external; ++i) out[i] = in[e.external - 1 - i];  // the low bytes, reversed
    return;
  }
  const bool negative = e.kind == External::signed_integer && (std::to_integer<unsigned>(in[0]) & 0x80);
  for (std::size_t i = 0; i < e.native; ++i)
    out[i] = i < e.external ? in[e.external - 1 - i] : negative ? std::byte{0xff} : std::byte{0};
}

// Walks count elements' predefined components in packed order, native and external side by side.
template <class Step>
std::size_t walk(const Type& t, std::size_t count, Step step) {
  std::size_t native = 0, external = 0;
  for (std::size_t k = 0; k < count; ++k)
    for (const auto& [type, n] : t.signature) {
      const External e = external_of(type);
      for (std::size_t i = 0; i < n * e.parts; ++i) {
        step(e, native, external);
        native += e.native;
        external += e.external;
      }
    }
  return external;
}

void check_datarep(const char* datarep) {
  if (!datarep || std::string_view(datarep) != "external32")
    throw MpiError{MPI_ERR_ARG, fmt::format("data representation \"{}\" is not \"external32\"",
                                            datarep ? datarep : "(null)")};
}

std::byte* bytes_at(void* p, MPI_Aint at) { return static_cast<std::byte*>(p) + at; }

// count elements of t, `bytes` long in their packed representation (native or external32), at a
// position of a buffer.
struct PackedData {
  const Type& t;
  std::size_t count, bytes;
};

// What MPI_Pack and MPI_Unpack check first: the communicator, the count, the type, and that the
// data fit in the `room` bytes of the buffer (`buffer`: "input" or "output") from `position`.
PackedData native_data(RankState& rs, MPI_Comm comm, int count, MPI_Datatype datatype, int room, int position,
                       const char* buffer) {
  comm_of(rs, comm);
  check_count(count);
  const Type& t = committed(rs, datatype);
  return {t, ucount(count), fits(ucount(count) * t.size, room, position, buffer)};
}

// What MPI_Pack_external and MPI_Unpack_external check first: the representation, the count, the
// type, and that the data fit in the `room` bytes of the buffer (`buffer`: "input" or "output")
// from `position`.
PackedData external_data(RankState& rs, const char* datarep, int count, MPI_Datatype datatype, MPI_Aint room,
                           MPI_Aint position, const char* buffer) {
  check_datarep(datarep);
  check_count(count);
  const Type& t = committed(rs, datatype);
  const std::size_t bytes = external_size(t, ucount(count));
  fits(bytes, room, position, buffer);
  return {t, ucount(count), bytes};
}

void convert_all(const PackedData& x, std::byte* native, std::byte* external, bool to_external) {
  convert_external(x.t, x.count, native, external, to_external);
}

}  // namespace

namespace touchstone::mpi {

std::size_t external_size(const Type& t, std::size_t count) {
  return walk(t, count, [](const External&, std::size_t, std::size_t) {});
}

void convert_external(const Type& t, std::size_t count, std::byte* native, std::byte* external, bool to_external) {
  walk(t, count, [&](const External& e, std::size_t n, std::size_t at) {
    if (to_external)
      convert(e, native + n, external + at, true);
    else
      convert(e, external + at, native + n, false);
  });
}

}  // namespace touchstone::mpi

int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
             MPI_Comm comm) {
  return call("MPI_Pack", comm, [&](RankState& rs) {
    check_out(position, "position");
    check_arrays(outsize, {{"outbuf", outbuf}});
    const PackedData x = native_data(rs, comm, incount, datatype, outsize, *position, "output");
    check_buffer(inbuf, incount, x.t);
    pack(inbuf, x.count, x.t, {bytes_at(outbuf, *position), x.bytes});
    *position += static_cast<int>(x.bytes);
  });
}

int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
               MPI_Comm comm) {
  return call("MPI_Unpack", comm, [&](RankState& rs) {
    check_out(position, "position");
    check_arrays(insize, {{"inbuf", inbuf}});
    const PackedData x = native_data(rs, comm, outcount, datatype, insize, *position, "input");
    check_buffer(outbuf, outcount, x.t);
    unpack({bytes_at(const_cast<void*>(inbuf), *position), x.bytes}, outbuf, x.count, x.t);
    *position += static_cast<int>(x.bytes);
  });
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return call("MPI_Pack_size", comm, [&](RankState& rs) {
    comm_of(rs, comm);
    check_count(incount);
    check_out(size, "size");
    *size = static_cast<int>(ucount(incount) * type_of(rs, datatype).size);
  });
}

int MPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                      MPI_Aint outsize, MPI_Aint* position) {
  return call("MPI_Pack_external", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(position, "position");
    check_arrays(outsize, {{"outbuf", outbuf}});
    const PackedData x = external_data(rs, datarep, incount, datatype, outsize, *position, "output");
    check_buffer(inbuf, incount, x.t);
    std::vector<std::byte> native(x.count * x.t.size);
    pack(inbuf, x.count, x.t, native);
    convert_all(x, native.data(), bytes_at(outbuf, *position), true);
    *position += static_cast<MPI_Aint>(x.bytes);
  });
}

int MPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                        int outcount, MPI_Datatype datatype) {
  return call("MPI_Unpack_external", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(position, "position");
    check_arrays(insize, {{"inbuf", inbuf}});
    const PackedData x = external_data(rs, datarep, outcount, datatype, insize, *position, "input");
    check_buffer(outbuf, outcount, x.t);
    std::vector<std::byte> native(x.count * x.t.size);
    convert_all(x, native.data(), bytes_at(const_cast<void*>(inbuf), *position), false);
    unpack(native, outbuf, x.count, x.t);
    *position += static_cast<MPI_Aint>(x.bytes);
  });
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size) {
  return call("MPI_Pack_external_size", MPI_COMM_WORLD, [&](RankState& rs) {
    check_datarep(datarep);
    check_count(incount);
    const Type& t = type_of(rs, datatype);
    check_out(size, "size");
    *size = static_cast<MPI_Aint>(external_size(t, ucount(incount)));
  });
}

int MPI_Get_address(const void* location, MPI_Aint* address) {
  return call("MPI_Get_address", MPI_COMM_WORLD,
              [&](RankState&) {
                check_out(address, "address");
                *address = static_cast<MPI_Aint>(reinterpret_cast<std::uintptr_t>(location));
              });
}

int MPI_Address(void* location, MPI_Aint* address) { return MPI_Get_address(location, address); }

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(disp));
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) - static_cast<std::uintptr_t>(addr2));
}
