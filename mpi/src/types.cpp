// Datatypes and reduction operations of the MPI interface (docs/mpi.md).
#include "types.hpp"

#include "call.hpp"
#include "check.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
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

// A predefined type: one C type, or a pair type (MPI-3.1 5.9.4) of a value and an index laid out
// as the C struct {value; index;} (`second` is the index's offset; 0 for one C type). The index is
// an int but in Fortran's pairs (MPI_2REAL ...), whose index is of the value's type.
// gfortran's INTEGER(16) (MPI_INTEGER16): GCC's 128-bit integer, outside ISO C++.
__extension__ typedef __int128 Int128;

struct Predefined {
  MPI_Datatype handle;
  std::size_t size;
  std::size_t align;
  const char* name;
  MPI_Datatype first = MPI_DATATYPE_NULL;  ///< a pair's value type
  std::size_t second = 0;
  std::size_t extent = 0;
  MPI_Datatype index = MPI_DATATYPE_NULL;  ///< a pair's index type
  std::size_t index_size = 0;
};

template <class T>
constexpr Predefined one(MPI_Datatype h, const char* name) {
  return {h, sizeof(T), alignof(T), name};
}

template <class T, class I = int>
constexpr Predefined pair(MPI_Datatype h, MPI_Datatype first, const char* name, MPI_Datatype index = MPI_INT) {
  using P = Pair<T, I>;
  return {h, sizeof(T) + sizeof(I), alignof(P), name, first, offsetof(P, i), sizeof(P), index, sizeof(I)};
}

const Predefined kPredefined[] = {
    one<char>(MPI_CHAR, "MPI_CHAR"),
    one<signed char>(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"),
    one<unsigned char>(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"),
    one<unsigned char>(MPI_BYTE, "MPI_BYTE"),
    one<unsigned char>(MPI_PACKED, "MPI_PACKED"),
    one<short>(MPI_SHORT, "MPI_SHORT"),
    one<unsigned short>(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"),
    one<int>(MPI_INT, "MPI_INT"),
    one<unsigned>(MPI_UNSIGNED, "MPI_UNSIGNED"),
    one<long>(MPI_LONG, "MPI_LONG"),
    one<unsigned long>(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"),
    one<long long>(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"),
    one<unsigned long long>(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"),
    one<float>(MPI_FLOAT, "MPI_FLOAT"),
    one<double>(MPI_DOUBLE, "MPI_DOUBLE"),
    one<long double>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"),
    one<std::int8_t>(MPI_INT8_T, "MPI_INT8_T"),
    one<std::int16_t>(MPI_INT16_T, "MPI_INT16_T"),
    one<std::int32_t>(MPI_INT32_T, "MPI_INT32_T"),
    one<std::int64_t>(MPI_INT64_T, "MPI_INT64_T"),
    one<std::uint8_t>(MPI_UINT8_T, "MPI_UINT8_T"),
    one<std::uint16_t>(MPI_UINT16_T, "MPI_UINT16_T"),
    one<std::uint32_t>(MPI_UINT32_T, "MPI_UINT32_T"),
    one<std::uint64_t>(MPI_UINT64_T, "MPI_UINT64_T"),
    one<bool>(MPI_C_BOOL, "MPI_C_BOOL"),
    one<bool>(MPI_CXX_BOOL, "MPI_CXX_BOOL"),
    one<wchar_t>(MPI_WCHAR, "MPI_WCHAR"),
    one<MPI_Aint>(MPI_AINT, "MPI_AINT"),
    one<MPI_Count>(MPI_COUNT, "MPI_COUNT"),
    one<MPI_Offset>(MPI_OFFSET, "MPI_OFFSET"),
    one<std::complex<float>>(MPI_C_COMPLEX, "MPI_C_COMPLEX"),
    one<std::complex<float>>(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX"),
    one<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"),
    one<std::complex<long double>>(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"),
    one<std::complex<float>>(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX"),
    one<std::complex<double>>(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX"),
    one<std::complex<long double>>(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX"),
    pair<float>(MPI_FLOAT_INT, MPI_FLOAT, "MPI_FLOAT_INT"),
    pair<double>(MPI_DOUBLE_INT, MPI_DOUBLE, "MPI_DOUBLE_INT"),
    pair<long>(MPI_LONG_INT, MPI_LONG, "MPI_LONG_INT"),
    pair<int>(MPI_2INT, MPI_INT, "MPI_2INT"),
    pair<short>(MPI_SHORT_INT, MPI_SHORT, "MPI_SHORT_INT"),
    pair<long double>(MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE_INT"),
    // Fortran's, as the C types of their sizes (the kinds of gfortran on x86-64).
    one<std::int32_t>(MPI_INTEGER, "MPI_INTEGER"),
    one<float>(MPI_REAL, "MPI_REAL"),
    one<double>(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION"),
    one<std::complex<float>>(MPI_COMPLEX, "MPI_COMPLEX"),
    one<std::complex<double>>(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX"),
    one<std::int32_t>(MPI_LOGICAL, "MPI_LOGICAL"),
    one<char>(MPI_CHARACTER, "MPI_CHARACTER"),
    pair<float, float>(MPI_2REAL, MPI_REAL, "MPI_2REAL", MPI_REAL),
    pair<double, double>(MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", MPI_DOUBLE_PRECISION),
    pair<std::int32_t, std::int32_t>(MPI_2INTEGER, MPI_INTEGER, "MPI_2INTEGER", MPI_INTEGER),
    one<std::int8_t>(MPI_INTEGER1, "MPI_INTEGER1"),
    one<std::int16_t>(MPI_INTEGER2, "MPI_INTEGER2"),
    one<std::int32_t>(MPI_INTEGER4, "MPI_INTEGER4"),
    one<std::int64_t>(MPI_INTEGER8, "MPI_INTEGER8"),
    one<float>(MPI_REAL4, "MPI_REAL4"),
    one<double>(MPI_REAL8, "MPI_REAL8"),
    one<std::complex<float>>(MPI_COMPLEX8, "MPI_COMPLEX8"),
    one<std::complex<double>>(MPI_COMPLEX16, "MPI_COMPLEX16"),
    one<Int128>(MPI_INTEGER16, "MPI_INTEGER16"),
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
template <class T, class I = int>
bool loc(MPI_Op op, const void* in, void* io, std::size_t n) {
  if (op != MPI_MINLOC && op != MPI_MAXLOC) return false;
  const auto* a = static_cast<const Pair<T, I>*>(in);
  auto* b = static_cast<Pair<T, I>*>(io);
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

// The logical operations, the only ones on C's bool and Fortran's LOGICAL (MPI-3.1 5.9.2): any
// nonzero value is true, and the result is 1 or 0.
template <class T>
bool logical(MPI_Op op, const void* in, void* io, std::size_t n) {
  return (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) && typed<T>(op, in, io, n);
}

// Fortran's integer and floating types: as the C types of their sizes, but without the logical
// operations, which MPI-3.1 5.9.2 defines on C integers and Fortran's LOGICAL only.
template <class T>
bool fortran(MPI_Op op, const void* in, void* io, std::size_t n) {
  return op != MPI_LAND && op != MPI_LOR && op != MPI_LXOR && typed<T>(op, in, io, n);
}

// SUM and PROD are the operations MPI-3.1 5.9.2 defines on complex types.
template <class T>
bool complex_op(MPI_Op op, const void* in, void* io, std::size_t n) {
  if (op != MPI_SUM && op != MPI_PROD) return false;
  const auto* a = static_cast<const std::complex<T>*>(in);
  auto* b = static_cast<std::complex<T>*>(io);
  for (std::size_t k = 0; k < n; ++k) b[k] = op == MPI_SUM ? a[k] + b[k] : a[k] * b[k];
  return true;
}

Type predefined_layout(const Predefined& p) {
  Type t;
  t.handle = t.base = p.handle;
  t.base_count = 1;
  t.size = p.size;
  t.align = p.align;
  if (p.first == MPI_DATATYPE_NULL) {
    t.blocks = {{0, p.size}};
    t.signature = {{p.handle, 1}};
    t.extent = t.true_extent = static_cast<MPI_Aint>(p.size);
    return t;
  }
  const std::size_t first = p.size - p.index_size;
  t.blocks = {{0, first}};
  if (p.second == first) t.blocks[0].length += p.index_size;
  else t.blocks.push_back({static_cast<MPI_Aint>(p.second), p.index_size});
  if (p.first == p.index) t.signature = {{p.first, 2}};
  else t.signature = {{p.first, 1}, {p.index, 1}};
  t.extent = static_cast<MPI_Aint>(p.extent);
  t.true_extent = static_cast<MPI_Aint>(p.second + p.index_size);
  return t;
}

std::byte* address(void* buf, MPI_Aint offset) {
  return reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(buf) + static_cast<std::uintptr_t>(offset));
}

// Appends a run, merged with the last when they touch (so a contiguous type is one run).
void append(std::vector<TypeBlock>& blocks, MPI_Aint offset, std::size_t length) {
  if (length == 0) return;
  if (!blocks.empty() && blocks.back().offset + static_cast<MPI_Aint>(blocks.back().length) == offset)
    blocks.back().length += length;
  else
    blocks.push_back({offset, length});
}

void append(std::vector<std::pair<MPI_Datatype, std::size_t>>& sig, MPI_Datatype t, std::size_t n) {
  if (n == 0) return;
  if (!sig.empty() && sig.back().first == t) sig.back().second += n;
  else sig.emplace_back(t, n);
}

// A buffer laid out as `count` elements of t (the user's layout), for operations that need it.
class Unpacked {
 public:
  Unpacked(std::size_t count, const Type& t) : count_(count), t_(t) {
    if (count == 0 || t.size == 0) return;
    const MPI_Aint last = static_cast<MPI_Aint>(count - 1) * t.extent;
    // The whole extent too: a pair type's C struct is written with its padding.
    lo_ = std::min<MPI_Aint>(0, last) + std::min(t.lb, t.true_lb);
    const MPI_Aint hi = std::max<MPI_Aint>(0, last) + std::max(t.lb + t.extent, t.true_lb + t.true_extent);
    mem_.resize(static_cast<std::size_t>(hi - lo_));
  }
  void* buf() { return address(mem_.data(), -lo_); }
  void load(std::span<const std::byte> packed) { unpack(packed, buf(), count_, t_); }
  void store(std::span<std::byte> packed) { pack(buf(), count_, t_, packed); }

 private:
  std::size_t count_;
  const Type& t_;
  MPI_Aint lo_ = 0;
  std::vector<std::byte> mem_;
};

}  // namespace

const Type* predefined_type(MPI_Datatype t) {
  static const std::vector<std::optional<Type>> table = [] {
    std::vector<std::optional<Type>> v(kPredefinedHandles);
    // at(): a handle added to mpi.h past kPredefinedHandles fails every run at once, not out of bounds.
    for (const auto& p : kPredefined) v.at(static_cast<std::size_t>(p.handle)) = predefined_layout(p);
    // MPI_LB and MPI_UB: no data, only an explicit bound where a struct places them.
    for (const MPI_Datatype marker : {MPI_LB, MPI_UB}) {
      Type t;
      t.handle = marker;
      t.lb_marked = marker == MPI_LB;
      t.ub_marked = marker == MPI_UB;
      v[static_cast<std::size_t>(marker)] = t;
    }
    return v;
  }();
  if (t <= 0 || t >= static_cast<int>(table.size()) || !table[static_cast<std::size_t>(t)]) return nullptr;
  return &*table[static_cast<std::size_t>(t)];
}

std::string type_name(MPI_Datatype t) {
  for (const auto& p : kPredefined)
    if (p.handle == t) return p.name;
  if (t == MPI_LB) return "MPI_LB";
  if (t == MPI_UB) return "MPI_UB";
  return fmt::format("datatype {}", t);
}

std::shared_ptr<const Type> shared_copy(const Type& t) {
  if (t.handle != MPI_DATATYPE_NULL) return {std::shared_ptr<const Type>{}, &t};
  if (!t.snapshot) t.snapshot = std::make_shared<const Type>(t);
  return t.snapshot;
}

MPI_Datatype new_type_handle(RankState& rs, Type t) {
  t.snapshot.reset();  // a copy of another type's
  auto free = std::find_if(rs.types.begin(), rs.types.end(), [](const auto& x) { return !x.has_value(); });
  if (free == rs.types.end()) free = rs.types.insert(free, std::nullopt);
  *free = std::move(t);
  const auto h = static_cast<MPI_Datatype>(kFirstDerivedType + (free - rs.types.begin()));
  made(rs, 't', h);
  return h;
}

namespace {

void check_signature_runs(std::size_t runs) {
  if (runs > kMaxRuns)
    throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                   fmt::format("a datatype whose type signature changes predefined type more than {} times is "
                               "not supported", kMaxRuns)};
}

// Whether count copies of c are one run: it is one run filling its extent.
bool dense(const Type& c) { return c.blocks.size() == 1 && static_cast<MPI_Aint>(c.blocks[0].length) == c.extent; }

// The runs a placement adds to a flat type map (kMaxRuns + 1 when it cannot be flat).
std::size_t runs_of(const Placement& p) {
  const Type& c = *p.type;
  if (!c.parts.empty()) return kMaxRuns + 1;
  const std::size_t per_repeat = dense(c) ? 1 : c.blocks.size() * p.count;
  return per_repeat > kMaxRuns || p.repeat > kMaxRuns ? kMaxRuns + 1 : per_repeat * p.repeat;
}

// The smallest and largest displacement of a placement's copies: copy (r, j) is at
// disp + r * stride + j * extent, linear in both, so the extremes are at the corners.
std::pair<MPI_Aint, MPI_Aint> corners(const Placement& p) {
  const MPI_Aint r = static_cast<MPI_Aint>(p.repeat - 1) * p.stride;
  const MPI_Aint j = static_cast<MPI_Aint>(p.count - 1) * p.type->extent;
  const MPI_Aint lo = p.disp + std::min<MPI_Aint>(0, r) + std::min<MPI_Aint>(0, j);
  const MPI_Aint hi = p.disp + std::max<MPI_Aint>(0, r) + std::max<MPI_Aint>(0, j);
  return {lo, hi};
}

}  // namespace

Type compose(std::span<const Placement> parts, bool as_struct) {
  Type t;
  t.committed = false;
  std::size_t runs = 0;
  for (const Placement& p : parts)
    if (p.count && p.repeat) runs = std::min(runs + runs_of(p), kMaxRuns + 1);
  const bool flat = runs <= kMaxRuns;
  std::optional<MPI_Aint> lo, hi, lo_marked, hi_marked, true_lo, true_hi;
  const auto widen = [](std::optional<MPI_Aint>& v, MPI_Aint x, bool low) {
    v = !v ? x : low ? std::min(*v, x) : std::max(*v, x);
  };
  bool mixed = false;
  const Type* last_child = nullptr;
  std::shared_ptr<const Type> last_copy;
  for (const Placement& p : parts) {
    if (p.count == 0 || p.repeat == 0) continue;
    const Type& c = *p.type;
    const std::size_t copies = p.count * p.repeat;
    if (!flat) {
      if (&c != last_child) last_child = &c, last_copy = shared_copy(c);  // one copy per child type
      t.parts.push_back({last_copy, p.disp, p.count, p.repeat, p.stride});
    } else {
      for (std::size_t r = 0; r < p.repeat; ++r) {
        const MPI_Aint from = p.disp + static_cast<MPI_Aint>(r) * p.stride;
        if (dense(c)) {
          append(t.blocks, from + c.blocks[0].offset, c.blocks[0].length * p.count);  // the copies touch
          continue;
        }
        for (std::size_t j = 0; j < p.count; ++j) {
          const MPI_Aint at = from + static_cast<MPI_Aint>(j) * c.extent;
          for (const TypeBlock& b : c.blocks) append(t.blocks, at + b.offset, b.length);
        }
      }
    }
    if (c.signature.size() == 1) {
      append(t.signature, c.signature[0].first, c.signature[0].second * copies);
    } else {
      check_signature_runs(t.signature.size() + c.signature.size() * copies);
      for (std::size_t j = 0; j < copies; ++j)
        for (const auto& [type, n] : c.signature) append(t.signature, type, n);
    }
    t.size += c.size * copies;
    t.align = std::max(t.align, c.align);
    const auto [first, last] = corners(p);
    const MPI_Aint low = first + c.lb, high = last + c.lb + c.extent;
    // MPI_LB and MPI_UB set only their own bound.
    if (c.handle != MPI_UB) widen(lo, low, true);
    if (c.handle != MPI_LB) widen(hi, high, false);
    if (c.lb_marked) widen(lo_marked, low, true);
    if (c.ub_marked) widen(hi_marked, high, false);
    if (c.size == 0) continue;
    widen(true_lo, first + c.true_lb, true);
    widen(true_hi, last + c.true_lb + c.true_extent, false);
    if (t.base == MPI_DATATYPE_NULL && !mixed) t.base = c.base;
    else if (t.base != c.base) mixed = true;
    t.base_count += c.base_count * copies;
  }
  if (mixed) t.base = MPI_DATATYPE_NULL, t.base_count = 0;
  t.lb_marked = lo_marked.has_value();
  t.ub_marked = hi_marked.has_value();
  t.lb = lo_marked ? *lo_marked : lo.value_or(0);
  MPI_Aint ub = hi_marked ? *hi_marked : hi.value_or(0);
  const auto align = static_cast<MPI_Aint>(t.align);
  if (as_struct && !t.ub_marked && (ub - t.lb) % align != 0) ub += align - (ub - t.lb) % align;
  t.extent = ub - t.lb;
  t.true_lb = true_lo.value_or(0);
  t.true_extent = true_hi.value_or(0) - t.true_lb;
  return t;
}

Type resized(const Type& old, MPI_Aint lb, MPI_Aint extent) {
  Type t = old;
  t.lb = lb;
  t.extent = extent;
  t.lb_marked = t.ub_marked = true;
  t.committed = false;
  t.handle = MPI_DATATYPE_NULL;
  t.name.clear();
  t.snapshot.reset();
  return t;
}

Type dimension(const Type& inner, std::span<const std::pair<MPI_Aint, MPI_Aint>> runs, MPI_Aint elements) {
  std::vector<Placement> parts;
  for (const auto& [start, length] : runs)
    parts.push_back({&inner, start * inner.extent, static_cast<std::size_t>(length)});
  return resized(compose(parts, false), 0, elements * inner.extent);
}

namespace {

// Calls run(address offset, length) for each run of data of one element of t placed at `at`, in
// type-map order, until run returns false (then returns false).
template <class Run>
bool each_run(const Type& t, MPI_Aint at, Run& run) {
  for (const TypeBlock& b : t.blocks)
    if (!run(at + b.offset, b.length)) return false;
  for (const TypePart& p : t.parts)
    for (std::size_t r = 0; r < p.repeat; ++r)
      for (std::size_t j = 0; j < p.count; ++j)
        if (!each_run(*p.type, at + p.disp + static_cast<MPI_Aint>(r) * p.stride +
                                   static_cast<MPI_Aint>(j) * p.type->extent, run))
          return false;
  return true;
}

}  // namespace

void pack(const void* buf, std::size_t count, const Type& t, std::span<std::byte> out) {
  std::size_t o = 0;
  auto copy = [&](MPI_Aint offset, std::size_t length) {
    std::memcpy(out.data() + o, address(const_cast<void*>(buf), offset), length);
    o += length;
    return true;
  };
  for (std::size_t k = 0; k < count; ++k) each_run(t, static_cast<MPI_Aint>(k) * t.extent, copy);
}

void for_each_run(const Type& t, std::size_t count, const std::function<void(MPI_Aint, std::size_t)>& run) {
  auto each = [&](MPI_Aint offset, std::size_t length) {
    run(offset, length);
    return true;
  };
  for (std::size_t k = 0; k < count; ++k) each_run(t, static_cast<MPI_Aint>(k) * t.extent, each);
}

void unpack(std::span<const std::byte> in, void* buf, std::size_t count, const Type& t) {
  std::size_t o = 0;
  auto copy = [&](MPI_Aint offset, std::size_t length) {
    if (o >= in.size()) return false;
    const std::size_t n = std::min(length, in.size() - o);
    std::memcpy(address(buf, offset), in.data() + o, n);
    o += n;
    return true;
  };
  for (std::size_t k = 0; k < count; ++k)
    if (!each_run(t, static_cast<MPI_Aint>(k) * t.extent, copy)) return;
}

std::optional<MPI_Count> elements(const Type& t, std::size_t bytes) {
  if (t.size == 0) return 0;
  MPI_Count per_element = 0;
  for (const auto& run : t.signature) per_element += static_cast<MPI_Count>(run.second);
  MPI_Count n = static_cast<MPI_Count>(bytes / t.size) * per_element;
  std::size_t rest = bytes % t.size;
  for (const auto& [type, count] : t.signature) {
    if (rest == 0) break;
    const std::size_t one = predefined_type(type)->size;
    const std::size_t whole = std::min(count, rest / one);
    n += static_cast<MPI_Count>(whole);
    rest -= whole * one;
    if (whole < count) break;
  }
  if (rest != 0) return std::nullopt;
  return n;
}

std::size_t element_bytes(const Type& t, MPI_Count n) {
  MPI_Count per_element = 0;
  for (const auto& run : t.signature) per_element += static_cast<MPI_Count>(run.second);
  if (per_element == 0) return 0;
  std::size_t bytes = static_cast<std::size_t>(n / per_element) * t.size;
  MPI_Count rest = n % per_element;
  for (const auto& [type, count] : t.signature) {
    const MPI_Count k = std::min(rest, static_cast<MPI_Count>(count));
    bytes += static_cast<std::size_t>(k) * predefined_type(type)->size;
    rest -= k;
  }
  return bytes;
}

PackedReducer packed_reducer(RankState& rs, MPI_Op op, MPI_Datatype dt, const Type& t, bool& commutative) {
  if (const UserOp* u = user_op(rs, op)) {
    commutative = u->commute;
    MPI_User_function* fn = u->fn;
    // The user's function sees elements in the type's own layout: unpacked copies when the type
    // is not contiguous, packed back afterwards.
    // A copy of the type: the user's function may create types, which moves the rank's table.
    return [fn, dt, type = shared_copy(t)](std::span<const std::byte> in, std::span<std::byte> inout) {
      const Type& t = *type;
      const std::size_t count = t.size ? in.size() / t.size : 0;
      int len = static_cast<int>(count);
      MPI_Datatype d = dt;
      if (t.contiguous()) return fn(const_cast<std::byte*>(in.data()), inout.data(), &len, &d);
      Unpacked a(count, t), b(count, t);
      a.load(in);
      b.load(inout);
      fn(a.buf(), b.buf(), &len, &d);
      b.store(inout);
    };
  }
  if (op < MPI_MAX || op > MPI_MAXLOC) throw MpiError{MPI_ERR_OP, fmt::format("operation {} is not valid", op)};
  commutative = true;
  if (t.size == 0) return [](std::span<const std::byte>, std::span<std::byte>) {};
  if (t.base == MPI_DATATYPE_NULL)
    throw MpiError{MPI_ERR_OP, fmt::format("{} is not defined on a datatype mixing predefined types", op_name(op))};
  const MPI_Datatype base = t.base;
  const Type& b = *predefined_type(base);
  // Checked once here, so that a bad pair fails on every rank before any message moves.
  {
    std::vector<std::byte> x(static_cast<std::size_t>(b.extent)), y(x.size());
    apply_predefined(op, base, x.data(), y.data(), 1);
  }
  const bool native = b.contiguous();  // a pair type with padding is packed without it
  return [op, base, &b, native](std::span<const std::byte> in, std::span<std::byte> inout) {
    const std::size_t n = in.size() / b.size;
    if (native) return apply_predefined(op, base, in.data(), inout.data(), n);
    Unpacked x(n, b), y(n, b);
    x.load(in);
    y.load(inout);
    apply_predefined(op, base, x.buf(), y.buf(), n);
    y.store(inout);
  };
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
    case MPI_LONG_LONG_INT: case MPI_INT64_T: case MPI_COUNT: case MPI_OFFSET:
      ok = typed<std::int64_t>(op, in, io, n);
      break;
    case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: ok = typed<std::uint64_t>(op, in, io, n); break;
    case MPI_AINT: ok = typed<MPI_Aint>(op, in, io, n); break;
    case MPI_FLOAT: ok = typed<float>(op, in, io, n); break;
    case MPI_DOUBLE: ok = typed<double>(op, in, io, n); break;
    case MPI_LONG_DOUBLE: ok = typed<long double>(op, in, io, n); break;
    case MPI_C_BOOL: case MPI_CXX_BOOL: ok = logical<bool>(op, in, io, n); break;
    case MPI_LOGICAL: ok = logical<std::int32_t>(op, in, io, n); break;
    case MPI_INTEGER1: ok = fortran<std::int8_t>(op, in, io, n); break;
    case MPI_INTEGER2: ok = fortran<std::int16_t>(op, in, io, n); break;
    case MPI_INTEGER: case MPI_INTEGER4: ok = fortran<std::int32_t>(op, in, io, n); break;
    case MPI_INTEGER8: ok = fortran<std::int64_t>(op, in, io, n); break;
    case MPI_INTEGER16: ok = fortran<Int128>(op, in, io, n); break;
    case MPI_REAL: case MPI_REAL4: ok = fortran<float>(op, in, io, n); break;
    case MPI_DOUBLE_PRECISION: case MPI_REAL8: ok = fortran<double>(op, in, io, n); break;
    case MPI_COMPLEX: case MPI_COMPLEX8: ok = complex_op<float>(op, in, io, n); break;
    case MPI_DOUBLE_COMPLEX: case MPI_COMPLEX16: ok = complex_op<double>(op, in, io, n); break;
    case MPI_2REAL: ok = loc<float, float>(op, in, io, n); break;
    case MPI_2DOUBLE_PRECISION: ok = loc<double, double>(op, in, io, n); break;
    case MPI_2INTEGER: ok = loc<std::int32_t, std::int32_t>(op, in, io, n); break;
    case MPI_C_COMPLEX: case MPI_C_FLOAT_COMPLEX: case MPI_CXX_FLOAT_COMPLEX:
      ok = complex_op<float>(op, in, io, n);
      break;
    case MPI_C_DOUBLE_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: ok = complex_op<double>(op, in, io, n); break;
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
      ok = complex_op<long double>(op, in, io, n);
      break;
    case MPI_FLOAT_INT: ok = loc<float>(op, in, io, n); break;
    case MPI_DOUBLE_INT: ok = loc<double>(op, in, io, n); break;
    case MPI_LONG_INT: ok = loc<long>(op, in, io, n); break;
    case MPI_2INT: ok = loc<int>(op, in, io, n); break;
    case MPI_SHORT_INT: ok = loc<short>(op, in, io, n); break;
    case MPI_LONG_DOUBLE_INT: ok = loc<long double>(op, in, io, n); break;
    default: break;  // MPI_WCHAR, MPI_PACKED, MPI_CHARACTER: no reduction is defined on them
  }
  if (!ok)
    throw MpiError{MPI_ERR_OP,
                   fmt::format("{} is not defined on {} (MPI-3.1 section 5.9.2)", op_name(op), type_name(base))};
}

OperandClass operand_class(MPI_Datatype base) {
  switch (base) {
    case MPI_FLOAT:
    case MPI_DOUBLE:
    case MPI_LONG_DOUBLE:
    case MPI_FLOAT_INT:
    case MPI_DOUBLE_INT:
    case MPI_REAL:
    case MPI_REAL4:
    case MPI_DOUBLE_PRECISION:
    case MPI_REAL8:
    case MPI_2REAL:
    case MPI_2DOUBLE_PRECISION: return OperandClass::floating;
    default: return OperandClass::integer;
  }
}

}  // namespace touchstone::mpi
