// Arbitration (docs/model.md 2.13): which of the headers waiting for a channel gets it when it
// frees. Exact times from the model: on one switch a route is injection -> ejection (d = 0), a
// worm that gets node 0's ejection channel at g has its tail in at g + W*b, and the next waiter is
// granted at that instant (a channel freed at r is free at r).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "algorithms/registry.hpp"
#include "support/model.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

// switch:5 with prime costs, one worm per message. Rank 1 sends 3000 bytes to rank 0 and holds its
// ejection channel until T1; ranks 4, 3 and 2 (in that order, 100 ps apart, after rank 1's header
// has taken the channel) send 1000 bytes, whose headers wait there; right after its first send, rank 1 sends 0 bytes (tag 1), whose header joins the queue at
// T1 + C_send, while the first waiter is streaming. Returns each message's arrival by sender
// (rank 1's second message as 5).
constexpr std::size_t kBig = 3000, kWaiter = 1000;
constexpr Time kStagger[5] = {0, 0, 300, 200, 100};

Machine star(Arbitration a) {
  Machine m = ts_test::prime_machine("switch:5");
  m.net.packet_payload = 1 << 20;
  m.net.arbitration = a;
  return m;
}

// Rank r's compute before its send: its header asks kStagger[r] after rank 1's.
Time delay(const Machine& m, int r) {
  const Model x{m};
  return x.send_cost(kBig) - x.send_cost(kWaiter) + kStagger[r];
}

std::map<int, Time> arrivals(const Machine& m, std::uint64_t seed = 1) {
  std::map<int, Time> at;
  const auto out = ts_test::bytes(kBig);
  RunOptions o;
  o.seed = seed;
  run(m, [&](Proc& p) {
    const int r = p.rank();
    if (r == 0) {
      std::vector<std::vector<std::byte>> in(5, std::vector<std::byte>(kBig));
      Request rq[5] = {p.irecv(1, 0, in[0]), p.irecv(2, 0, in[1]), p.irecv(3, 0, in[2]), p.irecv(4, 0, in[3]),
                       p.irecv(1, 1, in[4])};
      const auto st = p.waitall(rq);
      for (int i = 0; i < 5; ++i) at[i == 4 ? 5 : i + 1] = st[static_cast<std::size_t>(i)].arrival;
    } else if (r == 1) {
      p.send(0, 0, std::span(out).first(kBig));
      p.send(0, 1, std::span(out).first(0));
    } else {
      p.compute(delay(m, r));
      p.send(0, 0, std::span(out).first(kWaiter));
    }
  }, o);
  return at;
}

struct Schedule {
  Time t1, d, tiny;  // rank 1's first tail; one 1000-byte worm; the 0-byte worm
};

Schedule schedule(const Machine& m) {
  const Model x{m};
  const Time t1 = x.arrival_cf(x.handed(0, kBig), 0, kBig);
  const Schedule s{t1, x.wire_total(kWaiter) * x.b(0), x.wire_total(0) * x.b(0)};
  // The premises: ranks 2..4 wait from before T1, in the order 4, 3, 2; rank 1's second header
  // comes while the first waiter streams.
  for (int r = 2; r <= 4; ++r) {
    EXPECT_GT(x.handed(delay(m, r), kWaiter), x.handed(0, kBig));
    EXPECT_LT(x.handed(delay(m, r), kWaiter) + x.hop(), t1);
  }
  EXPECT_LT(x.send_cost(0), s.d);
  return s;
}

// The waiters 2, 3 and 4 are granted in `order`, one worm after another from T1; rank 1's second
// (0-byte) worm last, after the third.
void expect_grant_order(Arbitration a, const std::array<int, 3>& order) {
  const Machine m = star(a);
  const Schedule s = schedule(m);
  const auto at = arrivals(m);
  EXPECT_EQ(at.at(1), s.t1);
  for (std::size_t k = 0; k < order.size(); ++k)
    EXPECT_EQ(at.at(order[k]), s.t1 + static_cast<Time>(k + 1) * s.d) << "rank " << order[k];
  EXPECT_EQ(at.at(5), s.t1 + 3 * s.d + s.tiny);
}

TEST(Arbitration, FifoGrantsInArrivalOrder) { expect_grant_order(Arbitration::fifo, {4, 3, 2}); }

// Round-robin by input channel (the senders' injection channels, in node order): 2 first (the
// first input after 0), then 3, then 4; rank 1's header, although its input is the lowest, comes
// after 4 because the round has passed it. (Lowest-input-first would take it second.)
TEST(Arbitration, RoundRobinTakesTheNextInputAfterTheOneGrantedLast) {
  expect_grant_order(Arbitration::round_robin, {2, 3, 4});
}

// Random: every seed gives a valid serialization (each worm granted when the previous tail is in,
// rank 1's second header never before it exists), the same seed the same order, and the order
// really varies with the seed.
TEST(Arbitration, RandomIsASeededValidSerialization) {
  const Machine m = star(Arbitration::random);
  const Schedule s = schedule(m);
  std::set<int> first_granted;
  std::set<std::vector<int>> orders;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    const auto at = arrivals(m, seed);
    EXPECT_EQ(at, arrivals(m, seed)) << "seed " << seed;
    EXPECT_EQ(at.at(1), s.t1);
    std::vector<std::pair<Time, int>> order;
    for (int r = 2; r <= 5; ++r) order.emplace_back(at.at(r), r);
    std::sort(order.begin(), order.end());
    Time prev = s.t1;
    std::vector<int> ranks;
    for (const auto& [t, r] : order) {
      EXPECT_EQ(t, prev + (r == 5 ? s.tiny : s.d)) << "seed " << seed << ", rank " << r;
      prev = t;
      ranks.push_back(r);
    }
    EXPECT_NE(ranks.front(), 5) << "rank 1's second header does not exist at T1";
    first_granted.insert(ranks.front());
    orders.insert(ranks);
  }
  EXPECT_GE(first_granted.size(), 2u);
  EXPECT_GE(orders.size(), 3u);
}

// Worms no longer than a hop (32+8-byte packets at 40 ns per byte: 1.6 us against a 3 us hop)
// free their input channel while they wait, so one input can have several waiting headers, a
// message's later packets among them. Random arbitration draws among inputs and keeps each input's
// order: every message's 4 packets arrive in order, and the all-to-all checks every byte. (Drawing
// among all waiting headers let packet 3 of a message overtake packet 2; its message was received
// and freed with packet 2 still in the network, and the run crashed.)
TEST(Arbitration, RandomKeepsAMessagesPacketsInOrder) {
  const auto& alg = algorithms::find("alltoall/1-lev-xor");
  for (const char* spec : {"torus:8x8,hop_ns=3000,packet=32+8,arbitration=random",
                           "mesh:8x8,hop_ns=3000,packet=32+8,arbitration=random"}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(fmt::format("{} seed {}", spec, seed));
      RunOptions o;
      o.seed = seed;
      const RunResult r = run(parse_machine(spec), [&](Proc& p) { alg.program(p, algorithms::Args{100, 0, true}); }, o);
      EXPECT_EQ(r.stats.messages, 64u * 63u);
      EXPECT_EQ(r.stats.packets, 64u * 63u * 4u);
      EXPECT_GT(r.stats.blocked_headers, 0u);
    }
  }
}

TEST(Arbitration, MachineOptionAndSwitchPresets) {
  EXPECT_EQ(parse_machine("mesh:4x4").net.arbitration, Arbitration::fifo);
  EXPECT_EQ(parse_machine("mesh:4x4,arbitration=round-robin").net.arbitration, Arbitration::round_robin);
  EXPECT_EQ(parse_machine("switch:8").net.arbitration, Arbitration::random);  // paper 004's switches
  EXPECT_EQ(parse_machine("switch2:4+4").net.arbitration, Arbitration::random);
  EXPECT_EQ(parse_machine("switch2:4+4,arbitration=fifo").net.arbitration, Arbitration::fifo);
  try {
    parse_machine("mesh:4x4,arbitration=lifo");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("expected fifo, random or round-robin, got 'lifo'"), std::string::npos) << e.what();
  }
}

}  // namespace
