// Paper 002, section 2: analytic costs in the circuit-switched model t_s + d t_p + N t_e.
#include "cost002.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "cccube.hpp"
#include "embedding.hpp"
#include "permutations.hpp"
#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {
Time byte_time(const Machine& m) {
  return std::max({m.net.link_byte_time, m.net.inject_byte_time, m.net.eject_byte_time});
}
std::size_t packets(const Machine& m, std::size_t bytes) {
  const auto P = static_cast<std::size_t>(m.net.packet_payload);
  return std::max<std::size_t>(1, (bytes + P - 1) / P);
}
Time scaled(double per_byte, double bytes) { return static_cast<Time>(std::llround(per_byte * bytes)); }
}  // namespace

CircuitParams circuit_params(const Machine& m, std::size_t bytes) {
  const Time b = byte_time(m);
  CircuitParams c;
  c.t_s = m.costs.send_overhead + m.costs.recv_overhead + m.net.hop_time +
          static_cast<Time>(packets(m, bytes)) * m.net.packet_header * b;
  c.t_p = m.net.hop_time;
  c.t_e = static_cast<double>(b + m.costs.send_per_byte + m.costs.recv_per_byte);
  return c;
}

Time message_cost(const Machine& m, std::size_t bytes, int hops) {
  const CircuitParams c = circuit_params(m, bytes);
  return c.t_s + hops * c.t_p + scaled(c.t_e, static_cast<double>(bytes));
}

Time cc_cube_cost(const Machine& m, std::size_t L, int degree) {
  const Topology& t = *m.topology;
  const Embedding e = embedding_for(t);
  const int d = e.d, blocks = (1 << d) / 2;
  if (d == 0) return 0;
  if (degree < 1 || degree > blocks) throw UsageError(fmt::format("cc_cube_cost: degree {} out of 1..{}", degree, blocks));
  std::vector<int> delta, rounds;
  for (int i = 0; i < d; ++i) {
    delta.push_back(dilation(t, e, i));
    rounds.push_back(congestion(t, e, i));
  }
  Time total = 0;
  if (degree == 1) {
    for (int i = 0; i < d; ++i) {
      total += rounds[static_cast<std::size_t>(i)] * message_cost(m, static_cast<std::size_t>(blocks) * L, delta[static_cast<std::size_t>(i)]) +
               (rounds[static_cast<std::size_t>(i)] - 1) * message_cost(m, 0, 1);
      // The token between iterations: a node of the last round sends one to each round-0 node
      // that waits for it, one after another (in the algorithm's order), so the k-th waits
      // (k - 1) C_send longer; the slowest one counts.
      if (i == 0) continue;
      std::map<int, int> sent;  // tokens each source has sent so far
      Time worst = -1;
      for (const auto first = exchange_rounds(t, e, i); int x : first[0])
        for (int h : {x, x ^ (1 << i)})
          if (const int from = cc_cube_boundary_source(t, e, i, h); from >= 0 && from != h) {
            const int k = ++sent[from];
            const int hops = t.distance(e.node_of[static_cast<std::size_t>(h)], e.node_of[static_cast<std::size_t>(from)]);
            worst = std::max(worst, message_cost(m, 0, hops) + (k - 1) * m.costs.send_overhead);
          }
      if (worst >= 0) total += worst;
    }
    return total;
  }
  // Degree > 1: in a step the node posts |A| sends at once. The first send's CPU, then the larger of
  // the other sends' CPU and the wire time W (the injection channels carry ceil(|A| / ports) pieces
  // one after another, the busiest link R_i pieces), then the farthest header's latency and the
  // |A| receives. With |A| = R_i = 1 this is t_s + delta_i t_p + N t_e again.
  const Time b = byte_time(m);
  for (int s = 0; s + 1 < d + degree; ++s) {
    int active = 0, hops = 0, worst_rounds = 0;
    std::size_t bytes = 0;
    for (int i = 0; i < d; ++i) {
      const int q = s - i;
      if (q < 0 || q >= degree) continue;
      const int nq = blocks / degree + (q < blocks % degree ? 1 : 0);
      bytes = std::max(bytes, static_cast<std::size_t>(nq) * L);
      hops = std::max(hops, delta[static_cast<std::size_t>(i)]);
      worst_rounds = std::max(worst_rounds, rounds[static_cast<std::size_t>(i)]);
      ++active;
    }
    const Time send1 = m.costs.send_overhead + static_cast<Time>(bytes) * m.costs.send_per_byte;
    const Time recv1 = m.costs.recv_overhead + static_cast<Time>(bytes) * m.costs.recv_per_byte;
    const Time wire = static_cast<Time>(bytes + packets(m, bytes) * static_cast<std::size_t>(m.net.packet_header)) * b;
    const int injected = (active + m.net.inj_ports - 1) / m.net.inj_ports;
    total += send1 + std::max((active - 1) * send1, std::max(injected, worst_rounds) * wire) +
             (hops + 1) * m.net.hop_time + active * recv1;
  }
  return total;
}

Time schedule_cost(const Machine& m, std::size_t L, const Schedule& s) {
  const Topology& t = *m.topology;
  const CircuitParams c = circuit_params(m, L);
  Time total = 0;
  for (const auto& to : s.to) {
    std::vector<std::pair<int, int>> msgs;
    int longest = 0;
    for (int a = 0; a < static_cast<int>(to.size()); ++a) {
      const int b = to[static_cast<std::size_t>(a)];
      if (b < 0 || b == a) continue;
      msgs.emplace_back(a, b);
      longest = std::max(longest, t.distance(a, b));
    }
    if (msgs.empty()) continue;
    total += c.t_s + longest * c.t_p + scaled(c.t_e, static_cast<double>(std::max(1, link_load(t, msgs))) * static_cast<double>(L));
  }
  return total;
}

Time direct_cost(const Machine& m, std::size_t L) {
  const Topology& t = *m.topology;
  const int p = t.nodes();
  if (p < 2) return 0;
  std::vector<std::pair<int, int>> msgs;
  int diameter = 0;
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      if (a != b) {
        msgs.emplace_back(a, b);
        diameter = std::max(diameter, t.distance(a, b));
      }
  const Time b = byte_time(m), wire = static_cast<Time>(L + packets(m, L) * static_cast<std::size_t>(m.net.packet_header)) * b;
  const Time send_cpu = m.costs.send_overhead + static_cast<Time>(L) * m.costs.send_per_byte;
  const Time recv_cpu = m.costs.recv_overhead + static_cast<Time>(L) * m.costs.recv_per_byte;
  const Time inject = static_cast<Time>((p - 1 + m.net.inj_ports - 1) / m.net.inj_ports) * wire;
  // One CPU pays for the p - 1 sends and the p - 1 receives; or the first send, the busiest
  // channel, the crossing of the diameter and the last receive take longer.
  const Time wires = std::max(inject, link_load(t, msgs) * wire);
  return std::max((p - 1) * (send_cpu + recv_cpu), send_cpu + wires + (diameter + 1) * m.net.hop_time + recv_cpu);
}

Time alltoall_cost(const std::string& a, const Machine& m, std::size_t L) {
  if (a == "alltoall/cc-cube") return cc_cube_cost(m, L, 1);
  const std::string prefix = "alltoall/pipelined-cc-cube(";
  if (a.rfind(prefix, 0) == 0) return cc_cube_cost(m, L, std::stoi(a.substr(prefix.size())));
  if (a == "alltoall/1-lev-xor") return schedule_cost(m, L, shared_schedule("xor", {m.nodes()}));
  if (a == "alltoall/1-lev-lin") return schedule_cost(m, L, shared_schedule("linear", {m.nodes()}));
  if (a == "alltoall/1-lev-dir") return direct_cost(m, L);
  throw UsageError(fmt::format("no analytic cost model for '{}'", a));
}

}  // namespace touchstone::algorithms
