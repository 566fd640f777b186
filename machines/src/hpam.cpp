// HPAM machines of paper 001 (section 2, Table 1): levels of meshes joined by eq. 1, per-level node
// costs in the ratio Q, optional inter-level multicast hardware (section 3.1).
#include <fmt/format.h>

#include "family.hpp"
#include "text.hpp"
#include "touchstone/error.hpp"
#include "touchstone/topologies/hpam.hpp"

namespace touchstone::machines {
namespace {

int positive(const std::string& what, const std::string& text) {
  return static_cast<int>(parse_int(fmt::format("hpam: {}", what), text, 1, 1 << 20));
}

// "1x1/16x16": levels top first, '/' between them.
std::shared_ptr<const Hpam> hpam_topology(const std::string& arg) {
  std::vector<std::pair<int, int>> levels;
  for (const auto& part : split(arg, '/')) {
    const auto x = part.find('x');
    if (x == std::string::npos)
      throw UsageError(fmt::format("hpam: level '{}' must look like RxC (e.g. hpam:1x1/16x16)", part));
    levels.emplace_back(positive("rows", part.substr(0, x)), positive("columns", part.substr(x + 1)));
  }
  return make_hpam(std::move(levels));
}

// Table 1 for level l (1-based) and ratio Q: C^1 = 2 us, C^2 = 2Q us; lambda'_1/W_1 = 0.01 us/byte,
// lambda'_2/W_2 = 0.01Q us/byte, on both the send and the receive side. A level l > 2 continues
// the ratio: Q^(l-1).
// Q^(l-1) is range-checked: level l's per-byte cost, 10 ns x Q^(l-1), must stay within
// kMaxPerUnitTime (1 ms), so Q^(l-1) <= 10^5 (hpam:1x1/1x1/1x1/1x1/1x1,Q=65536 wrapped to negative
// costs). The per-message cost, 2 us x Q^(l-1) <= 0.2 s, is then within kMaxOverheadTime too.
NodeCosts level_costs(int level, int q) {
  constexpr Time kMaxMult = kMaxPerUnitTime / nanoseconds(10);
  Time mult = 1;
  for (int l = 1; l < level; ++l) {
    if (mult > kMaxMult / q)
      throw UsageError(fmt::format("hpam: Q={} makes level {}'s costs (2 us, and 10 ns per byte, times Q^{}) more "
                                   "than the largest allowed (a per-byte time of at most {} ps, so that no cost can "
                                   "overflow virtual time)",
                                   q, level, level - 1, kMaxPerUnitTime));
    mult *= q;
  }
  NodeCosts c;
  c.send_overhead = c.recv_overhead = microseconds(2) * mult;
  c.send_per_byte = c.recv_per_byte = nanoseconds(10) * mult;
  c.probe_cost = microseconds(1);
  return c;
}

}  // namespace

Machine hpam_machine(const std::string& arg, SpecOptions& opts, const std::string&) {
  int q = 8;
  if (auto v = opts.take("Q")) q = positive("Q", *v);
  if (auto v = opts.take("q")) q = positive("Q", *v);
  bool multicast = false;
  if (auto v = opts.take("multicast")) {
    if (*v != "on") throw UsageError("hpam: 'multicast' is a bare flag (hpam:4x4/16x16,Q=8,multicast)");
    multicast = true;
  }
  for (const char* k : {"send_us", "recv_us", "send_ns_per_byte", "recv_ns_per_byte", "copy_ns_per_byte", "copy_ns_per_piece"})
    if (opts.take(k))
      throw UsageError(fmt::format("hpam: option '{}' is not allowed; the per-level costs come from Table 1 and Q", k));
  auto topo = hpam_topology(arg);
  Machine m = machine_on(topo);
  m.name = fmt::format("{},Q={}", topo->name(), q);
  m.costs = level_costs(1, q);
  m.node_costs.resize(static_cast<std::size_t>(topo->nodes()));
  for (int l = 1; l <= topo->levels(); ++l) {
    const NodeCosts c = level_costs(l, q);
    for (int n = topo->first(l); n < topo->first(l) + topo->rows(l) * topo->cols(l); ++n)
      m.node_costs[static_cast<std::size_t>(n)] = c;
  }
  // Lambda = lambda/W = 0.01 us/byte (Table 1), the same on every link of every level (section
  // 2.4: "the interconnect between two processors in any level is assumed to be equally fast").
  // The header's time per hop is Lambda too: eq. 3 charges Lambda * eta for eta hops.
  set_channels(m.net, nanoseconds(10), nanoseconds(10), 1 << 30, 0);  // one worm per message, as the paper's t_net
  m.net.inj_ports = m.net.ej_ports = 1;  // uni-port (section 2.1)
  // Eqs. 4-14 charge every message a whole A = Gamma + Omega S one after the other: a sender starts
  // its next send only once the receiver has taken the message (C_recv + S lambda'/W). A send that
  // completes when its receive has completed is that machine (docs/paper001.md, "The port model").
  m.net.send_holds_until_received = true;
  m.net.barrier = BarrierKind::software;
  // Section 3.1's replication hardware: a message forks onto all the inter-level outgoing channels
  // of a level's last-row router at once (docs/model.md 2.11).
  m.net.multicast = multicast;
  if (multicast) m.name += ",multicast";
  return m;
}

}  // namespace touchstone::machines
