// A VP's receive side (docs/model.md 2.5): the receives it has posted and the messages that
// arrived before a matching receive (the unexpected queue), matched in MPI order, with the queue
// entries a real implementation would examine counted for the matching cost. It knows messages
// and receive requests, not the engine: what a match then does (completing, clear to send, race
// records) is the caller's.
#pragma once
#include "op.hpp"

namespace touchstone::detail {

class Mailbox {
 public:
  /// Whether receive (or probe pattern) op takes message m.
  static bool matches(const Op& op, const Msg& m) {
    return op.ctx == m.ctx && (op.src == any_source || op.src == m.src) && (op.tag == any_tag || op.tag == m.tag);
  }

  /// Its VP posts receive op: returns the earliest-arrived matching unexpected message, taken out
  /// of the queue, or nullptr after queueing op as posted. Every unexpected message examined
  /// counts in op->examined.
  Msg* post(Op* op);
  /// Message m arrives at virtual time t: returns the first posted receive that takes it, taken
  /// out of the queue, or nullptr after queueing m as unexpected. The receives posted by t form a
  /// prefix of the queue (a VP posts in clock order): the arrival examines those (m.examined). A
  /// receive that its VP posts only after t (it ran ahead of the event loop) finds m unexpected:
  /// its own walk examines every message queued ahead and then m (op->examined).
  Op* arrive(Msg& m, Time t);
  /// Takes a posted receive that never matched out of the queue (its request was dropped).
  void cancel(Op* op);
  /// The earliest-arrived unexpected message matching pattern, left in the queue; nullptr if none.
  const Msg* find(const Op& pattern) const;
  /// The unexpected messages in arrival order, linked by Msg::next.
  const Msg* unexpected() const { return unexpected_head_; }

 private:
  void take_unexpected(Msg* prev, Msg* m);

  Op* posted_head_ = nullptr;
  Op* posted_tail_ = nullptr;
  Msg* unexpected_head_ = nullptr;
  Msg* unexpected_tail_ = nullptr;
};

}  // namespace touchstone::detail
