// Active messages and remote atomics (docs/model.md 7).
#include "active_messages.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "checked_time.hpp"
#include "engine.hpp"
#include "touchstone/error.hpp"

namespace touchstone::detail {

namespace {
// Handler ids on the wire: tag = (id + kBuiltins) << 4 | argument words. The remote atomics are
// the built-in handlers -1..-4; user handlers are 0 .. kMaxHandler - 1.
constexpr int kBuiltins = 4;
constexpr int kMaxHandler = 1 << 26;
enum Builtin : int { kTestAndSet = -1, kSwap = -2, kCompareExchange = -3, kFetchAdd = -4 };
constexpr std::uint64_t kTicketMask = kAmReplyBit - 1;

std::vector<std::byte> encode(std::span<const std::int64_t> args, std::span<const std::byte> payload) {
  if (args.size() > kAmMaxArgs)
    throw UsageError(fmt::format("an active message carries at most {} argument words (got {})", kAmMaxArgs, args.size()));
  std::vector<std::byte> out(args.size() * 8 + payload.size());
  if (!args.empty()) std::memcpy(out.data(), args.data(), args.size() * 8);
  if (!payload.empty()) std::memcpy(out.data() + args.size() * 8, payload.data(), payload.size());
  return out;
}

std::string handler_name(int id) {
  switch (id) {
    case kTestAndSet: return "test_and_set";
    case kSwap: return "swap";
    case kCompareExchange: return "compare_exchange";
    case kFetchAdd: return "fetch_add";
    default: return fmt::format("handler {}", id);
  }
}
}  // namespace

ActiveMessages::ActiveMessages(Engine& e, int nodes) : e_(e), nodes_(static_cast<std::size_t>(nodes)) {}

ActiveMessages::Node& ActiveMessages::node(int rank) {
  std::unique_ptr<Node>& n = nodes_[static_cast<std::size_t>(rank)];
  if (!n) n = std::make_unique<Node>();
  return *n;
}

std::string ActiveMessages::blocking_error() const {
  return fmt::format("rank {}'s active-message {} called the Proc (a blocking or communicating call such as recv, "
                     "barrier or an atomic): handlers run inside the engine and may not block; they may only "
                     "compute, use registered words and reply through their AmContext",
                     running_rank_, handler_name(running_id_));
}

void ActiveMessages::add_handler(Vp& v, int id, AmHandler h) {
  if (id < 0 || id >= kMaxHandler)
    throw UsageError(fmt::format("rank {}: active-message handler id {} out of range 0..{}", v.rank, id, kMaxHandler - 1));
  if (!h) throw UsageError(fmt::format("rank {}: active-message handler {} is empty", v.rank, id));
  if (!node(v.rank).handlers.emplace(id, std::move(h)).second)
    throw UsageError(fmt::format("rank {}: active-message handler {} registered twice", v.rank, id));
}

void ActiveMessages::add_word(Vp& v, int id, std::int64_t initial) {
  if (!node(v.rank).words.emplace(id, initial).second)
    throw UsageError(fmt::format("rank {}: word {} registered twice", v.rank, id));
}

std::int64_t& ActiveMessages::word(int rank, int id) {
  auto& words = node(rank).words;
  auto it = words.find(id);
  if (it == words.end()) throw UsageError(fmt::format("rank {} has no registered word {}", rank, id));
  return it->second;
}

Op* ActiveMessages::request(Vp& v, int dst, int id, std::span<const std::int64_t> args,
                            std::span<const std::byte> payload, std::vector<std::byte>* reply_buf,
                            std::size_t reply_capacity) {
  if (dst < 0 || dst >= static_cast<int>(nodes_.size()))
    throw UsageError(fmt::format("rank {}: active message to rank {} out of range 0..{}", v.rank, dst, nodes_.size() - 1));
  if (id < -kBuiltins || id >= kMaxHandler)
    throw UsageError(fmt::format("rank {}: active-message handler id {} out of range 0..{}", v.rank, id, kMaxHandler - 1));
  const std::vector<std::byte> bytes = encode(args, payload);
  // A ticket names the request's reply: the requester's rank and its count of such requests, which
  // the requester's process alone knows in a run split over processes. Never 0 (no reply).
  static_assert((std::uint64_t{1} << 27 << 32) < kAmReplyBit);
  if (reply_buf && v.rank >= (1 << 27) - 1)
    throw UsageError(fmt::format("rank {}: a request with a reply from a rank beyond 2^27 - 2", v.rank));
  std::uint32_t& made = node(v.rank).requests;
  const std::uint64_t ticket = reply_buf ? (static_cast<std::uint64_t>(v.rank) + 1) << 32 | ++made : 0;
  Op* reply = nullptr;
  if (reply_buf) {
    // Posted first, so the reply always finds its receive (it cannot arrive before the request leaves).
    reply_buf->assign(kAmMaxArgs * 8 + reply_capacity, std::byte{0});
    reply = e_.post_recv(v, dst, any_tag, kAmCtx | kAmReplyBit | ticket, nullptr, *reply_buf);
  }
  const int tag = (id + kBuiltins) << 4 | static_cast<int>(args.size());
  // The CPU is free once the request is handed to the network interface (the send overhead).
  e_.drop(e_.post_send(v, dst, tag, kAmCtx | ticket, bytes));
  return reply;
}

AmReply ActiveMessages::decode_reply(const Status& st, std::span<const std::byte> buf) {
  AmReply r;
  r.source = st.source;
  r.arrival = st.arrival;
  const auto nargs = static_cast<std::size_t>(st.tag);
  r.args.resize(nargs);
  if (nargs) std::memcpy(r.args.data(), buf.data(), nargs * 8);
  r.payload.assign(buf.begin() + static_cast<std::ptrdiff_t>(nargs * 8), buf.begin() + static_cast<std::ptrdiff_t>(st.size));
  return r;
}

// The handler runs when the request's last packet arrives, or when the destination's previous
// handler ends if that is later: s = max(t, handler_free). It pays the receive overhead, its own
// compute() and the reply's send overhead, from s to e, and the destination's clock becomes
// max(clock, s) + (e - s): the handler interrupts whatever the VP was doing (docs/model.md 7).
void ActiveMessages::on_request(Msg& m, Time t) {
  Vp& v = *e_.vps_[static_cast<std::size_t>(m.dst)];
  Node& node = this->node(m.dst);
  const int id = (m.tag >> 4) - kBuiltins;
  const auto nargs = static_cast<std::size_t>(m.tag & 15);
  std::array<std::int64_t, kAmMaxArgs> args{};
  if (nargs) std::memcpy(args.data(), m.payload.data(), nargs * 8);
  AmContext c;
  c.am_ = this;
  c.rank_ = m.dst;
  c.source_ = m.src;
  c.handler_ = id;
  c.args_ = std::span<const std::int64_t>(args.data(), nargs);
  c.payload_ = std::span<const std::byte>(m.payload).subspan(nargs * 8);
  c.ticket_ = m.ctx & kTicketMask;
  c.wants_reply_ = c.ticket_ != 0;
  const Time s = std::max(t, node.handler_free);
  c.now_ = s + e_.machine_.recv_cost(m.dst, m.size);
  running_rank_ = m.dst;
  running_id_ = id;
  try {
    if (id < 0) {
      run_builtin(c);
    } else {
      auto it = node.handlers.find(id);
      if (it == node.handlers.end()) throw UsageError(fmt::format("rank {} has no active-message handler {}", m.dst, id));
      it->second(c);
    }
    if (c.wants_reply_ && !c.replied_)
      throw UsageError("it returned without replying to a request (am_request needs exactly one reply)");
  } catch (const std::exception& ex) {
    e_.abort_run(fmt::format("rank {}'s active-message {} (request from rank {}, arrived t={} us) failed: {}", m.dst,
                             handler_name(id), m.src, to_us(t), ex.what()));
  }
  running_rank_ = -1;
  node.handler_free = c.now_;
  e_.note_clock(v);
  v.clock = std::max(v.clock, s) + (c.now_ - s);
  e_.release_buffer(m, c.now_);
  e_.instruments_.handled(m, s, c.now_,
                          [&] { return fmt::format("{} (request #{} from {})", handler_name(id), m.id, m.src); });
  e_.free_msg(&m);
}

Time ActiveMessages::time_limit() const { return e_.opts_.time_limit; }

void ActiveMessages::run_builtin(AmContext& c) {
  std::int64_t& w = word(c.rank_, static_cast<int>(c.args_[0]));
  const std::int64_t old = w;
  switch (c.handler_) {
    case kTestAndSet: w = 1; break;
    case kSwap: w = c.args_[1]; break;
    case kCompareExchange: if (w == c.args_[1]) w = c.args_[2]; break;
    case kFetchAdd: w += c.args_[1]; break;
    default: throw UsageError(fmt::format("unknown built-in handler {}", c.handler_));
  }
  c.reply(std::span<const std::int64_t>(&old, 1));
}

void ActiveMessages::reply(AmContext& c, std::span<const std::int64_t> args, std::span<const std::byte> payload) {
  if (!c.wants_reply_) throw UsageError("a one-way active message (am_send) may not be replied to");
  if (c.replied_) throw UsageError("a handler may reply only once");
  c.replied_ = true;
  const std::vector<std::byte> bytes = encode(args, payload);
  // The reply is sent from the destination's CPU at the handler's current time.
  Vp& v = *e_.vps_[static_cast<std::size_t>(c.rank_)];
  const Time saved = v.clock;
  v.clock = c.now_;
  Op* op = e_.post_send(v, c.source_, static_cast<int>(args.size()), kAmCtx | kAmReplyBit | c.ticket_, bytes);
  c.now_ = v.clock;
  v.clock = saved;
  e_.drop(op);
}

}  // namespace touchstone::detail

namespace touchstone {

using detail::ActiveMessages;

void AmContext::compute(Time dt) {
  if (dt < 0) throw UsageError(fmt::format("handler compute with a negative duration ({} ps)", dt));
  // Checked, so the handler's clock never wraps (both terms are bounded: checked_time.hpp).
  if (dt > am_->time_limit() - now_)
    throw UsageError(detail::time_limit_report(am_->time_limit(), fmt::format("handler compute({} ps) at t={} us", dt, to_us(now_))));
  now_ += dt;
}
std::int64_t& AmContext::word(int id) { return am_->word(rank_, id); }
void AmContext::reply(std::span<const std::int64_t> args, std::span<const std::byte> payload) {
  am_->reply(*this, args, payload);
}

void Proc::am_register(int id, std::function<void(AmContext&)> handler) {
  e_.enter(v_);
  e_.am().add_handler(v_, id, std::move(handler));
}
void Proc::register_word(int id, std::int64_t initial) {
  e_.enter(v_);
  e_.am().add_word(v_, id, initial);
}
std::int64_t& Proc::word(int id) {
  e_.await_turn(v_);
  return e_.am().word(v_.rank, id);
}

void Proc::am_send(int dst, int handler, std::span<const std::int64_t> args, std::span<const std::byte> payload) {
  e_.enter(v_);
  if (handler < 0) throw UsageError(fmt::format("active-message handler id {} out of range", handler));
  e_.am().request(v_, dst, handler, args, payload, nullptr, 0);
}

AmFuture Proc::am_request(int dst, int handler, std::span<const std::int64_t> args, std::span<const std::byte> payload,
                          std::size_t reply_capacity) {
  e_.enter(v_);
  if (handler < 0) throw UsageError(fmt::format("active-message handler id {} out of range", handler));
  AmFuture f;
  f.reply_ = Request(e_.am().request(v_, dst, handler, args, payload, &f.buf_, reply_capacity));
  return f;
}

AmReply Proc::am_wait(AmFuture& f) {
  const Status st = wait(f.reply_);
  return ActiveMessages::decode_reply(st, f.buf_);
}

bool Proc::am_test(AmFuture& f, AmReply* reply) {
  Status st;
  if (!test(f.reply_, &st)) return false;
  if (reply) *reply = ActiveMessages::decode_reply(st, f.buf_);
  return true;
}

// The remote atomics are the built-in handlers (ids -1..-4 of detail's Builtin) with the word id
// as their first argument; their reply carries the old value.
AmFuture Proc::atomic_request(int dst, int id, std::span<const std::int64_t> args) {
  e_.enter(v_);
  AmFuture f;
  f.reply_ = Request(e_.am().request(v_, dst, id, args, {}, &f.buf_, 0));
  return f;
}

AmFuture Proc::itest_and_set(int dst, int word) {
  const std::array<std::int64_t, 1> a{word};
  return atomic_request(dst, -1, a);
}
AmFuture Proc::iswap(int dst, int word, std::int64_t value) {
  const std::array<std::int64_t, 2> a{word, value};
  return atomic_request(dst, -2, a);
}
AmFuture Proc::icompare_exchange(int dst, int word, std::int64_t expected, std::int64_t desired) {
  const std::array<std::int64_t, 3> a{word, expected, desired};
  return atomic_request(dst, -3, a);
}
AmFuture Proc::ifetch_add(int dst, int word, std::int64_t value) {
  const std::array<std::int64_t, 2> a{word, value};
  return atomic_request(dst, -4, a);
}

std::int64_t Proc::atomic_wait(AmFuture& f) { return am_wait(f).args.at(0); }
std::int64_t Proc::test_and_set(int dst, int word) {
  AmFuture f = itest_and_set(dst, word);
  return atomic_wait(f);
}
std::int64_t Proc::swap(int dst, int word, std::int64_t value) {
  AmFuture f = iswap(dst, word, value);
  return atomic_wait(f);
}
std::int64_t Proc::compare_exchange(int dst, int word, std::int64_t expected, std::int64_t desired) {
  AmFuture f = icompare_exchange(dst, word, expected, desired);
  return atomic_wait(f);
}
std::int64_t Proc::fetch_add(int dst, int word, std::int64_t value) {
  AmFuture f = ifetch_add(dst, word, value);
  return atomic_wait(f);
}

}  // namespace touchstone
