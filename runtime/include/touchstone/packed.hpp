// Plain values packed into bytes and taken back in the same order: what the processes of a split
// run swap through Partition::all_gather (touchstone/run.hpp).
#pragma once
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "touchstone/error.hpp"

namespace touchstone {

/// The error of a swap whose bytes do not hold what every process of a split run sends: `what` names
/// the part that does not fit.
[[noreturn]] inline void throw_corrupt_swap(std::string_view what = "a corrupt exchange") {
  throw RunError("a split run's processes disagree on what they swap (" + std::string(what) + ")");
}

struct Packed {
  std::vector<std::byte> bytes;

  template <class T>
  void put(const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&x);
    bytes.insert(bytes.end(), p, p + sizeof x);
  }
  void put_bytes(std::span<const std::byte> b) {
    put(b.size());
    bytes.insert(bytes.end(), b.begin(), b.end());
  }
  void put_text(std::string_view s) { put_bytes(std::as_bytes(std::span(s.data(), s.size()))); }
};

/// Reads what a Packed wrote, in order; a RunError if the bytes end first (processes that disagree
/// on what they swap).
class Unpacker {
 public:
  explicit Unpacker(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T take() {
    static_assert(std::is_trivially_copyable_v<T>);
    T x;
    std::memcpy(&x, first(sizeof x).data(), sizeof x);
    return x;
  }
  std::span<const std::byte> take_bytes() { return first(take<std::size_t>()); }
  std::string take_text() {
    const std::span<const std::byte> b = take_bytes();
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  bool empty() const { return in_.empty(); }
  /// The next n bytes as they are.
  std::span<const std::byte> first(std::size_t n) {
    if (in_.size() < n) throw_corrupt_swap();
    const std::span<const std::byte> out = in_.first(n);
    in_ = in_.subspan(n);
    return out;
  }

 private:
  std::span<const std::byte> in_;
};

}  // namespace touchstone
