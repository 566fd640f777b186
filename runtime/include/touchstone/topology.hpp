// The interface every topology implements: its nodes, its directed link channels and its route
// function (docs/machines.md). One file per topology lives in topologies/.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "touchstone/time.hpp"

namespace touchstone {

/// Identifies one directed link channel (one virtual channel of one physical link).
using LinkId = std::uint32_t;
/// "No link": the worm has not crossed a link yet (it comes straight from its source node).
inline constexpr LinkId kNoLink = 0xffffffffu;

/// A network topology: nodes, directed link channels, and a deterministic route function.
///
///   auto topo = make_mesh({16, 16});
///   std::vector<LinkId> path;
///   topo->route(0, 255, path);    // 30 link channels, X first then Y
class Topology {
 public:
  virtual ~Topology() = default;

  /// Canonical name, for example "mesh:16x16" or "torus:8x8x8".
  virtual std::string name() const = 0;
  /// Number of nodes (each hosts one virtual processor).
  virtual int nodes() const = 0;
  /// Number of link channel ids; valid ids are 0 .. link_channels() - 1.
  virtual std::size_t link_channels() const = 0;
  /// Appends the link channels a message from src to dst crosses, in order (empty when src == dst).
  virtual void route(int src, int dst, std::vector<LinkId>& out) const = 0;
  /// Number of links on the route from src to dst.
  virtual int distance(int src, int dst) const = 0;
  /// Human-readable name of a link channel, for deadlock reports: "(0,1)->(0,2) vc0".
  virtual std::string link_name(LinkId id) const = 0;
  /// Time per byte on one link channel when this topology's links differ in bandwidth (a fat
  /// tree's levels, HPAM's levels); 0 means the machine's `link_byte_time`.
  virtual Time link_byte_time(LinkId /*id*/) const { return 0; }
  /// True when routing is adaptive: the network asks next_channels() at every hop and picks a
  /// free one (switch networks, paper 004 section 2.3); route() then gives one legal route.
  virtual bool adaptive() const { return false; }
  /// The legal output channels for a header of a src -> dst message that came in on `came_in`
  /// (kNoLink at the source's switch). Only called when adaptive().
  virtual void next_channels(int /*src*/, int /*dst*/, LinkId /*came_in*/, std::vector<LinkId>& /*out*/) const {}
  /// Inter-level multicast (docs/model.md 2.11): if `id` is one of the outgoing channels onto which
  /// its router replicates a multicast worm, appends all of that router's replicating channels in
  /// port order (`id` among them); else appends nothing. Used only on machines with the hardware.
  virtual void replicating_channels(LinkId /*id*/, std::vector<LinkId>& /*out*/) const {}
  /// Extent of each dimension for grid topologies (meshes, tori); empty for the others.
  virtual std::vector<int> dims() const { return {}; }
  /// Grid coordinates of a node (row-major, last dimension fastest); empty for non-grids.
  virtual std::vector<int> coords(int /*node*/) const { return {}; }
};

}  // namespace touchstone
