// The engine's event queue: events ordered by (virtual time, insertion sequence). Events are
// inserted only by the one thread holding the baton, so the insertion sequence -- and with it
// the order of events at equal times -- is the same on every run (SPEC 1.2).
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
  port_next,    // an injection port's current packet has left it
  grant,        // a link channel frees and its first waiter takes it
  ej_grant,     // an ejection port of a node frees for its waiters
  arrive,       // a message's last packet has arrived
  buffer_free,  // receive-buffer space freed at a node
  barrier,      // a hardware barrier releases
};

struct Event {
  Time t;
  std::uint64_t seq;
  void* p;
  std::uint64_t a;
  Ev kind;
};

class EventQueue {
 public:
  void push(Time t, Ev kind, void* p, std::uint64_t a = 0) {
    heap_.push_back(Event{t, seq_++, p, a, kind});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.front(); }
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  std::size_t size() const { return heap_.size(); }

 private:
  static bool later(const Event& x, const Event& y) { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
  std::vector<Event> heap_;
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
