// Meshes and tori. Nodes are numbered row-major (last dimension fastest); routes are dimension
// order, last dimension first: on mesh:RxC (R rows, C columns) a message moves along its row
// (X) first, then along its column (Y) -- the Delta's XY routing (paper 000, section 2).
#include <cstdint>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "touchstone/topologies/grid.hpp"
#include "touchstone/error.hpp"

namespace touchstone {
namespace {

class Grid final : public Topology {
 public:
  Grid(std::vector<int> dims, bool wrap, TorusDeadlockRule rule)
      : dims_(std::move(dims)), wrap_(wrap), vcs_(wrap && rule == TorusDeadlockRule::dateline ? 2 : 1) {
    if (dims_.empty()) throw UsageError("a grid needs at least one dimension");
    nodes_ = 1;
    for (int d : dims_) {
      if (d < 1) throw UsageError(fmt::format("grid dimension {} must be at least 1", d));
      if (nodes_ > (1 << 24) / d) throw UsageError("grid too large (more than 16M nodes)");
      nodes_ *= d;
    }
    stride_.assign(dims_.size(), 1);
    for (int i = static_cast<int>(dims_.size()) - 2; i >= 0; --i)
      stride_[static_cast<std::size_t>(i)] = stride_[static_cast<std::size_t>(i) + 1] * dims_[static_cast<std::size_t>(i) + 1];
  }

  std::string name() const override {
    std::string s = wrap_ ? "torus:" : "mesh:";
    for (std::size_t i = 0; i < dims_.size(); ++i) s += (i ? "x" : "") + std::to_string(dims_[i]);
    if (wrap_ && vcs_ == 1) s += ",deadlock=none";
    return s;
  }
  int nodes() const override { return nodes_; }
  std::size_t link_channels() const override {
    return static_cast<std::size_t>(nodes_) * dims_.size() * 2 * static_cast<std::size_t>(vcs_);
  }
  std::vector<int> dims() const override { return dims_; }
  std::vector<int> coords(int node) const override {
    std::vector<int> c(dims_.size());
    for (std::size_t i = 0; i < dims_.size(); ++i) c[i] = (node / stride_[i]) % dims_[i];
    return c;
  }

  void route(int src, int dst, std::vector<LinkId>& out) const override {
    int at = src;
    for (int d = static_cast<int>(dims_.size()) - 1; d >= 0; --d) {
      const auto ud = static_cast<std::size_t>(d);
      const int k = dims_[ud], s = (at / stride_[ud]) % k, t = (dst / stride_[ud]) % k;
      if (s == t) continue;
      auto [dir, steps] = direction(s, t, k);
      // One step of the coordinate at a time, without a division per hop: this runs for every message.
      const int step = dir ? -1 : 1, last = dir ? 0 : k - 1;  // `last`: where the wrap link leaves
      // link_id is linear in the node: each step moves the id by the node's move times the ids per node.
      const auto per_node = static_cast<LinkId>(dims_.size() * 2 * static_cast<std::size_t>(vcs_));
      const std::size_t first = out.size();
      out.resize(first + static_cast<std::size_t>(steps));
      LinkId* o = out.data() + first;
      LinkId id = link_id(at, d, dir, 0);
      if (!wrap_) {  // a mesh never wraps: the ids form an arithmetic progression
        const int moved = step * stride_[ud];
        const auto delta = static_cast<LinkId>(static_cast<std::int64_t>(moved) * static_cast<std::int64_t>(per_node));
        for (int i = 0; i < steps; ++i, id += delta) o[i] = id;
        at += moved * steps;
        continue;
      }
      int c = s;
      LinkId vc = 0;
      for (int i = 0; i < steps; ++i) {
        const int next = c == last ? k - 1 - last : c + step;
        if (vcs_ == 2 && c == last) vc = 1;  // crossing the dateline (wrap link)
        o[i] = id + vc;
        const int moved = (next - c) * stride_[ud];
        at += moved;
        id += static_cast<LinkId>(moved) * per_node;
        c = next;
      }
    }
  }

  int distance(int src, int dst) const override {
    int hops = 0;
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      const int k = dims_[d], s = (src / stride_[d]) % k, t = (dst / stride_[d]) % k;
      hops += direction(s, t, k).second;
    }
    return hops;
  }

  std::string link_name(LinkId id) const override {
    const int vc = static_cast<int>(id % static_cast<LinkId>(vcs_));
    id /= static_cast<LinkId>(vcs_);
    const int dir = static_cast<int>(id % 2);
    id /= 2;
    const int d = static_cast<int>(id % dims_.size());
    const int node = static_cast<int>(id / dims_.size());
    const auto ud = static_cast<std::size_t>(d);
    const int k = dims_[ud], c = (node / stride_[ud]) % k;
    const int next = dir ? (c + k - 1) % k : (c + 1) % k;
    const int to = node + (next - c) * stride_[ud];
    std::string s = fmt::format("{}->{}", coord_string(node), coord_string(to));
    if (vcs_ == 2) s += fmt::format(" vc{}", vc);
    return s;
  }

 private:
  // Direction (0 = increasing coordinate, 1 = decreasing) and number of hops from s to t in a
  // dimension of extent k. Tori take the shorter way round, the increasing one on a tie.
  std::pair<int, int> direction(int s, int t, int k) const {
    if (!wrap_) return {t < s ? 1 : 0, std::abs(t - s)};
    const int fwd = ((t - s) % k + k) % k, bwd = k - fwd;
    if (fwd == 0) return {0, 0};
    return fwd <= bwd ? std::pair{0, fwd} : std::pair{1, bwd};
  }
  LinkId link_id(int node, int dim, int dir, int vc) const {
    return static_cast<LinkId>(((static_cast<std::size_t>(node) * dims_.size() + static_cast<std::size_t>(dim)) * 2 +
                                static_cast<std::size_t>(dir)) * static_cast<std::size_t>(vcs_) + static_cast<std::size_t>(vc));
  }
  std::string coord_string(int node) const {
    std::string s = "(";
    auto c = coords(node);
    for (std::size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
    return s + ")";
  }

  std::vector<int> dims_, stride_;
  bool wrap_;
  int vcs_;
  int nodes_ = 0;
};

}  // namespace

std::shared_ptr<const Topology> make_mesh(std::vector<int> dims) {
  return std::make_shared<Grid>(std::move(dims), false, TorusDeadlockRule::none);
}

std::shared_ptr<const Topology> make_torus(std::vector<int> dims, TorusDeadlockRule rule) {
  return std::make_shared<Grid>(std::move(dims), true, rule);
}

}  // namespace touchstone
