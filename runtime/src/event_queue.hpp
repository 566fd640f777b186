// The engine's event queue. Events are ordered by (virtual time, order key, insertion sequence):
// at equal times, events of messages go first, in message-id order (the message posted first
// wins a tie for a channel), then events of VPs in rank order (docs/model.md 1.3: a fixed total order).
// The insertion sequence only separates events with equal keys; since only the baton holder
// inserts, it is the same on every run as well.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "touchstone/time.hpp"

namespace touchstone::detail {

enum class Ev : std::uint8_t {
  resume,       // a VP's timed wake-up (a = wake token)
  inject,       // a message reaches its node's injection queue
  header,       // a packet's header requests its next channel
  port_next,    // a message's last packet has left its injection port
  grant,        // a link channel frees and its first waiter takes it
  ej_grant,     // an ejection port of a node frees for its waiters
  arrive,       // a message's last packet has arrived
  buffer_free,  // receive-buffer space freed at a node
  barrier,      // a hardware barrier releases
};

/// Order key of events that belong to a VP rather than to a message.
constexpr std::uint64_t vp_order(int rank) { return (1ULL << 62) + static_cast<std::uint64_t>(rank); }

struct Event {
  Time t;
  std::uint64_t order;  // message id, or vp_order(rank)
  std::uint64_t seq;    // insertion order
  void* p;
  std::uint64_t a;
  Ev kind;
};

/// The queue is a sorted run plus a 4-ary min-heap. An event that sorts after the run's last
/// event is appended to the run in O(1); any other goes to the heap; pop takes the smaller of the
/// two fronts. Most events are headers moving on one t_hop after "now", and "now" only grows, so
/// they arrive in order and never touch the heap. The order of events is exactly (t, order, seq)
/// whichever container holds them.
class EventQueue {
 public:
  void push(Time t, std::uint64_t order, Ev kind, void* p, std::uint64_t a = 0) {
    const Event e{t, order, seq_++, p, a, kind};
    if (run_size_ == 0 || !earlier(e, run_back())) {
      run_push(e);
      return;
    }
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return run_size_ == 0 && heap_.empty(); }
  Event pop() {
    if (run_size_ && (heap_.empty() || earlier(run_[run_head_], heap_[0]))) {
      const Event e = run_[run_head_];
      run_head_ = (run_head_ + 1) & (run_.size() - 1);
      --run_size_;
      return e;
    }
    Event e = heap_[0];
    heap_[0] = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return e;
  }
  std::size_t size() const { return heap_.size() + run_size_; }

 private:
  static bool earlier(const Event& x, const Event& y) {
    if (x.t != y.t) return x.t < y.t;
    return x.order != y.order ? x.order < y.order : x.seq < y.seq;
  }
  // The run is a ring buffer whose capacity is a power of two.
  const Event& run_back() const { return run_[(run_head_ + run_size_ - 1) & (run_.size() - 1)]; }
  void run_push(const Event& e) {
    if (run_size_ == run_.size()) {
      std::vector<Event> bigger(std::max<std::size_t>(64, 2 * run_.size()));
      for (std::size_t i = 0; i < run_size_; ++i) bigger[i] = run_[(run_head_ + i) & (run_.size() - 1)];
      run_.swap(bigger);
      run_head_ = 0;
    }
    run_[(run_head_ + run_size_) & (run_.size() - 1)] = e;
    ++run_size_;
  }
  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!earlier(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(std::size_t i) {
    Event e = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t last = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < last; ++c)
        if (earlier(heap_[c], heap_[best])) best = c;
      if (!earlier(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  std::vector<Event> run_;
  std::size_t run_head_ = 0, run_size_ = 0;
  std::uint64_t seq_ = 0;
};

/// The trace hash: a running 64-bit hash of the committed events, in commit order.
class TraceHash {
 public:
  void add(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
    h_ = mix(h_ ^ mix(a + 0x9e3779b97f4a7c15ULL * (b + 1) + c * 0xbf58476d1ce4e5b9ULL));
  }
  std::uint64_t value() const { return h_; }

 private:
  static std::uint64_t mix(std::uint64_t x) {  // splitmix64 finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  std::uint64_t h_ = 0x5bd1e9955bd1e995ULL;
};

}  // namespace touchstone::detail
