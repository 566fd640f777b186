// Meshes and tori with the generic parameters of a wormhole machine of the early 1990s
// (docs/machines.md): links of 25 MB/s like the SimGrid platform of the peer benchmark.
#include <fmt/format.h>

#include "family.hpp"
#include "text.hpp"
#include "touchstone/error.hpp"
#include "touchstone/topologies/grid.hpp"

namespace touchstone::machines {

void set_channels(NetworkParams& net, Time hop, Time byte_time, int payload, int header) {
  net.hop_time = hop;
  net.link_byte_time = net.inject_byte_time = net.eject_byte_time = byte_time;
  net.packet_payload = payload;
  net.packet_header = header;
}

Machine machine_on(std::shared_ptr<const Topology> topology) {
  Machine m;
  m.topology = std::move(topology);
  m.name = m.topology->name();
  return m;
}

Machine generic_machine(std::shared_ptr<const Topology> topology) {
  Machine m = machine_on(std::move(topology));
  m.costs = {.send_overhead = microseconds(10), .send_per_byte = nanoseconds(10),
             .recv_overhead = microseconds(10), .recv_per_byte = nanoseconds(10), .probe_cost = microseconds(1)};
  set_channels(m.net, nanoseconds(100), nanoseconds(40), 1024, 32);
  m.net.barrier = BarrierKind::software;
  m.net.barrier_latency = microseconds(5);
  return m;
}

Machine mesh_machine(const std::string& arg, SpecOptions&, const std::string& spec) {
  return generic_machine(make_mesh(parse_dims(arg, spec)));
}

Machine torus_machine(const std::string& arg, SpecOptions& opts, const std::string& spec) {
  TorusDeadlockRule rule = TorusDeadlockRule::dateline;
  if (const auto v = opts.take("deadlock")) {
    if (*v == "dateline") rule = TorusDeadlockRule::dateline;
    else if (*v == "none") rule = TorusDeadlockRule::none;
    else throw UsageError(fmt::format("machine '{}': deadlock must be dateline or none (got '{}')", spec, *v));
  }
  return generic_machine(make_torus(parse_dims(arg, spec), rule));
}

}  // namespace touchstone::machines
