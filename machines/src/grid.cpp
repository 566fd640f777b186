// Meshes and tori with the generic parameters of a wormhole machine of the early 1990s
// (docs/machines.md): links of 25 MB/s like the SimGrid platform of the peer benchmark.
#include <fmt/format.h>

#include "family.hpp"
#include "text.hpp"
#include "touchstone/error.hpp"
#include "touchstone/topologies/grid.hpp"

namespace touchstone::machines {

Machine generic_machine(std::shared_ptr<const Topology> topology) {
  Machine m;
  m.topology = std::move(topology);
  m.name = m.topology->name();
  m.costs.send_overhead = microseconds(10);
  m.costs.send_per_byte = nanoseconds(10);
  m.costs.recv_overhead = microseconds(10);
  m.costs.recv_per_byte = nanoseconds(10);
  m.costs.probe_cost = microseconds(1);
  m.net.hop_time = nanoseconds(100);
  m.net.link_byte_time = m.net.inject_byte_time = m.net.eject_byte_time = nanoseconds(40);
  m.net.packet_payload = 1024;
  m.net.packet_header = 32;
  m.net.barrier = BarrierKind::software;
  m.net.barrier_latency = microseconds(5);
  return m;
}

namespace {

Machine make_mesh_machine(const std::string& arg, SpecOptions&, const std::string& spec) {
  return generic_machine(make_mesh(parse_dims(arg, spec)));
}

Machine make_torus_machine(const std::string& arg, SpecOptions& opts, const std::string& spec) {
  TorusDeadlockRule rule = TorusDeadlockRule::dateline;
  if (const auto v = opts.take("deadlock")) {
    if (*v == "dateline") rule = TorusDeadlockRule::dateline;
    else if (*v == "none") rule = TorusDeadlockRule::none;
    else throw UsageError(fmt::format("machine '{}': deadlock must be dateline or none (got '{}')", spec, *v));
  }
  return generic_machine(make_torus(parse_dims(arg, spec), rule));
}

}  // namespace

const Family mesh_family{
    "mesh", "mesh:RxC[x...]", "n-dimensional mesh, dimension-order (XY) routing, generic 1990s wormhole parameters",
    {}, make_mesh_machine};

const Family torus_family{
    "torus", "torus:AxB[x...]", "n-dimensional torus, dimension-order routing, generic parameters",
    {{"deadlock=dateline|none", "torus rings: two virtual channels with a dateline (default), or one channel, "
                                "cyclic waits reported as deadlock"}},
    make_torus_machine};

}  // namespace touchstone::machines
