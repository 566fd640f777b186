// Active messages and remote atomics inside the engine (docs/model.md 7).
//
// A request is an ordinary message in the reserved context kAmCtx | ticket, its tag holding the
// handler id and the number of argument words. When it arrives the engine runs the handler at
// once, on the destination's behalf, and charges the destination's CPU; a reply is an ordinary
// message in context kAmCtx | kAmReplyBit | ticket, which the requester's posted receive matches.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "touchstone/active_messages.hpp"
#include "touchstone/time.hpp"

namespace touchstone::detail {

class Engine;
struct Msg;
struct Op;
struct Vp;

class ActiveMessages {
 public:
  ActiveMessages(Engine& e, int nodes);

  /// True while a handler runs: every Proc call is then an error (handlers may not block).
  bool in_handler() const { return running_rank_ >= 0; }
  /// Whether messages may run code on `rank`'s memory inside the engine: it has registered a
  /// handler or a word.
  bool serves(int rank) const {
    const Node* n = nodes_[static_cast<std::size_t>(rank)].get();
    return n && (!n->handlers.empty() || !n->words.empty());
  }
  std::string blocking_error() const;
  /// The run's virtual time limit (AmContext::compute checks a handler's clock against it).
  Time time_limit() const;

  void add_handler(Vp& v, int id, AmHandler h);
  void add_word(Vp& v, int id, std::int64_t initial);
  std::int64_t& word(int rank, int id);

  /// Sends a request from v (whose clock pays the send overhead). With `reply_buf` the handler
  /// must reply: a receive for the reply is posted into *reply_buf (sized here) and returned.
  Op* request(Vp& v, int dst, int id, std::span<const std::int64_t> args, std::span<const std::byte> payload,
              std::vector<std::byte>* reply_buf, std::size_t reply_capacity);
  /// Decodes a reply received into buf (tag = number of argument words).
  static AmReply decode_reply(const Status& st, std::span<const std::byte> buf);

  /// The engine's arrival hook for a request: runs its handler (Engine::on_arrival).
  void on_request(Msg& m, Time t);
  /// AmContext::reply: posts the reply at the handler's current time.
  void reply(AmContext& c, std::span<const std::int64_t> args, std::span<const std::byte> payload);

 private:
  struct Node {
    std::unordered_map<int, AmHandler> handlers;
    std::unordered_map<int, std::int64_t> words;
    Time handler_free = 0;  // the CPU finishes its last handler then
    std::uint32_t requests = 0;  // requests with a reply it made: its tickets' count
  };
  void run_builtin(AmContext& c);
  Node& node(int rank);  // made at its first use

  Engine& e_;
  // Per rank, made only for the ranks that use active messages: 128 bytes for every rank of a
  // 1,048,576-VP machine were 134 MB, in each process of a split run too.
  std::vector<std::unique_ptr<Node>> nodes_;
  int running_rank_ = -1, running_id_ = 0;
};

}  // namespace touchstone::detail
