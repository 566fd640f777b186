#include "checked_time.hpp"

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/topology.hpp"

namespace touchstone::detail {

Time send_cost_sat(const Machine& m, int node, std::uint64_t bytes) {
  const NodeCosts& c = m.costs_of(node);
  return add_sat(add_sat(c.send_overhead, mul_sat(bytes, c.send_per_byte)),
                 mul_sat(m.net.packets(bytes), c.send_per_packet));
}

Time recv_cost_sat(const Machine& m, int node, std::uint64_t bytes) {
  const NodeCosts& c = m.costs_of(node);
  return add_sat(add_sat(c.recv_overhead, mul_sat(bytes, c.recv_per_byte)),
                 mul_sat(m.net.packets(bytes), c.recv_per_packet));
}

namespace {

void check_cap(const std::string& where, const char* name, Time value, Time cap) {
  if (value < 0 || value > cap)
    throw UsageError(fmt::format("machine: {}{} = {} ps is outside 0..{} ps (larger costs could overflow virtual "
                                 "time, a 64-bit count of picoseconds)",
                                 where, name, value, cap));
}

void check_node_costs(const std::string& where, const NodeCosts& c) {
  for (auto [name, v] : {std::pair{"send_overhead", c.send_overhead}, {"recv_overhead", c.recv_overhead},
                         {"probe_cost", c.probe_cost}})
    check_cap(where, name, v, kMaxOverheadTime);
  if (c.send_tail < 0 || c.send_tail > c.send_overhead)
    throw UsageError(fmt::format("machine: {}send_tail = {} us is outside 0..send_overhead = {} us: the send's tail is the "
                                 "last part of the send's set-up (send_tail_us <= send_us; docs/model.md 2.19)",
                                 where, to_us(c.send_tail), to_us(c.send_overhead)));
  for (auto [name, v] : {std::pair{"send_per_byte", c.send_per_byte}, {"recv_per_byte", c.recv_per_byte},
                         {"send_per_packet", c.send_per_packet}, {"recv_per_packet", c.recv_per_packet},
                         {"match_per_entry", c.match_per_entry}, {"copy_per_byte", c.copy_per_byte},
                         {"copy_per_piece", c.copy_per_piece}, {"demux_switch", c.demux_switch},
                         {"reduce_int_per_byte", c.reduce_int_per_byte},
                         {"reduce_float_per_byte", c.reduce_float_per_byte}})
    check_cap(where, name, v, kMaxPerUnitTime);
}

}  // namespace

void check_run_inputs(const Machine& machine, const RunOptions& options) {
  if (options.time_limit <= 0 || options.time_limit > kMaxTimeLimit)
    throw UsageError(fmt::format("the virtual time limit must be in 1..{} ps (10^6 s); got {} ps", kMaxTimeLimit,
                                 options.time_limit));
  if (!(options.parallel_programs_from_us >= 0 && options.parallel_programs_from_us <= 1e9))
    throw UsageError(fmt::format("parallel_programs_from_us must be in 0..1e9 host microseconds; got {}",
                                 options.parallel_programs_from_us));
  check_node_costs("", machine.costs);
  if (!machine.node_costs.empty()) {
    if (machine.node_costs.size() != static_cast<std::size_t>(machine.nodes()))
      throw UsageError(fmt::format("machine: node_costs has {} entries for {} nodes", machine.node_costs.size(),
                                   machine.nodes()));
    for (std::size_t n = 0; n < machine.node_costs.size(); ++n)
      check_node_costs(fmt::format("node {}'s ", n), machine.node_costs[n]);
  }
  const NetworkParams& net = machine.net;
  check_cap("", "hop_time", net.hop_time, kMaxOverheadTime);
  check_cap("", "barrier_latency", net.barrier_latency, kMaxOverheadTime);
  check_cap("", "link_byte_time", net.link_byte_time, kMaxPerUnitTime);
  check_cap("", "inject_byte_time", net.inject_byte_time, kMaxPerUnitTime);
  check_cap("", "eject_byte_time", net.eject_byte_time, kMaxPerUnitTime);
  if (net.packet_payload < 1 || net.packet_payload > (1 << 30) || net.packet_header < 0 ||
      net.packet_header > (1 << 20))
    throw UsageError(fmt::format("machine: packets of {}+{} bytes; the payload must be in 1..2^30 bytes and the "
                                 "header in 0..2^20",
                                 net.packet_payload, net.packet_header));
  // A topology's own per-link byte times (fat tree and HPAM levels): one virtual call per channel.
  const Topology& topo = *machine.topology;
  for (std::size_t l = 0; l < topo.link_channels(); ++l) {
    const Time t = topo.link_byte_time(static_cast<LinkId>(l));
    if (t < 0 || t > kMaxPerUnitTime)
      check_cap(fmt::format("link {}'s ", topo.link_name(static_cast<LinkId>(l))), "byte time", t, kMaxPerUnitTime);
  }
}

std::string time_limit_report(Time limit, const std::string& detail) {
  return fmt::format("virtual time limit of {} us exceeded{} (a VP polling forever, or a very long run; raise it with "
                     "--time-limit)",
                     to_us(limit), detail.empty() ? "" : ": " + detail);
}

std::string check_message_cost(const Machine& m, int src, int dst, std::uint64_t bytes, Time limit) {
  const Time send = send_cost_sat(m, src, bytes), recv = recv_cost_sat(m, dst, bytes);
  if (send <= limit && recv <= limit) return {};
  const Time cost = send > limit ? send : recv;
  return fmt::format("a message of {} bytes from rank {} to rank {} alone costs the {}'s CPU {}", bytes, src, dst,
                     send > limit ? "sender" : "receiver",
                     cost == kNever ? std::string("more than 2^63 ps") : fmt::format("{} us", to_us(cost)));
}

}  // namespace touchstone::detail
