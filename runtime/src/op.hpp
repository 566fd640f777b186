// A pending send or receive (the engine's side of a Request) and the group data it refers to.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "network.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::detail {

class Engine;
struct Vp;

struct GroupData {
  std::vector<int> members;                 // world ranks in group order
  std::vector<std::pair<int, int>> by_world;  // (world rank, group rank), sorted
  std::uint64_t ctx = 0;
  // Group rank i is world rank i for every member (the world, or its first n ranks, in order):
  // computed once when the group is made, so that asking costs O(1) rather than O(n) per caller.
  bool in_world_order = false;
  // The hash of `members` that the group table files the group under: kept so that a group made
  // like this one (GroupTable::make_like) costs no pass over the members to find its twin.
  std::uint64_t members_hash = 0;
  // The context of the group this one was made like, 0 if none: a twin made like the same group
  // has the same members without comparing them (contexts are never reused within a run).
  std::uint64_t made_like = 0;
};

/// A pending send, receive or task (Proc::spawn), owned by the engine, referenced by a Request.
/// A task completes like a send: at `done`, its clock when its function returned.
struct Op {
  enum class Kind : std::uint8_t { send, recv, task };
  Engine* engine = nullptr;
  // The Request object that holds it, if any: a Request still holding an operation when
  // its engine ends is detached (its op_ cleared), so it cannot touch the freed engine later.
  Request* holder = nullptr;
  Kind kind = Kind::send;
  int owner = 0;
  Vp* vp = nullptr;      // who posted it and is woken by its completion: the rank's VP or one of its tasks
  bool awaited = false;  // the owner is blocked waiting for it
  bool dropped = false;  // its Request was destroyed before completion
  // send
  Time done = kNever;    // complete: last packet left the node (and, synchronous, was matched)
  bool synchronous = false;
  Time left = kNever;     // synchronous: last packet left the node
  Time matched_at = kNever;  // synchronous: acknowledged (held: received) from this time on
  // NetworkParams::send_holds_until_received: receives of this send's messages not yet completed,
  // and the latest completion so far (the send completes with the last one).
  std::uint32_t unreceived = 0;
  Time received = 0;
  std::uint64_t msg_id = 0;
  Msg* lent = nullptr;   // the message still reading this send's buffer (Msg::lender)
  int dst = 0;           // world rank, tag and size: for reports
  std::size_t size = 0;
  bool rendezvous = false;  // flow control: waits for the receiver's clear to send (docs/model.md 2.16)
  // receive
  int src = any_source;  // world rank or any_source
  int tag = any_tag;
  std::uint64_t ctx = 0;
  std::shared_ptr<const GroupData> group;  // translates the source rank in the Status
  std::span<std::byte> buf;
  Time posted = 0;
  std::uint32_t examined = 0;  // unexpected messages examined when posted (docs/model.md 2.5)
  std::uint64_t call = 0;      // the owner's receive-call number, from 1 (race reports)
  std::uint32_t wild = 0;      // its race record + 1, for a wildcard receive under RunOptions::races
  Msg* matched = nullptr;
  Msg* fixed_msg = nullptr;    // the message known to be its match before it arrives (Engine::fix_match)
  std::uint32_t fix_look = 0;  // the last Engine::fix_inbound that found a message it takes
  std::uint32_t slot = 0;  // its index among the operations of the waitall that waits for it
  std::uint32_t wait_pos = 0;  // its place in its owner's WaitList while awaited there
  bool awaiting_data = false;  // matched a request to send; its data is on the way (docs/model.md 2.16)
  bool truncating = false;  // a longer message fills buf and sets Status::truncated (irecv_truncating)
  bool forced = false;      // a wildcard receive whose source RunOptions::schedule forced (reports)
  Op* next = nullptr;  // posted-receive queue (Mailbox)
  Op* prev = nullptr;
  std::uint64_t queued = ~0ULL;  // its number in its VP's indexed posted-receive queue (Mailbox)
  const void* queued_in = nullptr;  // ... and that Mailbox
};

/// The operations a blocked VP waits for, in the order it began to await them (deadlock reports
/// and traces list them so). A waitall for thousands of receives drops each one as it matches, in
/// any order: dropping leaves a hole, skipped when the list is read, rather than moving every later
/// entry down (a gather's root on 4,096 VPs spent 28% of its instructions moving them).
class WaitList {
 public:
  class iterator {
   public:
    iterator(const Op* const* at, const Op* const* end) : at_(at), end_(end) { skip(); }
    const Op* operator*() const { return *at_; }
    iterator& operator++() {
      ++at_;
      skip();
      return *this;
    }
    bool operator!=(const iterator& o) const { return at_ != o.at_; }

   private:
    void skip() {
      while (at_ != end_ && !*at_) ++at_;
    }
    const Op* const* at_;
    const Op* const* end_;
  };
  /// Appends op, which then lies at place `op->wait_pos` until the list is cleared.
  void push_back(Op* op) {
    op->wait_pos = static_cast<std::uint32_t>(ops_.size());
    ops_.push_back(op);
    ++live_;
  }
  /// Removes op (in the list) in O(1).
  void drop(const Op* op) {
    ops_[op->wait_pos] = nullptr;
    --live_;
  }
  void clear() {
    ops_.clear();
    live_ = 0;
  }
  std::size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  iterator begin() const { return {ops_.data(), ops_.data() + ops_.size()}; }
  iterator end() const { return {ops_.data() + ops_.size(), ops_.data() + ops_.size()}; }

 private:
  std::vector<const Op*> ops_;
  std::size_t live_ = 0;
};

}  // namespace touchstone::detail
