// The engine's event queue. Events are ordered by (virtual time, order key, insertion sequence):
// at equal times, events of messages go first, in message-id order (the message posted first
// wins a tie for a channel), then events of VPs in rank order (docs/model.md 1.3: a fixed total order).
// The insertion sequence only separates events with equal keys; since only the baton holder
// inserts, it is the same on every run as well.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "touchstone/time.hpp"

namespace touchstone::detail {

enum class Ev : std::uint8_t {
  resume,        // a VP's timed wake-up (a = wake token)
  inject,        // a message reaches its node's injection queue
  header,        // a packet's header requests its next channel
  port_next,     // a message's last packet has left its injection port
  grant,         // a link channel frees and its first waiter takes it
  ej_grant,      // an ejection port of a node frees for its waiters
  arrive,        // a message's last packet has arrived
  buffer_free,   // receive-buffer space freed at a node
  barrier,       // a hardware barrier releases
  received,      // a send held until received: a receive of its message completed (p = the send's Op)
  instant_turn,  // a VP's next runtime call after its instant's programs ran (not an event of the model)
};

/// Whether events of this kind belong to a VP: in a split run, only the process that runs the VP has
/// them (every process has every other kind, as the network's copy it keeps).
constexpr bool is_vp_event(Ev kind) {
  return kind == Ev::resume || kind == Ev::barrier || kind == Ev::received || kind == Ev::instant_turn;
}

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

/// A calendar queue on integer time (the event loop's time never goes back, so every event is at
/// or after the last one taken). Time is cut into buckets of 2^shift picoseconds; a ring of
/// kRing buckets covers the window from the current bucket on, each bucket an unsorted list of
/// pooled nodes, with a bitmap of the non-empty ones. Events beyond the window wait in a min-heap
/// on time. When the current bucket runs out, the next non-empty one (ring or heap, whichever is
/// earlier) is sorted by (t, order, seq) into `now_` and taken from its back. A push is O(1) (a
/// sorted insert only for the current bucket, which holds the few events of one or two instants;
/// one later than all of them, as VP events pushed in rank order are, is appended to `after_`
/// instead of moving all of `now_`),
/// so an event costs a node write and its share of one small sort: the radix heap before it moved
/// each 40-byte entry several times between its buckets. The order of events is exactly
/// (t, order, seq), whatever the bucket width; the width only decides the speed
/// (set_resolution: the engine makes it a sixteenth of the hop time, so a header's next hop lands
/// some buckets ahead and an instant rarely shares its bucket with another: a bucket whose events
/// were pushed in key order, as an instant's headers usually are, needs no sort).
class EventQueue {
 public:
  EventQueue() : heads_(kRing, nullptr) {}
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  /// Sets the bucket width to the largest power of two at most `width` picoseconds (at least 1).
  /// Only before the first push.
  void set_resolution(Time width) {
    shift_ = 0;
    while (shift_ < 40 && (Time{2} << shift_) <= width) ++shift_;
  }
  void push(Time t, std::uint64_t order, Ev kind, void* p, std::uint64_t a = 0) {
    if (is_vp_event(kind) && tracks_vp_events_) [[unlikely]]  // folded away where kind is a constant
      keep_vp_time(t);
    const std::uint64_t seq_kind = seq_++ << 8 | static_cast<std::uint64_t>(kind);
    ++size_;
    const std::uint64_t b = bucket_of(t);
    // The common case inline, the others out of line: this runs for every event. (A bucket after
    // the current one holds no time before last_, the time last taken.)
    if (b - cur_ - 1 < kRing - 1 && free_) [[likely]] {
      Node* n = free_;
      free_ = n->next;
      n->e.t = t;  // field by field: a whole Event built on the stack was copied with a stall
      n->e.order = order;
      n->e.seq_kind = seq_kind;
      n->e.p = p;
      n->e.a = a;
      add_to_ring(n, b);
    } else {
      push_other(Event{t, order, seq_kind, p, a});
    }
  }
  bool empty() const { return size_ == 0; }

  /// A split run's process keeps the times of its VPs' events (is_vp_event), so that it can tell
  /// the others the earliest (next_vp_time); the engine hands each such event back as it takes it
  /// (taken). Only before the first push.
  void track_vp_events() { tracks_vp_events_ = true; }
  void taken(const Event& e) {
    if (!tracks_vp_events_ || !is_vp_event(e.kind())) return;
    // Events come out in time order, so the earliest time kept is this event's.
    std::pop_heap(vp_times_.begin(), vp_times_.end(), std::greater<>{});
    vp_times_.pop_back();
  }
  Time next_vp_time() const { return vp_times_.empty() ? kNever : vp_times_.front(); }

  /// Calls f(e) for every event at time t, t being the time of the last event taken.
  template <class F>
  void for_each_at(Time t, F&& f) const {
    for (auto it = now_.rbegin(); it != now_.rend() && it->t == t; ++it) f(*it);
    if (now_.empty() || now_.front().t == t)
      for (auto it = after_.begin(); it != after_.end() && it->t == t; ++it) f(*it);
  }
  std::size_t size() const { return size_; }
  /// The first of the next n events pop() would return for which `pred` holds, or nullptr: a look
  /// ahead within the current bucket (none while a late event is pending), which events pushed
  /// later may still precede.
  template <class Pred>
  const Event* find_soon(std::size_t n, Pred&& pred) const {
    if (!late_.empty()) return nullptr;
    for (auto it = now_.rbegin(); it != now_.rend() && n > 0; ++it, --n)
      if (pred(*it)) return &*it;
    return nullptr;
  }
  /// The time of the event pop() would return (not empty()), the queue left as it is: a push
  /// after it may still be earlier than that event (but not than the last one taken).
  Time next_time() const {
    if (!late_.empty())
      return std::min_element(late_.begin(), late_.end(), [](const Event& x, const Event& y) { return x.t < y.t; })->t;
    if (!now_.empty()) return now_.back().t;
    if (!after_.empty()) return after_.front().t;
    const std::uint64_t ring = next_in_ring();
    Time t = far_.empty() ? kNever : far_.front().t;
    if (ring != ~0ULL && (far_.empty() || ring <= bucket_of(t)))
      for (const Node* n = heads_[ring & (kRing - 1)]; n; n = n->next) t = std::min(t, n->e.t);
    return t;
  }
  Event pop() {
    --size_;
    if (!late_.empty()) {
      auto it = std::min_element(late_.begin(), late_.end(), [](const Event& x, const Event& y) { return Later{}(y, x); });
      const Event e = *it;
      late_.erase(it);
      return e;
    }
    if (now_.empty()) take_after_or_next_bucket();
    const Event e = now_.back();
    now_.pop_back();
    last_ = e.t;
    return e;
  }

 private:
  static constexpr std::size_t kRing = 16384;  // buckets in the window (a power of two)
  struct Node {
    Event e;
    Node* next;
  };

  struct Later {  // now_ is sorted latest first
    bool operator()(const Event& x, const Event& y) const {
      if (x.t != y.t) return x.t > y.t;
      return x.order != y.order ? x.order > y.order : x.seq_kind > y.seq_kind;
    }
  };
  struct Earlier {
    bool operator()(const Event& x, const Event& y) const { return Later{}(y, x); }
  };
  struct LaterTime {
    bool operator()(const Event& x, const Event& y) const { return x.t > y.t; }
  };
  std::uint64_t bucket_of(Time t) const { return static_cast<std::uint64_t>(t) >> shift_; }
  // Files a filled node (taken off the free list) under bucket b of the window.
  [[gnu::always_inline]] void add_to_ring(Node* n, std::uint64_t b) {
    const std::size_t slot = b & (kRing - 1);
    n->next = heads_[slot];
    heads_[slot] = n;
    bits_[slot >> 6] |= 1ULL << (slot & 63);
    ++in_ring_;
  }

  // An event in the past, in the current bucket, beyond the window, or with no free node at hand.
  [[gnu::noinline]] void push_other(const Event& e) {
    // never expected: the engine reports it when it comes out
    if (e.t < last_) return late_.push_back(e);
    const std::uint64_t b = bucket_of(e.t);  // >= cur_, since t >= last_
    if (b == cur_) {
      // The current bucket is being taken (the ring never holds it): keep it sorted. Usually
      // behind few others. One later than all of now_ goes to after_, kept earliest first: a
      // million VPs' wake-ups at t = 0, each later than the others, were each inserted at the
      // front of now_, moving all of it (hours of memmove before the first event).
      // After_ grows at its back (each wake-up later than the last): no search for those.
      if (now_.empty() || Later{}(e, now_.front())) {
        if (after_.empty() || !Earlier{}(e, after_.back()))
          after_.push_back(e);
        else
          after_.insert(std::upper_bound(after_.begin(), after_.end(), e, Earlier{}), e);
      } else
        now_.insert(std::upper_bound(now_.begin(), now_.end(), e, Later{}), e);
    } else if (b - cur_ < kRing) {
      Node* n = free_ ? free_ : new_node();
      free_ = n->next;
      n->e = e;
      add_to_ring(n, b);
    } else {
      far_.push_back(e);
      std::push_heap(far_.begin(), far_.end(), LaterTime{});
    }
  }
  // Adds a chunk of free nodes; returns the first (still on the free list).
  Node* new_node() {
    chunks_.push_back(std::make_unique<Node[]>(kChunk));
    Node* c = chunks_.back().get();
    for (std::size_t i = 1; i + 1 < kChunk; ++i) c[i].next = &c[i + 1];
    c[0].next = &c[1];
    c[kChunk - 1].next = free_;
    free_ = &c[0];
    return &c[0];
  }

  // The next non-empty ring bucket after cur_, as an absolute bucket number; ~0 if the ring is empty.
  std::uint64_t next_in_ring() const {
    if (in_ring_ == 0) return ~0ULL;
    const std::size_t start = (cur_ + 1) & (kRing - 1);
    std::size_t w = start >> 6;
    std::uint64_t word = bits_[w] & (~0ULL << (start & 63));
    for (std::size_t n = 0; n <= kRing / 64; ++n) {
      if (word) {
        const std::size_t slot = (w << 6) | static_cast<std::size_t>(__builtin_ctzll(word));
        return cur_ + 1 + ((slot - start) & (kRing - 1));
      }
      w = (w + 1) & (kRing / 64 - 1);
      word = bits_[w];
    }
    return ~0ULL;  // not reached: in_ring_ > 0
  }

  // Out of line: push, which runs for every event, stays small enough to be inlined.
  [[gnu::noinline]] void keep_vp_time(Time t) {
    vp_times_.push_back(t);
    std::push_heap(vp_times_.begin(), vp_times_.end(), std::greater<>{});
  }

  // The current bucket's events later than all of now_ come next, if there are any; else the next
  // bucket's.
  void take_after_or_next_bucket() {
    if (after_.empty()) return next_bucket();
    now_.assign(after_.rbegin(), after_.rend());
    after_.clear();
  }

  // Makes the earliest non-empty bucket current: its events, sorted, into now_.
  void next_bucket() {
    const std::uint64_t ring = next_in_ring();
    const std::uint64_t far = far_.empty() ? ~0ULL : bucket_of(far_.front().t);
    cur_ = std::min(ring, far);
    while (!far_.empty() && bucket_of(far_.front().t) == cur_) {
      std::pop_heap(far_.begin(), far_.end(), LaterTime{});
      now_.push_back(far_.back());
      far_.pop_back();
    }
    const std::size_t slot = cur_ & (kRing - 1);
    for (Node* n = heads_[slot]; n;) {
      now_.push_back(n->e);
      Node* next = n->next;
      n->next = free_;
      free_ = n;
      n = next;
      --in_ring_;
    }
    heads_[slot] = nullptr;
    bits_[slot >> 6] &= ~(1ULL << (slot & 63));
    // Events pushed in (order, seq) order, as a whole instant's headers usually are, come off the
    // list already sorted (it is last in, first out).
    if (!std::is_sorted(now_.begin(), now_.end(), Later{})) std::sort(now_.begin(), now_.end(), Later{});
  }

  static constexpr std::size_t kChunk = 1024;
  std::vector<Node*> heads_;                        // per ring slot: its events, unsorted
  std::array<std::uint64_t, kRing / 64> bits_{};    // bit s: slot s holds events
  std::vector<std::unique_ptr<Node[]>> chunks_;     // the nodes' storage
  Node* free_ = nullptr;
  std::size_t in_ring_ = 0;
  std::vector<Event> now_;   // the current bucket's events, sorted by (t, order, seq), the next one last
  std::vector<Event> after_;  // the current bucket's events later than all of now_, the next one first
  std::vector<Event> far_;   // events beyond the ring's window: a min-heap on time
  std::vector<Event> late_;  // events before last_ (a broken invariant, reported by the engine)
  std::uint64_t cur_ = 0;    // the current bucket (absolute number: t >> shift_)
  int shift_ = 10;
  Time last_ = 0;
  std::size_t size_ = 0;
  std::uint64_t seq_ = 0;
  bool tracks_vp_events_ = false;
  std::vector<Time> vp_times_;  // track_vp_events: a min-heap of the VP events' times
};

/// The trace hash: the sum of one 64-bit term per committed event, a splitmix64 of what happened
/// and when (docs/model.md 1.4). A sum, not a chain: events that the total order (time, key,
/// insertion sequence) puts at the same time and key leave the same hash in whichever order they
/// were inserted, so a run with run-ahead (one event for a header's free hops) and one with an
/// event per hop hash alike; what differs in what happened, or when, changes a term.
class TraceHash {
 public:
  static std::uint64_t term(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
    return mix(a + 0x9e3779b97f4a7c15ULL * (b + 1) + c * 0xbf58476d1ce4e5b9ULL);
  }
  void add(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) { h_ += term(a, b, c); }
  std::uint64_t value() const { return h_; }
  /// Takes back terms added since value() was `before` (their sum, value() - before).
  void take_back(std::uint64_t terms) { h_ -= terms; }
  /// Adds the terms another part of the run hashed apart (a process of a split run), their sum.
  void add_sum(std::uint64_t terms) { h_ += terms; }

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
