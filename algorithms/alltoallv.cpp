// Many-to-many personalized communication with bounded traffic (paper 003, sections 4 and 6).
#include "families.hpp"
#include "algorithms/alltoallv.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "algorithms/harness.hpp"
#include "touchstone/active_messages.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {
namespace {

constexpr int kTagV = 0;
using Bytes = ScratchBytes;  // message sets of several MiB per VP at large t
using Entry = std::uint32_t;  // one part length or index in a message header

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

/// Byte offsets of the messages in a processor's row (send) or column (recv) buffer.
std::vector<std::size_t> offsets(int n, auto size_of) {
  std::vector<std::size_t> off(static_cast<std::size_t>(n) + 1, 0);
  for (int x = 0; x < n; ++x) off[static_cast<std::size_t>(x) + 1] = off[static_cast<std::size_t>(x)] + sz(size_of(x));
  return off;
}

/// The shared scratch region of a run's message bodies when no byte of them is read:
/// under phantom payloads (Proc::phantom_payloads) and when the algorithm reads nothing it
/// receives (`payloads_read` false: the run does not check, and two-stage computes its headers),
/// one region of the longest message any VP of the run builds, `header` plus max(r, c) bytes,
/// shared by the run's VPs (harness.hpp, PayloadBuffer); otherwise none, and every message has
/// bytes of its own.
std::optional<PayloadBuffer> shared_scratch(Proc& p, bool payloads_read, const TrafficMatrix& m, std::size_t header) {
  if (payloads_read || !p.phantom_payloads()) return std::nullopt;
  const std::size_t largest = header + sz(m.t());
  return std::optional<PayloadBuffer>(std::in_place, p, true, PayloadBuffer::Role::scratch, largest, largest);
}

/// One of an algorithm's sets of p messages (Fig. 3's out and in, Stg2pp's fwd and got), message x
/// for or from processor x: each its own bytes, or, given a shared scratch region, each a span of
/// the right length of that region (every message of every VP the same bytes, which nothing reads:
/// the runtime carries only the sizes, so the timing is the same).
class Messages {
 public:
  Messages(int n, const std::optional<PayloadBuffer>& scratch)
      : own_(scratch ? 0 : sz(n)), span_(sz(n)), scratch_(scratch ? scratch->span() : std::span<std::byte>{}),
        real_(!scratch) {}
  bool real() const { return real_; }
  std::span<std::byte> operator[](int x) const { return span_[sz(x)]; }
  /// Message x becomes `bytes` long (zeroed when it has bytes of its own).
  std::span<std::byte> make(int x, std::size_t bytes) {
    if (real_) {
      own_[sz(x)].assign(bytes, std::byte{});
      return span_[sz(x)] = own_[sz(x)];
    }
    if (bytes > scratch_.size())
      throw std::logic_error(fmt::format("alltoallv: a message of {} bytes, the scratch holds {}", bytes, scratch_.size()));
    return span_[sz(x)] = scratch_.first(bytes);
  }
  /// Message x becomes message y of `from` (a move: the bytes stay where they are).
  void take(int x, Messages& from, int y) {
    if (real_) own_[sz(x)] = std::move(from.own_[sz(y)]);
    span_[sz(x)] = from.span_[sz(y)];
  }

 private:
  std::vector<Bytes> own_;
  std::vector<std::span<std::byte>> span_;
  std::span<std::byte> scratch_;
  bool real_;
};

/// Writes a message made by Messages::make in order, header entries then bodies; into a span of
/// the shared scratch it writes nothing (nobody reads it) and only counts. done() checks that the
/// message was made of the length written.
class Writer {
 public:
  Writer(std::span<std::byte> to, bool real) : to_(to), real_(real) {}
  void put(Entry v) { append(reinterpret_cast<const std::byte*>(&v), sizeof v); }
  void append(const std::byte* from, std::size_t n) {
    if (at_ + n > to_.size()) throw std::logic_error("alltoallv: message longer than made");
    if (real_ && n) std::memcpy(to_.data() + at_, from, n);
    at_ += n;
  }
  void done() const {
    if (at_ != to_.size()) throw std::logic_error("alltoallv: message shorter than made");
  }

 private:
  std::span<std::byte> to_;
  bool real_;
  std::size_t at_ = 0;
};

/// The communication of Fig. 3 for any messages: in step k = 1..p-1 send out[dst] and receive
/// from src (i XOR k for both when p is a power of two, else i+k and i-k), then barrier.
/// An empty out[dst] is not sent; `incoming(src)` is the size of the message from src (0: none).
/// Fig. 3 first generates the receive vector, so every receiver knows what it gets: it posts the
/// receive of that size before it sends, and a node that drains packets as they come (the CM-5's
/// polling, recv_overlap) reads them while its own leave. Probing for the size instead would wait
/// for the whole message before reading its first packet. The own message is moved locally.
void linear_permutation(Proc& p, Messages& out, Messages& in, auto incoming) {
  const int n = p.size(), me = p.rank();
  const bool pow2 = (n & (n - 1)) == 0;
  in.take(me, out, me);
  for (int k = 1; k < n; ++k) {
    const int dst = pow2 ? me ^ k : (me + k) % n, src = pow2 ? me ^ k : (me - k + n) % n;
    Request got, sent;
    if (const std::size_t bytes = incoming(src)) got = p.irecv(src, kTagV, in.make(src, bytes));
    if (!out[dst].empty()) sent = p.isend(dst, kTagV, out[dst]);
    if (got.active()) p.wait(got);
    if (sent.active()) p.wait(sent);
    p.barrier();
  }
}

void check_buffers(const char* name, const Proc& p, const TrafficMatrix& m, std::size_t send, std::size_t recv) {
  if (m.p() != p.size())
    throw UsageError(fmt::format("{}: a {}x{} matrix on {} processors", name, m.p(), m.p(), p.size()));
  if (send != sz(m.r_i(p.rank())) || recv != sz(m.c_j(p.rank())))
    throw UsageError(fmt::format("{}: processor {} has buffers of {} and {} bytes, its row and column hold {} and {}",
                                 name, p.rank(), send, recv, m.r_i(p.rank()), m.c_j(p.rank())));
}

Entry get(std::span<const std::byte> b, std::size_t at) {
  if (at + sizeof(Entry) > b.size()) throw std::logic_error("alltoallv: short message header");
  Entry v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

/// splitmix64: the seeded random choices of sections 5 and 6.3.
struct SplitMix {
  std::uint64_t s;
  std::uint64_t operator()() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

}  // namespace

void alltoallv_linear_permutation(Proc& p, const TrafficMatrix& m, std::span<const std::byte> send,
                                  std::span<std::byte> recv, bool payloads) {
  check_buffers("alltoallv/linear-permutation", p, m, send.size(), recv.size());
  const int n = p.size(), me = p.rank();
  const auto so = offsets(n, [&](int j) { return m.at(me, j); });
  const auto ro = offsets(n, [&](int i) { return m.at(i, me); });
  const auto scratch = shared_scratch(p, payloads, m, 0);
  Messages out(n, scratch), in(n, scratch);
  for (int j = 0; j < n; ++j) {
    const std::size_t len = so[sz(j) + 1] - so[sz(j)];
    Writer w(out.make(j, len), out.real());
    w.append(send.data() + so[sz(j)], len);
    w.done();
  }
  linear_permutation(p, out, in, [&](int src) { return sz(m.at(src, me)); });
  for (int i = 0; i < n; ++i) {
    if (in[i].size() != ro[sz(i) + 1] - ro[sz(i)]) throw std::logic_error("alltoallv/linear-permutation: message size mismatch");
    if (in.real() && !in[i].empty()) std::memcpy(recv.data() + ro[sz(i)], in[i].data(), in[i].size());
  }
}

Stage1Plan::Stage1Plan(std::span<const std::int64_t> sendl) {
  const auto n = static_cast<std::int64_t>(sendl.size());
  for (const std::int64_t l : sendl) {
    base_.push_back(l / n);
    rem_.push_back(l % n);
    first_.push_back(rem_total_ % n);  // Fig. 7: the round robin continues across destinations
    base_total_ += l / n;
    rem_total_ += l % n;
  }
}

std::int64_t Stage1Plan::len(int k, int j) const {
  const std::int64_t n = size(), from_first = (k - first_[sz(j)] + n) % n;
  return base_[sz(j)] + (from_first < rem_[sz(j)] ? 1 : 0);
}

// The remainders are dealt one byte at a time from intermediary 0 on: part set k gets one in
// each of the rem_total / p full rounds, and one more if the last round reaches it.
std::int64_t Stage1Plan::total(int k) const {
  const std::int64_t n = size();
  return base_total_ + rem_total_ / n + (k < rem_total_ % n ? 1 : 0);
}

std::vector<int> stage1_shuffle(const Stage1Plan& plan, std::uint64_t seed) {
  const int n = plan.size();
  std::vector<std::int64_t> total(sz(n));
  for (int k = 0; k < n; ++k) total[sz(k)] = plan.total(k);
  std::vector<int> perm(sz(n));
  std::iota(perm.begin(), perm.end(), 0);
  SplitMix next{seed};
  // Fisher-Yates within each group of equal totals (section 6.3: sizes ceil(t/p) and floor(t/p)).
  std::vector<std::int64_t> sizes = total;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (const auto size : sizes) {
    std::vector<int> members;
    for (int k = 0; k < n; ++k)
      if (total[sz(k)] == size) members.push_back(k);
    std::vector<int> targets = members;
    for (std::size_t x = targets.size(); x > 1; --x) std::swap(targets[x - 1], targets[next() % x]);
    for (std::size_t x = 0; x < members.size(); ++x) perm[sz(members[x])] = targets[x];
  }
  return perm;
}

void alltoallv_two_stage(Proc& p, const TrafficMatrix& m, std::span<const std::byte> send, std::span<std::byte> recv,
                         bool shuffled, bool headers_arrive) {
  check_buffers(shuffled ? "alltoallv/two-stage-shuffled" : "alltoallv/two-stage", p, m, send.size(), recv.size());
  const int n = p.size(), me = p.rank();
  const std::size_t header = sizeof(Entry) * sz(n) * (shuffled ? 2 : 1);

  // The intermediary permutation of source i (section 6.3: shuffled, or the identity).
  auto permutation = [&](int i, const Stage1Plan& plan) {
    std::vector<int> perm(sz(n));
    std::iota(perm.begin(), perm.end(), 0);
    if (shuffled) perm = stage1_shuffle(plan, p.seed() * 0x100000001b3ULL + static_cast<std::uint64_t>(i));
    return perm;
  };
  // The receive vectors of both stages (Fig. 3 generates them before each linear permutation):
  // s1_size[i], the stage-1 message from source i, and s2_size[q], the stage-2 message from
  // intermediary q, computed from every source's plan one source at a time (keeping every
  // source's p x p plan would be p^3 entries per processor). When headers do not arrive (phantom
  // payloads), also what every source wrote in them: s1_len[i][j], the length of the part for j in
  // the stage-1 message from i; s2_len[q][i] and s2_part[q][i], the length and index of source
  // i's part through intermediary q.
  std::vector<std::size_t> s1_size(sz(n), header), s2_size(sz(n), header);
  std::vector<std::vector<Entry>> s1_len, s2_len, s2_part;
  if (!headers_arrive) {
    s1_len.assign(sz(n), std::vector<Entry>(sz(n)));
    s2_len.assign(sz(n), std::vector<Entry>(sz(n)));
    if (shuffled) s2_part.assign(sz(n), std::vector<Entry>(sz(n)));
  }
  std::vector<int> part_through(sz(n));  // source i's part index that went to intermediary q
  for (int i = 0; i < n; ++i) {
    const Stage1Plan plan(m.row(i));
    const std::vector<int> perm = permutation(i, plan);
    for (int k = 0; k < n; ++k) part_through[sz(perm[sz(k)])] = k;
    s1_size[sz(i)] += sz(plan.total(part_through[sz(me)]));
    for (int q = 0; q < n; ++q) s2_size[sz(q)] += sz(plan.len(part_through[sz(q)], me));
    if (headers_arrive) continue;
    for (int j = 0; j < n; ++j) s1_len[sz(i)][sz(j)] = static_cast<Entry>(plan.len(part_through[sz(me)], j));
    for (int q = 0; q < n; ++q) {
      s2_len[sz(q)][sz(i)] = static_cast<Entry>(plan.len(part_through[sz(q)], me));
      if (shuffled) s2_part[sz(q)][sz(i)] = static_cast<Entry>(part_through[sz(q)]);
    }
  }

  // Stage 1 at the source: Stg1pp (Fig. 7), then part set k goes to intermediary perm[k] with a
  // header of its p lengths (and, shuffled, the permutation).
  const auto so = offsets(n, [&](int j) { return m.at(me, j); });
  const Stage1Plan plan(m.row(me));
  const std::vector<int> perm = permutation(me, plan);
  const auto scratch = shared_scratch(p, headers_arrive, m, header);
  Messages out(n, scratch), in(n, scratch);
  std::vector<std::int64_t> before(sz(n), 0);  // bytes of message j already placed in parts < k
  for (int k = 0; k < n; ++k) {
    std::size_t bytes = header;
    for (int j = 0; j < n; ++j) bytes += sz(plan.len(k, j));
    Writer msg(out.make(perm[sz(k)], bytes), out.real());
    for (int j = 0; j < n; ++j) msg.put(static_cast<Entry>(plan.len(k, j)));
    if (shuffled)
      for (int x = 0; x < n; ++x) msg.put(static_cast<Entry>(perm[sz(x)]));
    for (int j = 0; j < n; ++j) {
      msg.append(send.data() + so[sz(j)] + sz(before[sz(j)]), sz(plan.len(k, j)));
      before[sz(j)] += plan.len(k, j);
    }
    msg.done();
  }
  linear_permutation(p, out, in, [&](int i) { return s1_size[sz(i)]; });

  // Stage 2 at the intermediary: Stg2pp (Fig. 8) -- the message to destination j gathers the
  // part for j from every source, ahead of it the p lengths (and, shuffled, each part's index).
  // The length of the part for j in the stage-1 message from i.
  auto stage1_len = [&](int i, int j) -> Entry {
    if (headers_arrive) return get(in[i], sizeof(Entry) * sz(j));
    return s1_len[sz(i)][sz(j)];
  };
  Messages fwd(n, scratch), got(n, scratch);
  std::vector<Writer> to;
  to.reserve(sz(n));
  for (int j = 0; j < n; ++j) {
    std::size_t bytes = header;
    for (int i = 0; i < n; ++i) bytes += stage1_len(i, j);
    Writer& msg = to.emplace_back(fwd.make(j, bytes), fwd.real());
    for (int i = 0; i < n; ++i) msg.put(stage1_len(i, j));
    if (shuffled)
      for (int i = 0; i < n; ++i) {
        // the part index k with perm_i[k] == me
        Entry k = 0;
        if (!headers_arrive) k = s2_part[sz(me)][sz(i)];
        else
          while (get(in[i], sizeof(Entry) * (sz(n) + k)) != static_cast<Entry>(me)) ++k;
        msg.put(k);
      }
  }
  for (int i = 0; i < n; ++i) {
    std::size_t at = header;
    for (int j = 0; j < n; ++j) {
      const std::size_t len = stage1_len(i, j);
      to[sz(j)].append(in[i].data() + at, len);
      at += len;
    }
    if (at != in[i].size()) throw std::logic_error("alltoallv/two-stage: stage-1 message size mismatch");
  }
  for (const Writer& msg : to) msg.done();
  linear_permutation(p, fwd, got, [&](int q) { return s2_size[sz(q)]; });

  // At the destination: the part k of the message from source i starts after parts 0..k-1.
  struct Part {
    int k;
    const std::byte* data;
    std::size_t len;
  };
  std::vector<std::vector<Part>> parts(sz(n));
  for (int q = 0; q < n; ++q) {
    const std::span<const std::byte> msg = got[q];
    std::size_t at = header;
    for (int i = 0; i < n; ++i) {
      // Source i's part that went through intermediary q: its length and (shuffled) its index.
      const Entry kq = !shuffled ? static_cast<Entry>(q)
                       : headers_arrive ? get(msg, sizeof(Entry) * (sz(n) + sz(i))) : s2_part[sz(q)][sz(i)];
      const std::size_t len = headers_arrive ? get(msg, sizeof(Entry) * sz(i)) : s2_len[sz(q)][sz(i)];
      const int k = static_cast<int>(kq);
      parts[sz(i)].push_back({k, msg.data() + at, len});
      at += len;
    }
  }
  const auto ro = offsets(n, [&](int i) { return m.at(i, me); });
  for (int i = 0; i < n; ++i) {
    auto& ps = parts[sz(i)];
    std::sort(ps.begin(), ps.end(), [](const Part& a, const Part& b) { return a.k < b.k; });
    std::size_t at = ro[sz(i)];
    for (const Part& part : ps) {
      if (at + part.len > ro[sz(i) + 1]) throw std::logic_error("alltoallv/two-stage: too many bytes from a source");
      if (part.len && got.real()) std::memcpy(recv.data() + at, part.data, part.len);
      at += part.len;
    }
    if (at != ro[sz(i) + 1]) throw std::logic_error("alltoallv/two-stage: missing bytes from a source");
  }
}

namespace {

// Section 5's locks and handlers (active messages, docs/model.md 7).
constexpr int kBusy = 0;      // word: transfers granted and not yet released (Fig. 4's busy_lock)
constexpr int kUntil = 1;     // word (plus): when the granted transfers should be over, in ps
constexpr int kRelease = 1;   // one-way handler: a transfer is over
constexpr int kInquire = 2;   // handler (plus): grant, or say how long the destination stays busy

/// The contention-free time a message of `bytes` from src occupies dst's ejection channel,
/// (d+1) t_hop + W b (docs/model.md 2.4): what a CM-5 programmer knows of the data rates.
Time transfer_estimate(const Machine& mc, int src, int dst, std::int64_t bytes) {
  std::vector<LinkId> path;
  mc.topology->route(src, dst, path);
  Time b = std::max(mc.net.inject_byte_time, mc.net.eject_byte_time);
  for (const LinkId l : path) {
    const Time lb = mc.topology->link_byte_time(l);
    b = std::max(b, lb ? lb : mc.net.link_byte_time);
  }
  const std::int64_t payload = mc.net.packet_payload;
  const std::int64_t packets = std::max<std::int64_t>(1, (bytes + payload - 1) / payload);
  return static_cast<Time>(path.size() + 1) * mc.net.hop_time + (bytes + packets * mc.net.packet_header) * b;
}

}  // namespace

void alltoallv_random_scheduling(Proc& p, const TrafficMatrix& m, std::span<const std::byte> send,
                                 std::span<std::byte> recv, bool plus) {
  check_buffers(plus ? "alltoallv/random-scheduling-plus" : "alltoallv/random-scheduling", p, m, send.size(),
                recv.size());
  const int n = p.size(), me = p.rank();
  const Machine& mc = p.machine();
  p.register_word(kBusy, 0);
  p.register_word(kUntil, 0);
  p.am_register(kRelease, [](AmContext& c) { --c.word(kBusy); });
  // Section 5's improvements: a busy destination answers how long it will stay busy; one whose
  // transfers end within `early` (the time a grant takes to turn into arriving data) grants anyway.
  if (plus)
    p.am_register(kInquire, [](AmContext& c) {
      std::int64_t& busy = c.word(kBusy);
      std::int64_t& until = c.word(kUntil);
      const Time est = c.args()[0], early = c.args()[1];
      const bool grant = busy == 0 || until - c.now() <= early;
      if (grant) {
        ++busy;
        until = std::max<Time>(until, c.now()) + est;
      }
      const std::array<std::int64_t, 1> answer{grant ? 0 : until - early - c.now()};
      c.reply(answer);
    });
  const auto so = offsets(n, [&](int j) { return m.at(me, j); });
  const auto ro = offsets(n, [&](int i) { return m.at(i, me); });
  // Fig. 4: "pre-allocate receiving buffers according to receive vector recv".
  std::vector<Request> incoming;
  for (int i = 0; i < n; ++i)
    if (i != me && m.at(i, me) > 0) incoming.push_back(p.irecv(i, kTagV, recv.subspan(ro[sz(i)], ro[sz(i) + 1] - ro[sz(i)])));
  if (m.at(me, me) > 0) std::memcpy(recv.data() + ro[sz(me)], send.data() + so[sz(me)], sz(m.at(me, me)));
  p.barrier();  // every lock and handler exists before anyone inquires
  std::vector<int> owe;
  for (int j = 0; j < n; ++j)
    if (j != me && m.at(me, j) > 0) owe.push_back(j);
  SplitMix rng{p.seed() * 0x2545f4914f6cdd1dULL + static_cast<std::uint64_t>(me)};
  std::vector<Time> not_before(sz(n), 0);  // plus: do not disturb j before then
  std::vector<std::size_t> ready;
  while (!owe.empty()) {
    std::size_t pick = 0;
    if (plus) {
      ready.clear();
      Time wake = kNever;
      for (std::size_t x = 0; x < owe.size(); ++x) {
        if (not_before[sz(owe[x])] <= p.now()) ready.push_back(x);
        else wake = std::min(wake, not_before[sz(owe[x])]);
      }
      if (ready.empty()) {  // every destination owed is busy: sleep for the least measure
        p.compute(wake - p.now());
        continue;
      }
      pick = ready[rng() % ready.size()];
    } else {
      pick = rng() % owe.size();
    }
    const int j = owe[pick];
    const auto bytes = send.subspan(so[sz(j)], so[sz(j) + 1] - so[sz(j)]);
    std::int64_t busy = 0;
    if (plus) {
      const Time early = transfer_estimate(mc, j, me, 8) + mc.costs_of(me).recv_overhead +
                         mc.costs_of(me).send_overhead + static_cast<Time>(p.hops(me, j) + 1) * mc.net.hop_time;
      const std::array<std::int64_t, 2> args{transfer_estimate(mc, me, j, m.at(me, j)), early};
      AmFuture f = p.am_request(j, kInquire, args);
      busy = p.am_wait(f).args.at(0);
      if (busy) not_before[sz(j)] = p.now() + busy;
    } else {
      busy = p.test_and_set(j, kBusy);  // Fig. 5's inquiry: 0 means the lock was free and is ours
    }
    if (busy) continue;
    // The implementation polls (section 5): while its message leaves, the node takes the packets
    // that arrive for the buffers it pre-allocated (Fig. 4), rather than leaving them all to the
    // final wait. A receive completes here when its message is in; the send when it has left.
    incoming.push_back(p.isend(j, kTagV, bytes));
    while (incoming.back().active()) p.waitany(incoming);
    incoming.pop_back();
    std::erase_if(incoming, [](const Request& r) { return !r.active(); });
    p.am_send(j, kRelease, {});  // "upon completion, reset destination node's busy_lock to free"
    owe[pick] = owe.back();
    owe.pop_back();
  }
  p.waitall(incoming);  // "wait until all incoming messages arrive at their proper buffers"
}

namespace {

// The last argument says whether payload bytes arrive (false under phantom payloads).
using AlltoallvFn =
    std::function<void(Proc&, const TrafficMatrix&, std::span<const std::byte>, std::span<std::byte>, bool payloads)>;

// Host memory of an alltoallv run on p processors whose matrix totals `total` bytes with no row or
// column above `most`: the harness's send and receive buffers plus the algorithm's copies of the
// traffic come to `copies` times the total, and an algorithm that keeps `pair_bytes` for every pair
// of processors on every processor (two-stage's plan and the lengths ahead of its messages) adds
// pair_bytes p^3: 26 GB on cm5:1024. Every processor also keeps up to four sets of p messages (a
// vector and a span each) and three tables of p lengths. Under phantom payloads (harness and
// harness_phantom) the VPs share one send, one receive and one scratch region (Messages, with
// headers of at most 2 p entries) and keep only `phantom_pair_bytes` per pair: two-stage's
// computed headers (s1_len, s2_len, s2_part).
Footprint alltoallv_footprint(std::size_t p, std::size_t total, std::size_t most, std::size_t copies,
                              std::size_t pair_bytes, std::size_t phantom_pair_bytes) {
  const std::size_t per_pair = sizeof(std::int64_t) + 4 * (sizeof(Bytes) + sizeof(std::span<std::byte>)) +
                               3 * sizeof(std::vector<Entry>);
  const std::size_t shared = copies * total + pair_bytes * p * p * p;
  return Footprint{shared + per_pair * p * p, total, 2 * p * p, shared,
                   3 * most + 2 * sizeof(Entry) * p + phantom_pair_bytes * p * p * p};
}

// Harness: every processor reads the run's matrix (made from --traffic and the run's seed), sends
// fill_pattern(me, j) of m_ij bytes to every j, and checks every byte of every message received.
// Host memory: alltoallv_footprint. Rank 0 refuses a run that cannot fit before anyone allocates.
Algorithm alltoallv_entry(std::string name, std::string summary, AlltoallvFn fn, std::size_t copies,
                          std::size_t pair_bytes, std::size_t phantom_pair_bytes) {
  Algorithm a;
  a.name = name;
  a.summary = std::move(summary);
  a.program = [name, fn, copies, pair_bytes, phantom_pair_bytes](Proc& p, const Args& args) {
    if (args.traffic.k == 0 && args.traffic.file.empty())
      throw UsageError(fmt::format("{}: give the communication matrix with --traffic k=K,l=L,t=BYTES or file=M.csv", name));
    const std::shared_ptr<const TrafficMatrix> shared = shared_traffic(p.size(), args.traffic, p.seed());
    const TrafficMatrix& m = *shared;
    const int n = p.size(), me = p.rank();
    const bool lean = !args.check && p.phantom_payloads();  // PayloadBuffer's choice: shared regions
    // The largest row and column (O(p^2) each), needed only for the shared regions.
    const std::size_t rows = lean ? sz(m.r()) : 0, columns = lean ? sz(m.c()) : 0;
    if (me == 0) {
      const Footprint f = alltoallv_footprint(sz(n), sz(m.total()), sz(m.t()), copies, pair_bytes, phantom_pair_bytes);
      check_host_memory(fmt::format("{} on {} processors", name, n), host_memory(f, n, lean, 0));
    }
    const auto so = offsets(n, [&](int j) { return m.at(me, j); });
    const auto ro = offsets(n, [&](int i) { return m.at(i, me); });
    const PayloadBuffer send_mem(p, args, PayloadBuffer::Role::send, so.back(), rows),
        recv_mem(p, args, PayloadBuffer::Role::recv, ro.back(), columns);
    const std::span<std::byte> send = send_mem.span(), recv = recv_mem.span();
    if (args.check)
      for (int j = 0; j < n; ++j) {
        fill_pattern(me, j, send.subspan(so[sz(j)], so[sz(j) + 1] - so[sz(j)]));
        mark_undelivered(j, me, recv.subspan(ro[sz(j)], ro[sz(j) + 1] - ro[sz(j)]));
      }
    fn(p, m, send, recv, args.check);
    p.leave();
    if (args.check)
      for (int i = 0; i < n; ++i) check_pattern(name, i, me, recv.subspan(ro[sz(i)], ro[sz(i) + 1] - ro[sz(i)]));
  };
  // The matrix is not known here: its total is at most p^2 t and no row or column exceeds p t (no
  // entry above t); the program itself checks the real matrix first (above).
  a.footprint = [copies, pair_bytes, phantom_pair_bytes](int vps, std::size_t size) {
    const auto p = static_cast<std::size_t>(vps);
    return alltoallv_footprint(p, p * p * size, p * size, copies, pair_bytes, phantom_pair_bytes);
  };
  return a;
}

// The entry of a variant: an algorithm function whose last argument selects it.
template <typename Fn>
AlltoallvFn with_option(Fn fn, bool option) {
  return [fn, option](Proc& p, const TrafficMatrix& m, std::span<const std::byte> s, std::span<std::byte> r, bool) {
    fn(p, m, s, r, option);
  };
}
// Two-stage reads its headers only when payload bytes arrive (the `check` of the run's Args, off
// under phantom payloads); otherwise it computes them.
AlltoallvFn two_stage(bool shuffled) {
  return [shuffled](Proc& p, const TrafficMatrix& m, std::span<const std::byte> s, std::span<std::byte> r, bool payloads) {
    alltoallv_two_stage(p, m, s, r, shuffled, payloads);
  };
}
}  // namespace

// Two-stage keeps, per pair of processors, a plan entry and one length in each of its four message
// sets (stage-1 out and in, stage-2 out and in); shuffled adds a permutation entry to each. Under
// phantom payloads the message sets are shared and what stays per pair is the computed headers:
// s1_len and s2_len, and shuffled s2_part.
constexpr std::size_t kTwoStagePairBytes = sizeof(std::int64_t) + 4 * sizeof(Entry);
constexpr std::size_t kTwoStagePhantomPairBytes = 2 * sizeof(Entry);

void add_alltoallv_algorithms(Catalog& c) {
  c.push_back(alltoallv_entry("alltoallv/linear-permutation",
                              "paper 003 Fig. 3: p-1 XOR-partner exchanges of the required lengths, a barrier after each",
                              [](Proc& p, const TrafficMatrix& m, std::span<const std::byte> s, std::span<std::byte> r,
                                 bool payloads) { alltoallv_linear_permutation(p, m, s, r, payloads); },
                              4, 0, 0));
  c.push_back(alltoallv_entry("alltoallv/two-stage",
                              "paper 003 section 6: Stg1pp (Fig. 7) spreads every message over p intermediaries, "
                              "Stg2pp (Fig. 8) forwards; both stages by linear permutation",
                              two_stage(false), 6, kTwoStagePairBytes, kTwoStagePhantomPairBytes));
  c.push_back(alltoallv_entry("alltoallv/two-stage-shuffled",
                              "paper 003 section 6.3: two-stage with intermediaries reshuffled within size groups, "
                              "the permutation sent along",
                              two_stage(true), 6, kTwoStagePairBytes + 4 * sizeof(Entry),
                              kTwoStagePhantomPairBytes + sizeof(Entry)));
  c.push_back(alltoallv_entry("alltoallv/random-scheduling",
                              "paper 003 Figs. 4, 5: random destination order, a busy lock per destination taken "
                              "with remote test-and-set (active messages)",
                              with_option(alltoallv_random_scheduling, false), 4, 0, 0));
  c.push_back(alltoallv_entry("alltoallv/random-scheduling-plus",
                              "paper 003 section 5's improvements: busy destinations say for how long, senders sleep "
                              "for the least of those; a destination about to finish grants early",
                              with_option(alltoallv_random_scheduling, true), 4, 0, 0));
}

}  // namespace touchstone::algorithms
