// Contention-free latency (docs/model.md 2.3): one message alone in the network arrives at exactly
//   h + (d+1)*t_hop + (size + n*header)*b,   h = c + C_send + size*send_per_byte,
// a blocking send returns at h + (size + n*header)*b, and the receive completes at
// max(clock, arrival) + C_recv + size*recv_per_byte.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <memory>
#include <tuple>

#include "support/model.hpp"
#include "support/wrapped_topology.hpp"

using namespace touchstone;
using ts_test::Model;

namespace {

enum class Bottleneck { link, inject };

struct LatencyCase {
  std::string spec;
  int src, dst;
  int d;  // links on the dimension-order route
  std::size_t size;
  Time sender_start;    // the sender computes this long before sending
  Time receiver_start;  // the receiver computes this long before receiving
  Bottleneck bottleneck;
  friend void PrintTo(const LatencyCase& c, std::ostream* os) {
    *os << c.spec << " " << c.src << "->" << c.dst << " size " << c.size;
  }
};

std::string case_name(const testing::TestParamInfo<LatencyCase>& info) {
  const auto& c = info.param;
  std::string s = fmt::format("{}_{}to{}_d{}_size{}_{}{}", c.spec, c.src, c.dst, c.d, c.size,
                              c.bottleneck == Bottleneck::link ? "link" : "inject",
                              c.receiver_start ? "_latercv" : "");
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

Machine machine_for(const LatencyCase& c) {
  Machine m = ts_test::prime_machine(c.spec);
  if (c.bottleneck == Bottleneck::inject) m.net.inject_byte_time = 11;  // > link 7 > eject 5
  return m;
}

class ContentionFreeLatency : public testing::TestWithParam<LatencyCase> {};

TEST_P(ContentionFreeLatency, ArrivalReceiveAndSendReturnMatchTheFormula) {
  const LatencyCase c = GetParam();
  const Machine m = machine_for(c);
  const Model model{m};
  // With nonzero, distinct parameters the terms of the formula are all visible.
  ASSERT_GT(model.b(c.d), 0);

  const Time h = model.handed(c.sender_start, c.size);
  const Time arrival = model.arrival_cf(h, c.d, c.size);
  const Time send_returns = model.send_return_cf(h, c.d, c.size);
  // Equivalently, the last packet's position-0 free time is arrival - (d+1)*t_hop.
  ASSERT_EQ(send_returns, arrival - (c.d + 1) * model.hop());
  const Time recv_done = model.recv_done(c.receiver_start, arrival, c.size);

  Status st;
  Time sender_after_send = -1, receiver_after_recv = -1;
  int hops = -1;
  const auto out = ts_test::bytes(c.size, 3);
  std::vector<std::byte> in(c.size);
  const RunResult r = run(m, [&](Proc& p) {
    if (p.rank() == c.src && c.src == c.dst) {
      hops = p.hops(c.src, c.dst);
      p.compute(c.sender_start);
      Request s = p.isend(c.dst, 4, out);
      p.wait(s);
      sender_after_send = p.now();
      if (p.now() < c.receiver_start) p.compute(c.receiver_start - p.now());
      st = p.recv(c.src, 4, in);
      receiver_after_recv = p.now();
      return;
    }
    if (p.rank() == c.src) {
      hops = p.hops(c.src, c.dst);
      p.compute(c.sender_start);
      p.send(c.dst, 4, out);
      sender_after_send = p.now();
    } else if (p.rank() == c.dst) {
      p.compute(c.receiver_start);
      st = p.recv(c.src, 4, in);
      receiver_after_recv = p.now();
    }
  });

  EXPECT_EQ(hops, c.d);
  EXPECT_EQ(st.source, c.src);
  EXPECT_EQ(st.tag, 4);
  EXPECT_EQ(st.size, c.size);
  EXPECT_EQ(st.arrival, arrival);
  EXPECT_EQ(sender_after_send, send_returns);
  if (c.src == c.dst) {
    EXPECT_EQ(receiver_after_recv, model.recv_done(std::max(send_returns, c.receiver_start), arrival, c.size));
  } else {
    EXPECT_EQ(receiver_after_recv, recv_done);
  }
  EXPECT_EQ(in, out);
  EXPECT_EQ(r.stats.messages, 1u);
  EXPECT_EQ(r.stats.packets, model.packets(c.size));
  EXPECT_EQ(r.stats.blocked_headers, 0u);
  EXPECT_EQ(r.stats.blocked_time, 0);
  EXPECT_EQ(r.makespan, std::max(sender_after_send, receiver_after_recv));
}

std::vector<LatencyCase> cases() {
  // Routes on mesh:4x4 (row-major, X = along the row first): 0->0 self (d=0), 0->1 (d=1),
  // 0->3 (d=3, straight), 0->15 (d=6, turns at (0,3)), 13->2 (d=4, goes left then up);
  // mesh:2x3x4 0->23 (d=1+2+3, turns twice); torus:5 0->4 (d=1 over the wrap link);
  // torus:4x4 0->15 (d=2, both wraps); mesh:1x9 0->8 (d=8, the longest used).
  struct Route {
    std::string spec;
    int src, dst, d;
  };
  const std::vector<Route> routes = {{"mesh:4x4", 0, 0, 0},   {"mesh:4x4", 0, 1, 1},    {"mesh:4x4", 0, 3, 3},
                                     {"mesh:4x4", 0, 15, 6},  {"mesh:4x4", 13, 2, 4},   {"mesh:2x3x4", 0, 23, 6},
                                     {"torus:5", 0, 4, 1},    {"torus:4x4", 0, 15, 2},  {"mesh:1x9", 0, 8, 8}};
  // Sizes against packet_payload = 64: empty, 1 byte, exactly one packet, one byte over, many
  // packets with a partial last one.
  const std::vector<std::size_t> sizes = {0, 1, 64, 65, 5 * 64 + 7};
  std::vector<LatencyCase> out;
  for (const auto& r : routes)
    for (auto s : sizes) out.push_back({r.spec, r.src, r.dst, r.d, s, 0, 0, Bottleneck::link});
  // The sender starting late, the receiver posting after the arrival, the injection channel as the
  // bottleneck (and a self-send, whose path has no link: b = max(inject, eject)).
  out.push_back({"mesh:4x4", 0, 15, 6, 200, 4001, 0, Bottleneck::link});
  out.push_back({"mesh:4x4", 0, 15, 6, 200, 0, 1'000'003, Bottleneck::link});
  out.push_back({"mesh:4x4", 5, 10, 2, 130, 0, 0, Bottleneck::inject});
  out.push_back({"mesh:4x4", 5, 5, 0, 130, 0, 0, Bottleneck::inject});
  out.push_back({"mesh:4x4", 5, 5, 0, 130, 0, 1'000'003, Bottleneck::link});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Routes, ContentionFreeLatency, testing::ValuesIn(cases()), case_name);

// Packet counts: with payload P, sizes k*P and k*P+1 give k and k+1 packets, each carrying its own
// header; the stats count every packet.
TEST(ContentionFreeLatency, PacketCountsFollowCeilSizeOverPayload) {
  Machine m = ts_test::prime_machine("mesh:1x2");
  const Model model{m};
  for (std::size_t size : {std::size_t{0}, std::size_t{63}, std::size_t{64}, std::size_t{128}, std::size_t{129},
                           std::size_t{640}}) {
    const std::size_t n = size == 0 ? 1 : (size + 63) / 64;
    ASSERT_EQ(model.packets(size), n);
    Time total_wire = 0;
    for (std::size_t k = 0; k < n; ++k) total_wire += model.wire(size, k);
    ASSERT_EQ(total_wire, static_cast<Time>(size + n * 31));
    Status st;
    const auto out = ts_test::bytes(size);
    std::vector<std::byte> in(size);
    const RunResult r = run(m, [&](Proc& p) {
      if (p.rank() == 0) p.send(1, 0, out);
      else st = p.recv(0, 0, in);
    });
    EXPECT_EQ(r.stats.packets, n) << "size " << size;
    EXPECT_EQ(st.arrival, model.handed(0, size) + 2 * model.hop() + total_wire * model.b(1)) << "size " << size;
  }
}

}  // namespace

namespace {

// A 1x3 mesh whose link 1->2 is slower than the machine's links, as a fat tree's or HPAM's
// levels are: the body streams at the slowest channel of the path.
class SlowSecondLink : public ts_test::WrappedTopology {
 public:
  explicit SlowSecondLink(std::shared_ptr<const Topology> base) : WrappedTopology(std::move(base)) {
    std::vector<LinkId> path;
    this->base().route(1, 2, path);
    slow_ = path.at(0);
  }
  std::string name() const override { return "slow-second-link"; }
  Time link_byte_time(LinkId id) const override { return id == slow_ ? 19 : 0; }

 private:
  LinkId slow_ = 0;
};

TEST(ContentionFreeLatency, PerLinkByteTimeSetsTheBottleneckOnlyOnPathsThatCrossIt) {
  Machine m = ts_test::prime_machine("mesh:1x3");
  m.topology = std::make_shared<SlowSecondLink>(m.topology);
  const Model model{m};
  const std::size_t size = 100;  // two packets: 64 + 36 payload, 31 header each
  const Time wire = static_cast<Time>(size + 2 * 31);
  for (const auto& [src, dst, d, b] : {std::tuple{0, 1, 1, Time{7}}, std::tuple{0, 2, 2, Time{19}},
                                       std::tuple{1, 2, 1, Time{19}}, std::tuple{2, 0, 2, Time{7}}}) {
    Status st;
    const auto out = ts_test::bytes(size);
    std::vector<std::byte> in(size);
    run(m, [&](Proc& p) {
      if (p.rank() == src) p.send(dst, 0, out);
      else if (p.rank() == dst) st = p.recv(src, 0, in);
    });
    EXPECT_EQ(st.arrival, model.handed(0, size) + (d + 1) * model.hop() + wire * b)
        << src << "->" << dst;
  }
}

}  // namespace
