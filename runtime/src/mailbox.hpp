// A VP's receive side (docs/model.md 2.5): the receives it has posted and the messages that
// arrived before a matching receive (the unexpected queue), matched in MPI order, with the queue
// entries a real implementation would examine counted for the matching cost. It knows messages
// and receive requests, not the engine: what a match then does (completing, clear to send, race
// records) is the caller's.
//
// Matching does not scan long queues. Both queues are linked lists in queue order; while one holds
// more than a few entries it is also indexed by (context, source, tag) with wildcards: a posted
// receive sits in the one bucket of its own pattern, and an arrival looks at the heads of the four
// buckets that can take it (of the one of its own pattern while no wildcard receive is posted); an
// unexpected message sits in the four buckets of the patterns that match it (in the one of its own
// until a wildcard receive first looks), and a new receive looks at the head of its pattern's
// bucket. Most programs post no wildcard, and each bucket looked at is a hash probe that misses
// the cache: the wildcard buckets cost nothing until used. The model still charges
// what the linear queues of a real implementation would examine: an entry's position in its queue
// is counted by a Fenwick tree over the queue's numbering. (With 1,023 receives posted per VP
// every arrival used to walk them on the host: O(p) per message.) Short queues are walked, which
// costs less than hashing; an index is dropped when its queue empties.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "op.hpp"

namespace touchstone::detail {

class Mailbox {
 public:
  /// Whether receive (or probe pattern) op takes message m.
  static bool matches(const Op& op, const Msg& m) {
    return op.ctx == m.ctx && (op.src == any_source || op.src == m.src) && (op.tag == any_tag || op.tag == m.tag);
  }

  /// Its VP posts receive op: returns the earliest-arrived matching unexpected message, taken out
  /// of the queue, or nullptr after queueing op as posted. Every unexpected message a linear walk
  /// would examine counts in op->examined.
  Msg* post(Op* op);
  /// Message m arrives at virtual time t: returns the first posted receive that takes it, taken
  /// out of the queue, or nullptr after queueing m as unexpected. The receives posted by t form a
  /// prefix of the queue (a VP posts in clock order): a linear walk of the arrival examines those
  /// up to the match (m.examined). A receive that its VP posts only after t (it ran ahead of the
  /// event loop) finds m unexpected: its own walk examines every message queued ahead and then m
  /// (op->examined).
  Op* arrive(Msg& m, Time t);
  /// The receive-queue entries the search of arrive(m, t) would examine, without taking anything
  /// out: what a node that demultiplexes per packet pays to find the receive of a packet of m that
  /// reaches it at t (docs/model.md 2.18).
  std::uint64_t examined_by(const Msg& m, Time t);
  /// The posted receive that message m would take if it arrived now, left in the queue; nullptr
  /// if none.
  Op* taker(const Msg& m) { return search(m, kNever, nullptr); }
  /// Takes a posted receive that never matched out of the queue (its request was dropped).
  void cancel(Op* op);
  /// The earliest-arrived unexpected message matching pattern, left in the queue; nullptr if none.
  const Msg* find(const Op& pattern) const;
  /// The unexpected messages in arrival order, linked by Msg::next.
  const Msg* unexpected() const { return unexpected_head_; }

 private:
  /// Counts the entries still queued among those numbered below n (a Fenwick tree over the
  /// numbers handed out since the queue was last empty).
  class Positions {
   public:
    std::uint64_t add();  // numbers the next entry
    void remove(std::uint64_t k);
    std::uint64_t below(std::uint64_t n) const;
    bool queued(std::uint64_t k) const { return k < numbered_ && alive_[k]; }
    std::uint64_t count() const { return count_; }
    std::uint64_t numbered() const { return numbered_; }
    void clear() { numbered_ = count_ = 0, alive_.clear(), tree_.clear(); }

   private:
    void bump(std::uint64_t k, int delta);
    std::vector<std::int32_t> tree_;  // 1-based Fenwick tree; size a power of two
    std::vector<std::uint8_t> alive_;
    std::uint64_t numbered_ = 0, count_ = 0;
  };
  struct Key {
    std::uint64_t ctx;
    int src, tag;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::uint64_t h = k.ctx * 0x9e3779b97f4a7c15ULL ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32 |
                                                         static_cast<std::uint32_t>(k.tag));
      h ^= h >> 29;
      return static_cast<std::size_t>(h * 0xbf58476d1ce4e5b9ULL);
    }
  };
  /// The entries of one pattern in queue order; taken entries are dropped lazily (when they reach
  /// the front, their number and mailbox no longer name them: messages and requests are pooled and
  /// may be queued again, elsewhere or later).
  template <class T>
  struct Bucket {
    std::vector<std::pair<std::uint64_t, T*>> items;
    std::size_t head = 0;
    T* front(const Mailbox* box);
    void push(std::uint64_t k, T* x) { items.emplace_back(k, x); }
  };

  /// A queue is indexed while it holds more than this many entries (and until it empties).
  static constexpr std::size_t kIndexFrom = 16;

  /// The first posted receive that takes m arriving at t (left in the queue), nullptr if none, and
  /// the entries a linear walk examines to find it (added to *examined, unless null): shared by
  /// arrive, examined_by and taker.
  Op* search(const Msg& m, Time t, std::uint64_t* examined);
  std::uint64_t posted_by(Time t) const;  // with posted_in_order_: receives numbered below this were posted by t
  void index_posted(Op* op);
  void index_unexpected(Msg* m);
  void index_unexpected_wild();  // the wildcard buckets of every unexpected message, in queue order
  void take_unexpected(Msg* m);

  Op* posted_head_ = nullptr;
  Op* posted_tail_ = nullptr;
  std::size_t posted_count_ = 0, unexpected_count_ = 0;
  // Posted receives with a wildcard source or tag: while there are none, an arrival looks at the
  // one bucket of its own pattern, not at the three wildcard ones (most programs post none).
  std::size_t posted_wild_ = 0;
  // An indexed unexpected message is filed under its own pattern, and under the three wildcard
  // ones only once a wildcard receive has looked (then for every message, until the index drops).
  bool unexpected_wild_indexed_ = false;
  bool posted_indexed_ = false, unexpected_indexed_ = false;
  Positions posted_, unexpected_;
  std::unordered_map<Key, Bucket<Op>, KeyHash> posted_index_;
  std::unordered_map<Key, Bucket<Msg>, KeyHash> unexpected_index_;
  std::vector<Time> posted_at_;  // by number: when each receive was posted
  bool posted_in_order_ = true;  // posted_at_ never decreases (the model's rule; checked, not assumed)
  Msg* unexpected_head_ = nullptr;
  Msg* unexpected_tail_ = nullptr;
};

}  // namespace touchstone::detail
