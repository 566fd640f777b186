#include "options.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "text.hpp"
#include "touchstone/error.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::machines {
namespace {

std::string opt(const char* key) { return fmt::format("machine option '{}'", key); }

// A two-way mechanism of the nodes' CPUs, set on every node (HPAM's per-level costs too): the
// value is one of two words, listed in this order in the error, `yes` setting the flag.
void set_node_flag(Machine& m, const char* key, const std::string& v, bool NodeCosts::*flag,
                   std::pair<const char*, const char*> words = {"on", "off"}, const char* yes = "on") {
  if (v != words.first && v != words.second)
    throw UsageError(fmt::format("{}: expected {} or {}, got '{}'", opt(key), words.first, words.second, v));
  m.costs.*flag = v == yes;
  for (auto& c : m.node_costs) c.*flag = m.costs.*flag;
}

struct Option {
  const char* key;
  const char* help;
  std::function<void(Machine&, const std::string&)> set;
};

// The row of a time option: `key` sets the field of the machine's node costs (NodeCosts, on every
// node) or network parameters (NetworkParams) to a number of `unit`s.
template <class Params>
Option time_of(Time Params::*field, const char* key, const char* help, Time unit) {
  return {key, help, [field, key, unit](Machine& m, const std::string& v) {
            Params& params = [&]() -> Params& {
              if constexpr (std::is_same_v<Params, NodeCosts>) return m.costs;
              else return m.net;
            }();
            // Per-byte, per-packet and per-entry costs multiply with counts: a smaller cap (text.hpp).
            const std::string k = key;
            const bool per_unit = k.find("per_byte") != std::string::npos || k.find("per_packet") != std::string::npos ||
                                  k.find("copy_ns_per") != std::string::npos || k == "match_ns" || k == "demux_us";
            params.*field = parse_time(opt(key), v, unit, per_unit ? kMaxPerUnitTime : kMaxOverheadTime);
            // A node cost is set on every node, per-node costs too (HPAM's levels), as set_node_flag does:
            // otherwise costs_of(node) would silently keep the node's own value.
            if constexpr (std::is_same_v<Params, NodeCosts>)
              for (auto& c : m.node_costs) c.*field = params.*field;
          }};
}

const std::vector<Option>& options() {
  static const std::vector<Option> table = {
      // The CPU per message and per byte (docs/model.md 2.1).
      time_of(&NodeCosts::send_overhead, "send_us", "C_send: sender overhead per message (us)", microseconds(1)),
      time_of(&NodeCosts::send_per_byte, "send_ns_per_byte", "send_byte_time (ns per byte)", nanoseconds(1)),
      time_of(&NodeCosts::recv_overhead, "recv_us", "C_recv: receiver overhead per message (us)", microseconds(1)),
      time_of(&NodeCosts::recv_per_byte, "recv_ns_per_byte", "recv_byte_time (ns per byte)", nanoseconds(1)),
      // ... and per packet, for machines whose CPU moves each packet itself (2.14).
      time_of(&NodeCosts::send_per_packet, "send_us_per_packet",
              "sender CPU time per packet of a message, on top of send_us and send_ns_per_byte (us)", microseconds(1)),
      time_of(&NodeCosts::recv_per_packet, "recv_us_per_packet",
              "receiver CPU time per packet of a message, on top of recv_us and recv_ns_per_byte (us)",
              microseconds(1)),
      // The rest of a node's costs: its network interface, matching, copies and polls.
      time_of(&NodeCosts::ni_setup, "ni_setup_us",
              "network-interface part of the send set-up: a message starts on an injection port no earlier than this "
              "after the port's previous message left (us)",
              microseconds(1)),
      time_of(&NodeCosts::send_tail, "send_tail_us",
              "the last part of send_us, done after the message is handed to the network, so that its transfer "
              "overlaps it (at most send_us; us)",
              microseconds(1)),
      time_of(&NodeCosts::match_per_entry, "match_ns",
              "matching: receiver time per queue entry examined, posted receives or unexpected messages (ns)",
              nanoseconds(1)),
      time_of(&NodeCosts::copy_per_byte, "copy_ns_per_byte",
              "local memory copy time per byte, for combining and extracting blocks (ns)", nanoseconds(1)),
      time_of(&NodeCosts::copy_per_piece, "copy_ns_per_piece",
              "local memory copy time per contiguous piece copied (ns)", nanoseconds(1)),
      time_of(&NodeCosts::reduce_int_per_byte, "reduce_int_ns_per_byte",
              "gamma of integer and logical reduction operators: time per byte combined (ns)", nanoseconds(1)),
      time_of(&NodeCosts::reduce_float_per_byte, "reduce_float_ns_per_byte",
              "gamma of floating-point reduction operators: time per byte combined (ns)", nanoseconds(1)),
      time_of(&NodeCosts::probe_cost, "probe_us", "cost of a probe or test that finds nothing (us)", microseconds(1)),
      // The network: its channels and packets.
      time_of(&NetworkParams::hop_time, "hop_ns", "t_hop: header time per channel (ns)", nanoseconds(1)),
      time_of(&NetworkParams::link_byte_time, "link_ns_per_byte", "link byte time (ns per byte; 40 = 25 MB/s)",
              nanoseconds(1)),
      time_of(&NetworkParams::inject_byte_time, "inject_ns_per_byte", "injection channel byte time (ns per byte)",
              nanoseconds(1)),
      time_of(&NetworkParams::eject_byte_time, "eject_ns_per_byte", "ejection channel byte time (ns per byte)",
              nanoseconds(1)),
      // Whether the CPU works while the packets travel (2.15).
      {"recv_overlap",
       "on: the receive drains each packet as it arrives (max(link, receive) per byte), off: after the whole message",
       [](Machine& m, const std::string& v) { set_node_flag(m, "recv_overlap", v, &NodeCosts::recv_overlap); }},
      {"send_overlap",
       "on: each packet leaves as soon as the sender's CPU has written it; off: after the whole message",
       [](Machine& m, const std::string& v) { set_node_flag(m, "send_overlap", v, &NodeCosts::send_overlap); }},
      {"demux",
       "message: a message is matched to its receive once; packet: every packet that does not continue the message of "
       "the node's previous packet is matched again, paying match_ns per queue entry examined",
       [](Machine& m, const std::string& v) {
         set_node_flag(m, "demux", v, &NodeCosts::demux_per_packet, {"message", "packet"}, "packet");
       }},
      time_of(
          &NodeCosts::demux_switch, "demux_us",
          "with demux=packet: CPU time per packet matched again, on top of match_ns per entry its search examines (us)",
          microseconds(1)),
      {"packet", "packet size as PAYLOAD+HEADER bytes, e.g. 482+30",
       [](Machine& m, const std::string& v) {
         const auto plus = v.find('+');
         if (plus == std::string::npos)
           throw UsageError(fmt::format("machine option 'packet': expected PAYLOAD+HEADER, got '{}'", v));
         m.net.packet_payload = static_cast<int>(parse_int(opt("packet"), v.substr(0, plus), 1, 1 << 30));
         m.net.packet_header = static_cast<int>(parse_int(opt("packet"), v.substr(plus + 1), 0, 1 << 20));
       }},
      {"send_holds_until_received",
       "on: a send completes only when the receive of its message has completed (no buffering in the network "
       "interface); off (default): when its last packet has left",
       [](Machine& m, const std::string& v) {
         if (v != "on" && v != "off")
           throw UsageError(fmt::format("machine option 'send_holds_until_received': expected on or off, got '{}'", v));
         m.net.send_holds_until_received = v == "on";
       }},
      {"ports", "injection and ejection channels per node: 1 (one-port), K, or all (one per link)",
       [](Machine& m, const std::string& v) {
         const int k = v == "all" ? static_cast<int>(2 * std::max<std::size_t>(1, m.topology->dims().size()))
                                  : static_cast<int>(parse_int(opt("ports"), v, 1, 64));
         m.net.inj_ports = m.net.ej_ports = k;
       }},
      {"inj_ports", "injection channels per node",
       [](Machine& m, const std::string& v) {
         m.net.inj_ports = static_cast<int>(parse_int(opt("inj_ports"), v, 1, 64));
       }},
      {"ej_ports", "ejection channels per node",
       [](Machine& m, const std::string& v) {
         m.net.ej_ports = static_cast<int>(parse_int(opt("ej_ports"), v, 1, 64));
       }},
      {"buffer", "receive buffer per node in bytes, or unlimited",
       [](Machine& m, const std::string& v) {
         m.net.recv_buffer = v == "unlimited" ? -1 : parse_int(opt("buffer"), v, 0, 1LL << 50);
       }},
      {"eager_limit",
       "flow control: messages above BYTES (or not fitting the receiver's free buffer) go by rendezvous; unlimited: "
       "only the buffer decides; off (default): no flow control",
       [](Machine& m, const std::string& v) { m.net.eager_limit = parse_eager_limit(opt("eager_limit"), v); }},
      {"barrier", "hardware (control network) or software (dissemination over the data network)",
       [](Machine& m, const std::string& v) {
         if (v == "hardware")
           m.net.barrier = BarrierKind::hardware;
         else if (v == "software")
           m.net.barrier = BarrierKind::software;
         else
           throw UsageError(fmt::format("machine option 'barrier': expected hardware or software, got '{}'", v));
       }},
      {"switching", "wormhole, or cut-through (a blocked worm that fits in router_buffer drains into it)",
       [](Machine& m, const std::string& v) {
         if (v == "wormhole")
           m.net.switching = Switching::wormhole;
         else if (v == "cut-through")
           m.net.switching = Switching::cut_through;
         else
           throw UsageError(fmt::format("machine option 'switching': expected wormhole or cut-through, got '{}'", v));
       }},
      {"arbitration",
       "which waiting header gets a freed channel: fifo (longest waiting), random (seeded), or round-robin (by input "
       "channel)",
       [](Machine& m, const std::string& v) {
         if (v == "fifo")
           m.net.arbitration = Arbitration::fifo;
         else if (v == "random")
           m.net.arbitration = Arbitration::random;
         else if (v == "round-robin")
           m.net.arbitration = Arbitration::round_robin;
         else
           throw UsageError(
               fmt::format("machine option 'arbitration': expected fifo, random or round-robin, got '{}'", v));
       }},
      {"router_buffer", "cut-through: buffer bytes at each switch input port",
       [](Machine& m, const std::string& v) {
         m.net.router_buffer = parse_int(opt("router_buffer"), v, 0, 1LL << 40);
       }},
      time_of(&NetworkParams::barrier_latency, "barrier_us", "hardware barrier latency from the last arrival (us)",
              microseconds(1)),
  };
  return table;
}

}  // namespace

void apply_option(Machine& m, const std::string& key, const std::string& value) {
  for (const auto& o : options())
    if (key == o.key) return o.set(m, value);
  std::string known;
  for (const auto& o : options()) known += std::string(known.empty() ? "" : ", ") + o.key;
  throw UsageError(fmt::format("unknown machine option '{}' (known: {})", key, known));
}

std::vector<std::pair<std::string, std::string>> generic_options() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& o : options()) out.emplace_back(o.key, o.help);
  return out;
}

}  // namespace touchstone::machines
