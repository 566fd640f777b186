// Datatypes and reduction operations of the MPI interface (docs/mpi.md).
#include "types.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <cwchar>

#include <fmt/format.h>

namespace touchstone::mpi {

namespace {

template <class T, class I>
struct Pair {
  T v;
  I i;
};

struct Predefined {
  MPI_Datatype handle;
  std::size_t size;
  const char* name;
};

const Predefined kPredefined[] = {
    {MPI_CHAR, sizeof(char), "MPI_CHAR"},
    {MPI_SIGNED_CHAR, sizeof(signed char), "MPI_SIGNED_CHAR"},
    {MPI_UNSIGNED_CHAR, sizeof(unsigned char), "MPI_UNSIGNED_CHAR"},
    {MPI_BYTE, 1, "MPI_BYTE"},
    {MPI_SHORT, sizeof(short), "MPI_SHORT"},
    {MPI_UNSIGNED_SHORT, sizeof(unsigned short), "MPI_UNSIGNED_SHORT"},
    {MPI_INT, sizeof(int), "MPI_INT"},
    {MPI_UNSIGNED, sizeof(unsigned), "MPI_UNSIGNED"},
    {MPI_LONG, sizeof(long), "MPI_LONG"},
    {MPI_UNSIGNED_LONG, sizeof(unsigned long), "MPI_UNSIGNED_LONG"},
    {MPI_LONG_LONG_INT, sizeof(long long), "MPI_LONG_LONG_INT"},
    {MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long), "MPI_UNSIGNED_LONG_LONG"},
    {MPI_FLOAT, sizeof(float), "MPI_FLOAT"},
    {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"},
    {MPI_LONG_DOUBLE, sizeof(long double), "MPI_LONG_DOUBLE"},
    {MPI_INT8_T, 1, "MPI_INT8_T"},
    {MPI_INT16_T, 2, "MPI_INT16_T"},
    {MPI_INT32_T, 4, "MPI_INT32_T"},
    {MPI_INT64_T, 8, "MPI_INT64_T"},
    {MPI_UINT8_T, 1, "MPI_UINT8_T"},
    {MPI_UINT16_T, 2, "MPI_UINT16_T"},
    {MPI_UINT32_T, 4, "MPI_UINT32_T"},
    {MPI_UINT64_T, 8, "MPI_UINT64_T"},
    {MPI_C_BOOL, sizeof(bool), "MPI_C_BOOL"},
    {MPI_WCHAR, sizeof(wchar_t), "MPI_WCHAR"},
    {MPI_FLOAT_INT, sizeof(Pair<float, int>), "MPI_FLOAT_INT"},
    {MPI_DOUBLE_INT, sizeof(Pair<double, int>), "MPI_DOUBLE_INT"},
    {MPI_LONG_INT, sizeof(Pair<long, int>), "MPI_LONG_INT"},
    {MPI_2INT, sizeof(Pair<int, int>), "MPI_2INT"},
    {MPI_SHORT_INT, sizeof(Pair<short, int>), "MPI_SHORT_INT"},
    {MPI_AINT, sizeof(MPI_Aint), "MPI_AINT"},
};

const char* op_name(MPI_Op op) {
  static const char* names[] = {"MPI_OP_NULL", "MPI_MAX",  "MPI_MIN", "MPI_SUM",  "MPI_PROD",   "MPI_LAND", "MPI_BAND",
                                "MPI_LOR",     "MPI_BOR",  "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC"};
  return op >= 0 && op <= MPI_MAXLOC ? names[op] : "a user operation";
}

template <class T>
bool arith(MPI_Op op, const T* in, T* io, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    const T a = in[k], b = io[k];
    switch (op) {
      case MPI_MAX: io[k] = a > b ? a : b; break;
      case MPI_MIN: io[k] = a < b ? a : b; break;
      case MPI_SUM: io[k] = static_cast<T>(a + b); break;
      case MPI_PROD: io[k] = static_cast<T>(a * b); break;
      case MPI_LAND: io[k] = static_cast<T>(a && b); break;
      case MPI_LOR: io[k] = static_cast<T>(a || b); break;
      case MPI_LXOR: io[k] = static_cast<T>(!a != !b); break;
      default:
        if constexpr (std::is_integral_v<T>) {
          if (op == MPI_BAND) io[k] = static_cast<T>(a & b);
          else if (op == MPI_BOR) io[k] = static_cast<T>(a | b);
          else if (op == MPI_BXOR) io[k] = static_cast<T>(a ^ b);
          else return false;
        } else {
          return false;
        }
    }
  }
  return true;
}

// MINLOC and MAXLOC (MPI-3.1 5.9.4): the extreme value; on a tie, the smaller index.
template <class T>
bool loc(MPI_Op op, const void* in, void* io, std::size_t n) {
  if (op != MPI_MINLOC && op != MPI_MAXLOC) return false;
  const auto* a = static_cast<const Pair<T, int>*>(in);
  auto* b = static_cast<Pair<T, int>*>(io);
  for (std::size_t k = 0; k < n; ++k) {
    const bool a_wins = op == MPI_MINLOC ? a[k].v < b[k].v : a[k].v > b[k].v;
    if (a_wins) b[k] = a[k];
    else if (a[k].v == b[k].v && a[k].i < b[k].i) b[k].i = a[k].i;
  }
  return true;
}

template <class T>
bool typed(MPI_Op op, const void* in, void* io, std::size_t n) {
  if (op == MPI_MINLOC || op == MPI_MAXLOC) return false;
  if (std::is_floating_point_v<T> && (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)) return false;
  return arith(op, static_cast<const T*>(in), static_cast<T*>(io), n);
}

}  // namespace

const Type* predefined_type(MPI_Datatype t) {
  static const std::vector<std::optional<Type>> table = [] {
    std::vector<std::optional<Type>> v(64);
    for (const auto& p : kPredefined) {
      Type t;
      t.size = t.extent = p.size;
      t.blocks = {{0, p.size}};
      t.base = p.handle;
      t.base_count = 1;
      v[static_cast<std::size_t>(p.handle)] = t;
    }
    return v;
  }();
  if (t <= 0 || t >= static_cast<int>(table.size()) || !table[static_cast<std::size_t>(t)]) return nullptr;
  return &*table[static_cast<std::size_t>(t)];
}

std::string type_name(MPI_Datatype t) {
  for (const auto& p : kPredefined)
    if (p.handle == t) return p.name;
  return fmt::format("datatype {}", t);
}

Type make_vector(int count, int blocklength, int stride, const Type& old) {
  Type t;
  t.base = old.base;
  t.base_count = old.base_count * static_cast<std::size_t>(count) * static_cast<std::size_t>(blocklength);
  t.size = old.size * static_cast<std::size_t>(count) * static_cast<std::size_t>(blocklength);
  t.extent = count == 0 ? 0 : (static_cast<std::size_t>(count - 1) * static_cast<std::size_t>(stride) +
                               static_cast<std::size_t>(blocklength)) * old.extent;
  for (int c = 0; c < count; ++c)
    for (int b = 0; b < blocklength; ++b) {
      const std::size_t at = (static_cast<std::size_t>(c) * static_cast<std::size_t>(stride) + static_cast<std::size_t>(b)) * old.extent;
      for (const auto& [off, len] : old.blocks) {
        if (!t.blocks.empty() && t.blocks.back().first + t.blocks.back().second == at + off)
          t.blocks.back().second += len;  // adjacent: one block
        else
          t.blocks.emplace_back(at + off, len);
      }
    }
  t.committed = false;
  return t;
}

void pack(const void* buf, int count, const Type& t, std::span<std::byte> out) {
  const auto* src = static_cast<const std::byte*>(buf);
  std::size_t o = 0;
  for (int k = 0; k < count; ++k)
    for (const auto& [off, len] : t.blocks) {
      std::memcpy(out.data() + o, src + static_cast<std::size_t>(k) * t.extent + off, len);
      o += len;
    }
}

void unpack(std::span<const std::byte> in, void* buf, int count, const Type& t) {
  auto* dst = static_cast<std::byte*>(buf);
  std::size_t o = 0;
  for (int k = 0; k < count; ++k)
    for (const auto& [off, len] : t.blocks) {
      if (o >= in.size()) return;
      const std::size_t n = std::min(len, in.size() - o);
      std::memcpy(dst + static_cast<std::size_t>(k) * t.extent + off, in.data() + o, n);
      o += n;
    }
}

void apply_predefined(MPI_Op op, MPI_Datatype base, const void* in, void* io, std::size_t n) {
  bool ok = false;
  switch (base) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_INT8_T: ok = typed<std::int8_t>(op, in, io, n); break;
    case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_UINT8_T: ok = typed<std::uint8_t>(op, in, io, n); break;
    case MPI_SHORT: case MPI_INT16_T: ok = typed<std::int16_t>(op, in, io, n); break;
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: ok = typed<std::uint16_t>(op, in, io, n); break;
    case MPI_INT: case MPI_INT32_T: ok = typed<std::int32_t>(op, in, io, n); break;
    case MPI_UNSIGNED: case MPI_UINT32_T: ok = typed<std::uint32_t>(op, in, io, n); break;
    case MPI_LONG: ok = typed<long>(op, in, io, n); break;
    case MPI_UNSIGNED_LONG: ok = typed<unsigned long>(op, in, io, n); break;
    case MPI_LONG_LONG_INT: case MPI_INT64_T: ok = typed<std::int64_t>(op, in, io, n); break;
    case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: ok = typed<std::uint64_t>(op, in, io, n); break;
    case MPI_AINT: ok = typed<MPI_Aint>(op, in, io, n); break;
    case MPI_FLOAT: ok = typed<float>(op, in, io, n); break;
    case MPI_DOUBLE: ok = typed<double>(op, in, io, n); break;
    case MPI_LONG_DOUBLE: ok = typed<long double>(op, in, io, n); break;
    case MPI_C_BOOL: ok = op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR ? typed<bool>(op, in, io, n) : false; break;
    case MPI_WCHAR: ok = false; break;
    case MPI_FLOAT_INT: ok = loc<float>(op, in, io, n); break;
    case MPI_DOUBLE_INT: ok = loc<double>(op, in, io, n); break;
    case MPI_LONG_INT: ok = loc<long>(op, in, io, n); break;
    case MPI_2INT: ok = loc<int>(op, in, io, n); break;
    case MPI_SHORT_INT: ok = loc<short>(op, in, io, n); break;
    default: break;
  }
  if (!ok)
    throw MpiError{MPI_ERR_OP, fmt::format("{} is not defined on {} (MPI-3.1 section 5.9.2)", op_name(op), type_name(base))};
}

}  // namespace touchstone::mpi
