// The engine's event queue. Events are ordered by (virtual time, order key, insertion sequence):
// at equal times, events of messages go first, in message-id order (the message posted first
// wins a tie for a channel), then events of VPs in rank order (docs/model.md 1.3: a fixed total order).
// The insertion sequence only separates events with equal keys; since only the baton holder
// inserts, it is the same on every run as well.
#pragma once
#include <algorithm>
#include <array>
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
  std::uint64_t seq_kind;  // insertion order << 8 | kind: orders as the insertion order alone
  void* p;
  std::uint64_t a;
  Ev kind() const { return static_cast<Ev>(seq_kind & 0xff); }
};

/// A radix heap on time (the event loop's time never goes back, so every event is at or after the
/// last one taken) with a binary heap for the events at the current time. Bucket b > 0 holds the
/// events whose time first differs from the current time's in bit b-1; taking the next time
/// redistributes the lowest non-empty bucket into lower ones, so each event moves a few times at
/// most, in O(1) each, instead of the O(log n) sifts of 48-byte entries a heap on (t, order, seq)
/// made per event. Events at the current time -- about ten on average in an all-to-all: the
/// model's times fall on a grid of hop and byte times -- are kept sorted by (order, seq). The order of events is
/// exactly (t, order, seq) as before.
class EventQueue {
 public:
  void push(Time t, std::uint64_t order, Ev kind, void* p, std::uint64_t a = 0) {
    const Event e{t, order, seq_++ << 8 | static_cast<std::uint64_t>(kind), p, a};
    ++size_;
    if (t < last_) return late_.push_back(e);  // never expected: the engine reports it when it comes out
    const int b = bucket(t);
    if (b == 0) {
      // Usually behind few others: a sorted insert beats a heap's sifts of whole entries.
      now_.insert(std::upper_bound(now_.begin(), now_.end(), e, later), e);
      return;
    }
    buckets_[static_cast<std::size_t>(b)].push_back(e);
    nonempty_ |= 1ULL << (b - 1);
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  Event pop() {
    --size_;
    if (!late_.empty()) {
      auto it = std::min_element(late_.begin(), late_.end(), [](const Event& x, const Event& y) { return earlier(x, y); });
      const Event e = *it;
      late_.erase(it);
      return e;
    }
    if (now_.empty()) advance_time();
    const Event e = now_.back();
    now_.pop_back();
    return e;
  }

 private:
  static bool earlier(const Event& x, const Event& y) {
    if (x.t != y.t) return x.t < y.t;
    return x.order != y.order ? x.order < y.order : x.seq_kind < y.seq_kind;
  }
  static bool later(const Event& x, const Event& y) {  // now_ is sorted latest first
    return x.order != y.order ? x.order > y.order : x.seq_kind > y.seq_kind;
  }
  int bucket(Time t) const {
    const auto diff = static_cast<std::uint64_t>(t) ^ static_cast<std::uint64_t>(last_);
    return diff == 0 ? 0 : 64 - __builtin_clzll(diff);
  }
  // Makes the earliest time in the buckets the current time: its events go to now_, the others of
  // its bucket to lower buckets (they share more leading bits with the new time).
  void advance_time() {
    const int b = __builtin_ctzll(nonempty_) + 1;
    std::vector<Event>& from = buckets_[static_cast<std::size_t>(b)];
    Time least = from.front().t;
    for (const Event& e : from) least = std::min(least, e.t);
    last_ = least;
    for (const Event& e : from) {
      const int to = bucket(e.t);
      if (to == 0) {
        now_.push_back(e);
      } else {
        buckets_[static_cast<std::size_t>(to)].push_back(e);
        nonempty_ |= 1ULL << (to - 1);
      }
    }
    from.clear();
    nonempty_ &= ~(1ULL << (b - 1));
    std::sort(now_.begin(), now_.end(), later);
  }

  std::array<std::vector<Event>, 65> buckets_;
  std::uint64_t nonempty_ = 0;  // bit b-1: bucket b holds events
  std::vector<Event> now_;      // the events at time last_, sorted by (order, seq), the next one last
  std::vector<Event> late_;     // events before last_ (a broken invariant, reported by the engine)
  Time last_ = 0;
  std::size_t size_ = 0;
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
