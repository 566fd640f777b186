// Machine specs: presets with options ("mesh:16x16,ports=all") and JSON machine files. One table
// of options serves both, so a key means the same thing wherever it is written.
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../../topologies/fat_tree.hpp"
#include "../../topologies/grid.hpp"
#include "../../topologies/hpam.hpp"
#include "../../topologies/switch_network.hpp"
#include "touchstone/error.hpp"
#include "touchstone/machine.hpp"

namespace touchstone {
namespace {

// Defaults of the generic mesh and torus presets (docs/machines.md): a wormhole machine of the
// early 1990s, with links of 25 MB/s like the SimGrid platform of the peer benchmark.
Machine generic(std::shared_ptr<const Topology> topo) {
  Machine m;
  m.topology = std::move(topo);
  m.name = m.topology->name();
  m.costs.send_overhead = microseconds(10);
  m.costs.send_per_byte = nanoseconds(10);
  m.costs.recv_overhead = microseconds(10);
  m.costs.recv_per_byte = nanoseconds(10);
  m.costs.probe_cost = microseconds(1);
  m.net.hop_time = nanoseconds(100);
  m.net.link_byte_time = nanoseconds(40);
  m.net.inject_byte_time = nanoseconds(40);
  m.net.eject_byte_time = nanoseconds(40);
  m.net.packet_payload = 1024;
  m.net.packet_header = 32;
  m.net.barrier = BarrierKind::software;
  m.net.barrier_latency = microseconds(5);
  return m;
}

// The Thinking Machines CM-5 of paper 003 (section 3): a 4-ary fat tree of 32 to 1024 nodes
// (topologies/fat_tree.hpp: 20 MB/s inside a cluster of 4, 10 MB/s inside 16, 5 MB/s beyond),
// active-message packets of 20 bytes carrying 16 bytes of payload, sending a one-packet message
// costs 1.6 us and receiving one 1.7 us. The control network gives hardware barriers. Not given
// by the paper, our choices (docs/machines.md): one port in and one out per node, the node's
// ports stream at 20 MB/s, a 100 ns switch delay per channel, a 5 us control-network barrier.
long long parse_int(const std::string& key, const std::string& v, long long lo, long long hi);

Machine cm5(const std::string& count) {
  const auto p = count.empty() ? 32 : parse_int("cm5:P", count, 32, 1024);
  Machine m = generic(make_fat_tree(static_cast<int>(p)));
  m.name = fmt::format("cm5:{}", p);
  // "Sending and receiving a single-packet active message on the CM-5 takes 1.6 us and 1.7 us"
  // and a packet carries 16 bytes: a longer message is a train of such packets, each written into
  // (read from) the network interface by the CPU, so the costs are per packet (docs/model.md
  // 2.14). The paper states no per-message part: C_send = C_recv = 0 is our reading.
  m.costs.send_overhead = 0;
  m.costs.send_per_packet = nanoseconds(1600);
  m.costs.send_per_byte = 0;
  m.costs.recv_overhead = 0;
  m.costs.recv_per_packet = nanoseconds(1700);
  m.costs.recv_per_byte = 0;
  // The CPU polls the receive FIFO (paper 003, section 5: "replaced the interrupts ... with
  // polling"), reading each packet as it comes while later ones are in flight (docs/model.md 2.15).
  m.costs.recv_overlap = true;
  m.net.hop_time = nanoseconds(100);
  m.net.link_byte_time = nanoseconds(50);
  m.net.inject_byte_time = nanoseconds(50);
  m.net.eject_byte_time = nanoseconds(50);
  m.net.packet_payload = 16;
  m.net.packet_header = 4;
  m.net.barrier = BarrierKind::hardware;
  m.net.barrier_latency = microseconds(5);
  return m;
}

// The Intel Touchstone Delta of paper 000 (section 2): 512 nodes as a 16 x 32 wormhole mesh with
// XY routing, packets of 512 bytes (482 data + 30 header), one message in and one out at a time.
// The cost parameters are fitted to the paper's Figure 9 (docs/machines.md, "Fitting the Delta";
// `paper000 fit` in bench/paper000.cpp reproduces the fit). The Delta sends faster than it receives (paper 000,
// section 4), so recv_per_byte > send_per_byte.
Machine delta(std::vector<int> dims) {
  if (dims.size() != 2 || dims[0] > 16 || dims[1] > 32)
    throw UsageError(fmt::format("delta:RxC is a sub-mesh of the 16x32 Delta: R <= 16 and C <= 32"));
  Machine m = generic(make_mesh(std::move(dims)));
  m.name = "delta:" + std::to_string(m.topology->dims()[0]) + "x" + std::to_string(m.topology->dims()[1]);
  // Fitted by `paper000 fit --sizes 16 256 4096` (docs/machines.md), with the k-level algorithms
  // synchronizing between supersteps, matching paid per queue entry and local copies (combining and
  // extracting blocks) charged: rms factor 1.087 over those cells.
  m.costs.send_overhead = nanoseconds(200'000);
  m.costs.send_per_byte = picoseconds(13'630);
  m.costs.recv_overhead = nanoseconds(33'640);
  m.costs.recv_per_byte = picoseconds(84'090);
  m.costs.match_per_entry = picoseconds(594'700);
  m.costs.copy_per_byte = picoseconds(8'106);
  m.costs.copy_per_piece = picoseconds(2'828'000);
  m.costs.probe_cost = microseconds(5);
  m.net.hop_time = nanoseconds(100);
  m.net.link_byte_time = picoseconds(91'700);
  m.net.inject_byte_time = picoseconds(91'700);
  m.net.eject_byte_time = picoseconds(91'700);
  m.net.packet_payload = 482;
  m.net.packet_header = 30;
  return m;
}

// Switch-based clusters of paper 004 (section 3.3, docs/machines.md "Switch clusters"). One byte of
// the model is one flit: t_inj = t_cons = t_sw = 16 ns per flit, so 16 ns per byte on every channel.
// A header pays t_route + t_sw + t_phy = 500 + 16 + 16 = 532 ns at every switch it passes (t_hop);
// the body streams on meanwhile, i.e. input buffers deep enough to hide the routing decision.
// Table 2's SO-ring rows (+1.06 us = 2 x 532 ns over the single switch) show the paper paid t_route
// per switch. A message is one worm (no packetization). The CPU costs are fitted to Table 2's
// single-switch LR and Combining columns (C_send + C_recv + t_hop = 2.53 us, so 1 us each); the
// paper's stated 5 us start-up does not fit them (docs/paper004.md).
// Output ports arbitrate randomly among waiting headers: the paper's switches pick randomly among
// free outputs (section 2.3) and state no input order; FIFO ranks Table 2's balanced column wrongly
// (docs/paper004.md, "Arbitration").
Machine switch_cluster(std::shared_ptr<const Topology> topo) {
  Machine m;
  m.topology = std::move(topo);
  m.name = m.topology->name();
  m.costs.send_overhead = nanoseconds(1000);
  m.costs.recv_overhead = nanoseconds(1000);
  m.costs.probe_cost = nanoseconds(100);
  m.net.hop_time = nanoseconds(532);
  m.net.link_byte_time = nanoseconds(16);
  m.net.inject_byte_time = nanoseconds(16);
  m.net.eject_byte_time = nanoseconds(16);
  m.net.packet_payload = 1 << 30;
  m.net.packet_header = 0;
  m.net.arbitration = Arbitration::random;
  m.net.barrier = BarrierKind::software;
  return m;
}

// Parses a decimal number (integer or fraction) and scales it to picoseconds exactly.
Time parse_time(const std::string& key, const std::string& v, Time unit) {
  std::size_t pos = 0;
  double x = 0;
  try {
    x = std::stod(v, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos != v.size() || !std::isfinite(x) || x < 0)
    throw UsageError(fmt::format("machine option '{}': expected a non-negative number, got '{}'", key, v));
  const double ps = x * static_cast<double>(unit);
  if (ps > 9e18) throw UsageError(fmt::format("machine option '{}': value {} is too large", key, v));
  return static_cast<Time>(std::llround(ps));
}

long long parse_int(const std::string& key, const std::string& v, long long lo, long long hi) {
  std::size_t pos = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos != v.size() || v.empty() || x < lo || x > hi)
    throw UsageError(fmt::format("machine option '{}': expected an integer in {}..{}, got '{}'", key, lo, hi, v));
  return x;
}

struct Option {
  const char* key;
  const char* help;
  std::function<void(Machine&, const std::string&)> set;
};

const std::vector<Option>& options() {
  static const std::vector<Option> table = {
      {"send_us", "C_send: sender overhead per message (us)",
       [](Machine& m, const std::string& v) { m.costs.send_overhead = parse_time("send_us", v, microseconds(1)); }},
      {"send_ns_per_byte", "send_byte_time (ns per byte)",
       [](Machine& m, const std::string& v) { m.costs.send_per_byte = parse_time("send_ns_per_byte", v, nanoseconds(1)); }},
      {"recv_us", "C_recv: receiver overhead per message (us)",
       [](Machine& m, const std::string& v) { m.costs.recv_overhead = parse_time("recv_us", v, microseconds(1)); }},
      {"recv_ns_per_byte", "recv_byte_time (ns per byte)",
       [](Machine& m, const std::string& v) { m.costs.recv_per_byte = parse_time("recv_ns_per_byte", v, nanoseconds(1)); }},
      {"send_us_per_packet", "sender CPU time per packet of a message, on top of send_us and send_ns_per_byte (us)",
       [](Machine& m, const std::string& v) { m.costs.send_per_packet = parse_time("send_us_per_packet", v, microseconds(1)); }},
      {"recv_us_per_packet", "receiver CPU time per packet of a message, on top of recv_us and recv_ns_per_byte (us)",
       [](Machine& m, const std::string& v) { m.costs.recv_per_packet = parse_time("recv_us_per_packet", v, microseconds(1)); }},
      {"recv_overlap", "on: the receive drains each packet as it arrives (max(link, receive) per byte), off: after the whole message",
       [](Machine& m, const std::string& v) {
         if (v != "on" && v != "off")
           throw UsageError(fmt::format("machine option 'recv_overlap': expected on or off, got '{}'", v));
         m.costs.recv_overlap = v == "on";
         for (auto& c : m.node_costs) c.recv_overlap = m.costs.recv_overlap;
       }},
      {"match_ns", "matching: receiver time per queue entry examined, posted receives or unexpected messages (ns)",
       [](Machine& m, const std::string& v) { m.costs.match_per_entry = parse_time("match_ns", v, nanoseconds(1)); }},
      {"copy_ns_per_byte", "local memory copy time per byte, for combining and extracting blocks (ns)",
       [](Machine& m, const std::string& v) { m.costs.copy_per_byte = parse_time("copy_ns_per_byte", v, nanoseconds(1)); }},
      {"copy_ns_per_piece", "local memory copy time per contiguous piece copied (ns)",
       [](Machine& m, const std::string& v) { m.costs.copy_per_piece = parse_time("copy_ns_per_piece", v, nanoseconds(1)); }},
      {"probe_us", "cost of a probe or test that finds nothing (us)",
       [](Machine& m, const std::string& v) { m.costs.probe_cost = parse_time("probe_us", v, microseconds(1)); }},
      {"hop_ns", "t_hop: header time per channel (ns)",
       [](Machine& m, const std::string& v) { m.net.hop_time = parse_time("hop_ns", v, nanoseconds(1)); }},
      {"link_ns_per_byte", "link byte time (ns per byte; 40 = 25 MB/s)",
       [](Machine& m, const std::string& v) {
         m.net.link_byte_time = parse_time("link_ns_per_byte", v, nanoseconds(1));
       }},
      {"inject_ns_per_byte", "injection channel byte time (ns per byte)",
       [](Machine& m, const std::string& v) {
         m.net.inject_byte_time = parse_time("inject_ns_per_byte", v, nanoseconds(1));
       }},
      {"eject_ns_per_byte", "ejection channel byte time (ns per byte)",
       [](Machine& m, const std::string& v) {
         m.net.eject_byte_time = parse_time("eject_ns_per_byte", v, nanoseconds(1));
       }},
      {"packet", "packet size as PAYLOAD+HEADER bytes, e.g. 482+30",
       [](Machine& m, const std::string& v) {
         const auto plus = v.find('+');
         if (plus == std::string::npos) throw UsageError(fmt::format("machine option 'packet': expected PAYLOAD+HEADER, got '{}'", v));
         m.net.packet_payload = static_cast<int>(parse_int("packet", v.substr(0, plus), 1, 1 << 30));
         m.net.packet_header = static_cast<int>(parse_int("packet", v.substr(plus + 1), 0, 1 << 20));
       }},
      {"ports", "injection and ejection channels per node: 1 (one-port), K, or all (one per link)",
       [](Machine& m, const std::string& v) {
         const int k = v == "all" ? static_cast<int>(2 * std::max<std::size_t>(1, m.topology->dims().size()))
                                  : static_cast<int>(parse_int("ports", v, 1, 64));
         m.net.inj_ports = m.net.ej_ports = k;
       }},
      {"inj_ports", "injection channels per node",
       [](Machine& m, const std::string& v) { m.net.inj_ports = static_cast<int>(parse_int("inj_ports", v, 1, 64)); }},
      {"ej_ports", "ejection channels per node",
       [](Machine& m, const std::string& v) { m.net.ej_ports = static_cast<int>(parse_int("ej_ports", v, 1, 64)); }},
      {"buffer", "receive buffer per node in bytes, or unlimited",
       [](Machine& m, const std::string& v) {
         m.net.recv_buffer = v == "unlimited" ? -1 : parse_int("buffer", v, 0, 1LL << 50);
       }},
      {"eager_limit", "flow control: messages above BYTES (or not fitting the receiver's free buffer) go by rendezvous; unlimited: only the buffer decides; off (default): no flow control",
       [](Machine& m, const std::string& v) {
         m.net.eager_limit = v == "off"         ? NetworkParams::kNoFlowControl
                             : v == "unlimited" ? std::numeric_limits<std::int64_t>::max()
                                                : parse_int("eager_limit", v, 0, 1LL << 50);
       }},
      {"barrier", "hardware (control network) or software (dissemination over the data network)",
       [](Machine& m, const std::string& v) {
         if (v == "hardware") m.net.barrier = BarrierKind::hardware;
         else if (v == "software") m.net.barrier = BarrierKind::software;
         else throw UsageError(fmt::format("machine option 'barrier': expected hardware or software, got '{}'", v));
       }},
      {"switching", "wormhole, or cut-through (a blocked worm that fits in router_buffer drains into it)",
       [](Machine& m, const std::string& v) {
         if (v == "wormhole") m.net.switching = Switching::wormhole;
         else if (v == "cut-through") m.net.switching = Switching::cut_through;
         else throw UsageError(fmt::format("machine option 'switching': expected wormhole or cut-through, got '{}'", v));
       }},
      {"arbitration", "which waiting header gets a freed channel: fifo (longest waiting), random (seeded), or round-robin (by input channel)",
       [](Machine& m, const std::string& v) {
         if (v == "fifo") m.net.arbitration = Arbitration::fifo;
         else if (v == "random") m.net.arbitration = Arbitration::random;
         else if (v == "round-robin") m.net.arbitration = Arbitration::round_robin;
         else throw UsageError(fmt::format("machine option 'arbitration': expected fifo, random or round-robin, got '{}'", v));
       }},
      {"router_buffer", "cut-through: buffer bytes at each switch input port",
       [](Machine& m, const std::string& v) { m.net.router_buffer = parse_int("router_buffer", v, 0, 1LL << 40); }},
      {"barrier_us", "hardware barrier latency from the last arrival (us)",
       [](Machine& m, const std::string& v) { m.net.barrier_latency = parse_time("barrier_us", v, microseconds(1)); }},
  };
  return table;
}

void apply_option(Machine& m, const std::string& key, const std::string& value) {
  for (const auto& o : options())
    if (key == o.key) return o.set(m, value);
  std::string known;
  for (const auto& o : options()) known += std::string(known.empty() ? "" : ", ") + o.key;
  throw UsageError(fmt::format("unknown machine option '{}' (known: {})", key, known));
}

std::vector<int> parse_dims(const std::string& s, const std::string& spec) {
  std::vector<int> dims;
  // Split by hand: getline would drop the empty piece after a trailing 'x' ("mesh:4x").
  std::vector<std::string> parts(1);
  for (char ch : s) {
    if (ch == 'x') parts.emplace_back();
    else parts.back() += ch;
  }
  for (const std::string& part : parts) {
    std::size_t pos = 0;
    long v = 0;
    try {
      v = std::stol(part, &pos);
    } catch (...) {
      pos = 0;
    }
    if (part.empty() || pos != part.size() || v < 1 || v > 1 << 20)
      throw UsageError(fmt::format("machine '{}': dimensions must look like 16x16 or 8x8x8 (got '{}')", spec, s));
    dims.push_back(static_cast<int>(v));
  }
  if (dims.empty()) throw UsageError(fmt::format("machine '{}': missing dimensions, e.g. mesh:16x16", spec));
  return dims;
}

Machine from_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read machine file '{}'", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("machine file '{}' is not valid JSON: {}", path, e.what()));
  }
  auto field = [&](const char* name) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(name))
      throw UsageError(fmt::format("machine file '{}': missing field '{}'", path, name));
    return j.at(name);
  };
  const auto& topo = field("topology");
  if (!topo.is_string())
    throw UsageError(fmt::format("machine file '{}': field 'topology' must be a string such as \"mesh:4x4\"", path));
  Machine m = parse_machine(topo.get<std::string>());
  if (j.contains("name")) {
    if (!j["name"].is_string()) throw UsageError(fmt::format("machine file '{}': field 'name' must be a string", path));
    m.name = j["name"].get<std::string>();
  }
  if (j.contains("params")) {
    const auto& p = j["params"];
    if (!p.is_object()) throw UsageError(fmt::format("machine file '{}': field 'params' must be an object", path));
    for (const auto& [key, value] : p.items()) {
      std::string v;
      if (value.is_string()) v = value.get<std::string>();
      else if (value.is_number_integer()) v = std::to_string(value.get<long long>());
      else if (value.is_number()) v = fmt::format("{}", value.get<double>());
      else throw UsageError(fmt::format("machine file '{}': field 'params.{}' must be a number or a string", path, key));
      try {
        apply_option(m, key, v);
      } catch (const UsageError& e) {
        throw UsageError(fmt::format("machine file '{}': field 'params.{}': {}", path, key, e.what()));
      }
    }
  }
  for (const auto& [key, value] : j.items())
    if (key != "topology" && key != "name" && key != "params")
      throw UsageError(fmt::format("machine file '{}': unknown field '{}' (expected topology, name, params)", path, key));
  return m;
}

}  // namespace

Machine parse_machine(const std::string& spec) {
  if (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json" && spec.rfind("switchnet:", 0) != 0) return from_json(spec);
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string part; std::getline(ss, part, ',');) parts.push_back(part);
  if (parts.empty() || parts[0].empty()) throw UsageError("empty machine spec; try mesh:16x16");
  const std::string& head = parts[0];
  const auto colon = head.find(':');
  const std::string kind = head.substr(0, colon);
  const std::string dims = colon == std::string::npos ? "" : head.substr(colon + 1);
  std::vector<std::pair<std::string, std::string>> opts;
  TorusDeadlockRule rule = TorusDeadlockRule::dateline;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "multicast") {  // a bare flag: "hpam:4x4/16x16,Q=8,multicast"
      if (kind != "hpam")
        throw UsageError(fmt::format("machine '{}': 'multicast' (inter-level replication hardware) is an hpam option", spec));
      opts.emplace_back("multicast", "on");
      continue;
    }
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("machine '{}': option '{}' must look like key=value", spec, parts[i]));
    std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
    if (key == "deadlock" && kind == "torus") {
      if (value == "dateline") rule = TorusDeadlockRule::dateline;
      else if (value == "none") rule = TorusDeadlockRule::none;
      else throw UsageError(fmt::format("machine '{}': deadlock must be dateline or none (got '{}')", spec, value));
      continue;
    }
    opts.emplace_back(std::move(key), std::move(value));
  }
  Machine m;
  if (is_switch_kind(kind)) m = switch_cluster(parse_switch_topology(kind, dims, opts));
  else if (kind == "mesh") m = generic(make_mesh(parse_dims(dims, spec)));
  else if (kind == "delta") m = delta(dims.empty() ? std::vector<int>{16, 32} : parse_dims(dims, spec));
  else if (kind == "torus") m = generic(make_torus(parse_dims(dims, spec), rule));
  else if (kind == "hpam") m = hpam_machine(dims, opts);
  else if (kind == "cm5") m = cm5(dims);
  else
    throw UsageError(fmt::format("unknown machine '{}'; known: mesh:RxC[x...], torus:AxB[x...], delta, delta:RxC, cm5:P, hpam:R1xC1/R2xC2, or a .json machine file "
                                 "(touchstone list machines)",
                                 spec));
  for (const auto& [k, v] : opts) apply_option(m, k, v);
  if (parts.size() > 1) m.name = spec;
  return m;
}

std::vector<std::pair<std::string, std::string>> machine_presets() {
  std::vector<std::pair<std::string, std::string>> out = {
      {"mesh:RxC[x...]", "n-dimensional mesh, dimension-order (XY) routing, generic 1990s wormhole parameters"},
      {"torus:AxB[x...]", "n-dimensional torus; deadlock=dateline (default, 2 virtual channels) or deadlock=none"},
      {"delta[:RxC]", "the Intel Touchstone Delta (16x32, paper 000) or an RxC sub-mesh of it, fitted to Figure 9"},
      {"cm5[:P]", "the CM-5 (paper 003): a 4-ary fat tree of P = 32..1024 nodes (default 32), 20/10/5 MB/s by level"},
      {"switch:P", "P nodes on one crossbar switch (paper 004; 32 ports unless P > 32)"},
      {"switch2:N1+N2", "two 32-port switches with N1 and N2 nodes, one interconnecting link (paper 004, section 4)"},
      {"irregular:switches=S,nodes=A-B,links=C-D,parallel=E,seed=N[,total=P]",
       "seeded irregular switch network with paper 004's generator constraints (section 5.3)"},
      {"switchnet:NET.json", "a switch network from a file: {\"ports\": 32, \"nodes\": [16, 16], \"links\": [[0, 1]]}"},
      {"  ,placement=block|cyclic|random", "switch networks: how ranks are placed on switch ports (random uses seed=N)"},
      {"hpam:R1xC1/R2xC2[/...][,Q=q][,multicast]", "HPAM levels of meshes, eq. 1 links and eq. 2 routing, Table 1 costs with ratio Q, optional inter-level multicast hardware (paper 001)"},
      {"FILE.json", "a machine file: {\"topology\": \"mesh:4x4\", \"name\": ..., \"params\": {option: value}}"},
  };
  for (const auto& o : options()) out.emplace_back(fmt::format("  ,{}=", o.key), o.help);
  return out;
}

}  // namespace touchstone
