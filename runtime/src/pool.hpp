// A free-list pool of objects that lives as long as its engine: objects of an aborted run are
// reclaimed with the pool, and the hot paths allocate nothing once the pool has warmed up.
#pragma once
#include <memory>
#include <vector>

namespace touchstone::detail {

template <class T>
class Pool {
 public:
  T* get() {
    if (free_.empty()) {
      blocks_.push_back(std::make_unique<T[]>(kBlock));
      for (std::size_t i = kBlock; i-- > 0;) free_.push_back(&blocks_.back()[i]);
    }
    T* p = free_.back();
    free_.pop_back();
    return p;
  }
  /// Returns an object; the caller has reset what must not survive.
  void put(T* p) { free_.push_back(p); }
  /// Calls f on every object the pool has made, in use or free (free ones as their last user left them).
  template <class F>
  void for_each(F&& f) {
    for (auto& b : blocks_)
      for (std::size_t i = 0; i < kBlock; ++i) f(b[i]);
  }

 private:
  static constexpr std::size_t kBlock = 256;
  std::vector<std::unique_ptr<T[]>> blocks_;
  std::vector<T*> free_;
};

}  // namespace touchstone::detail
