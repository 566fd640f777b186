// Switch-based networks (paper 004, section 2): k-port crossbar switches, workstations on their
// ports, bidirectional links between switches (several between one pair allowed), and up*/down*
// routing on a BFS spanning tree (section 2.3), minimal among legal routes, adaptive.
//
//   SwitchLayout l;                       // two 32-port switches, 16 + 16 nodes, one link
//   l.ports = 32; l.nodes_per_switch = {16, 16}; l.links = {{0, 1}};
//   auto net = make_switch_network(l);
//   net->switch_of(20);                   // 1
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "touchstone/topology.hpp"

namespace touchstone {

/// A switch network before it is built: the paper's graph G = (V, E) plus the nodes on each switch.
/// Size caps of a switch network: no count overflows an int, and no file asks for an
/// unbounded amount of memory. Paper 004's switches have 8 to 32 ports. Routing keeps a table of
/// 2 x switches^2 hop counts, 128 MiB at 4096 switches (65536 would need 32 GiB).
inline constexpr int kMaxSwitchPorts = 4096;
inline constexpr int kMaxSwitches = 1 << 12;
inline constexpr int kMaxSwitchNodes = 1 << 20;

struct SwitchLayout {
  int ports = 32;                           ///< k: ports per switch (nodes + link ends must fit)
  std::vector<int> nodes_per_switch;        ///< workstations attached to switch s (switch UID = s)
  std::vector<std::pair<int, int>> links;   ///< bidirectional inter-switch links; repeats = parallel links
  /// Optional rank placement: placement[rank] = position in switch-major order (the first
  /// nodes_per_switch[0] positions are on switch 0, ...). Empty = rank r at position r.
  std::vector<int> placement;
  std::string name;                         ///< canonical machine name
};

/// A built switch network with its BFS spanning tree, up/down link directions and forwarding tables.
/// Link channel 2*l runs from links[l].first to links[l].second, 2*l+1 the other way.
class SwitchNetwork final : public Topology {
 public:
  explicit SwitchNetwork(SwitchLayout layout);

  // Topology
  std::string name() const override { return layout_.name; }
  int nodes() const override { return static_cast<int>(node_switch_.size()); }
  std::size_t link_channels() const override { return 2 * layout_.links.size(); }
  void route(int src, int dst, std::vector<LinkId>& out) const override;
  int distance(int src, int dst) const override;
  std::string link_name(LinkId id) const override;
  bool adaptive() const override { return true; }
  void next_channels(int src, int dst, LinkId came_in, std::vector<LinkId>& out) const override;

  // Structure
  int switches() const { return static_cast<int>(layout_.nodes_per_switch.size()); }
  int ports() const { return layout_.ports; }
  const SwitchLayout& layout() const { return layout_; }
  int switch_of(int node) const { return node_switch_[static_cast<std::size_t>(node)]; }
  /// Ranks attached to switch s, ascending.
  const std::vector<int>& nodes_on(int s) const { return on_switch_[static_cast<std::size_t>(s)]; }
  int channel_from(LinkId c) const;
  int channel_to(LinkId c) const;

  // Routing (section 2.3)
  /// BFS tree from the root (switch 0, the lowest UID): level and parent (-1 for the root).
  int level(int s) const { return level_[static_cast<std::size_t>(s)]; }
  int parent(int s) const { return parent_[static_cast<std::size_t>(s)]; }
  /// Children of s in the BFS tree, ascending UID.
  const std::vector<int>& children(int s) const { return children_[static_cast<std::size_t>(s)]; }
  /// True when channel c goes toward the link's "up" end: the end closer to the root, or the
  /// lower UID when both ends are on one level.
  bool is_up(LinkId c) const;
  /// Hops of the shortest legal (up* then down*) route between two switches.
  int legal_distance(int from, int to) const;
  /// Forwarding table (section 2.3): the output channels at switch `at` of every minimal legal
  /// route to switch `to`, for a worm that entered `at` on channel `came_in` (kNoLink: from a node).
  std::vector<LinkId> forwarding(int at, LinkId came_in, int to) const;
  /// Switches in in-order traversal of the BFS tree (first child's subtree, the switch, the other
  /// children's subtrees), the switch order of SO-ring and LS (sections 5.1, 5.2).
  std::vector<int> inorder_switches() const;
  /// Ranks in SO-ring order: the nodes of each switch (ascending) in inorder_switches() order.
  std::vector<int> switch_ordered_ranks() const;

 private:
  // Remaining legal hops from (switch, phase) to a destination switch; phase 1 = has gone down.
  int remaining(int at, int phase, int to) const {
    return dist_[(static_cast<std::size_t>(to) * static_cast<std::size_t>(switches()) + static_cast<std::size_t>(at)) * 2 +
                 static_cast<std::size_t>(phase)];
  }
  void inorder(int s, std::vector<int>& out) const;

  SwitchLayout layout_;
  std::vector<int> node_switch_;
  std::vector<std::vector<int>> on_switch_;
  std::vector<std::vector<LinkId>> out_channels_;  // per switch, ascending
  std::vector<int> level_, parent_;
  std::vector<std::vector<int>> children_;
  std::vector<int> dist_;  // [to][at][phase]
};

/// Builds and checks a layout (connected, ports not exceeded, no loops); UsageError otherwise.
std::shared_ptr<const SwitchNetwork> make_switch_network(SwitchLayout layout);

/// The paper's generator constraints (section 5.3): `switches` switches with nodes_lo..nodes_hi
/// nodes each (summing to `total` when total > 0), links_lo..links_hi external links per switch, at
/// most `parallel` links between two switches, connected. Deterministic for a seed.
struct IrregularSpec {
  int switches = 10, nodes_lo = 7, nodes_hi = 21, links_lo = 1, links_hi = 5, parallel = 2, total = 0, ports = 32;
  std::uint64_t seed = 1;
};
SwitchLayout generate_irregular(const IrregularSpec& spec);

/// A layout from a JSON object {"ports": 32, "nodes": [16, 16], "links": [[0, 1]]}; errors name the field.
SwitchLayout switch_layout_from_json(const std::string& text, const std::string& where);

/// Seeded rank placements for a layout: "block" (switch-major), "cyclic" (round-robin over the
/// switches that still have room), "random" (a seeded shuffle).
std::vector<int> switch_placement(const std::vector<int>& nodes_per_switch, const std::string& kind, std::uint64_t seed);

}  // namespace touchstone
