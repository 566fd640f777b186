// Active messages and remote atomics (paper 003; semantics in docs/model.md 7).
//
//   p.am_register(7, [](AmContext& c) {
//     const std::array<std::int64_t, 1> twice{c.args()[0] * 2};
//     c.reply(twice);
//   });
//   p.barrier();                                  // every handler exists before anyone sends
//   const std::array<std::int64_t, 1> a{21};
//   AmFuture f = p.am_request(peer, 7, a);
//   AmReply r = p.am_wait(f);                     // r.args[0] == 42
//   if (p.test_and_set(peer, 0) == 0) { ... }     // peer's registered word 0 was free
//
// A handler runs at the destination when the request arrives, inside the engine: it may compute,
// read and write the destination's registered words and reply once, but never block or call a Proc.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "touchstone/proc.hpp"
#include "touchstone/time.hpp"

namespace touchstone {

namespace detail {
class ActiveMessages;
}

/// At most this many argument words per request or reply (8 bytes each on the wire).
inline constexpr std::size_t kAmMaxArgs = 8;

/// What a running handler sees and may do.
class AmContext {
 public:
  int rank() const { return rank_; }      ///< the destination (where the handler runs)
  int source() const { return source_; }  ///< the requester
  int handler() const { return handler_; }
  /// Virtual time on the destination's CPU: the handler's start plus what it has spent so far.
  Time now() const { return now_; }
  std::span<const std::int64_t> args() const { return args_; }
  std::span<const std::byte> payload() const { return payload_; }
  /// Handler work, charged to the destination's CPU.
  void compute(Time dt);
  /// The destination's registered word `id` (UsageError if it registered none).
  std::int64_t& word(int id);
  /// Sends the reply (at most once; only to a request made with am_request).
  void reply(std::span<const std::int64_t> args, std::span<const std::byte> payload = {});

 private:
  friend class detail::ActiveMessages;
  detail::ActiveMessages* am_ = nullptr;
  int rank_ = 0, source_ = 0, handler_ = 0;
  Time now_ = 0;
  std::span<const std::int64_t> args_;
  std::span<const std::byte> payload_;
  bool wants_reply_ = false, replied_ = false;
  std::uint64_t ticket_ = 0;
};

using AmHandler = std::function<void(AmContext&)>;

/// A reply, as received by the requester.
struct AmReply {
  int source = -1;
  std::vector<std::int64_t> args;
  std::vector<std::byte> payload;
  Time arrival = 0;
};

/// An active-message request waiting for its reply. Complete it exactly once with am_wait/am_test
/// (an uncompleted future is reported at the end of the run, as a dropped receive is).
class AmFuture {
 public:
  AmFuture() = default;
  bool active() const { return reply_.active(); }

 private:
  friend class Proc;
  Request reply_;
  std::vector<std::byte> buf_;
};

}  // namespace touchstone
