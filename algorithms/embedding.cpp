// Paper 002, section 3: the standard and xor embeddings of a hypercube onto meshes and tori, and
// the conflict-free rounds of each hypercube dimension's exchange under the topology's routes.
#include "embedding.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone::algorithms {

namespace {
int log2_exact(int n, const char* what) {
  int k = 0;
  while ((1 << k) < n) ++k;
  if (n < 1 || (1 << k) != n)
    throw UsageError(fmt::format("the {} embedding needs every grid extent to be a power of two (got {})", what, n));
  return k;
}

// Builds the embedding from a per-dimension placement: place(x, n) gives the hypercube bits held by
// coordinate x of a line or ring of n nodes. Lowest bits to the last dimension (row-major order).
template <class Place>
Embedding grid_embedding(const std::vector<int>& dims, const char* kind, Place place) {
  Embedding e;
  e.kind = kind;
  int nodes = 1;
  for (int n : dims) {
    e.d += log2_exact(n, kind);
    nodes *= n;
  }
  e.node_of.assign(static_cast<std::size_t>(nodes), 0);
  e.cube_of.assign(static_cast<std::size_t>(nodes), 0);
  for (int node = 0; node < nodes; ++node) {
    int rest = node, h = 0, shift = 0;
    for (int c = static_cast<int>(dims.size()) - 1; c >= 0; --c) {
      const int n = dims[static_cast<std::size_t>(c)], x = rest % n;
      rest /= n;
      h |= place(x, n) << shift;
      shift += log2_exact(n, kind);
    }
    e.cube_of[static_cast<std::size_t>(node)] = h;
    e.node_of[static_cast<std::size_t>(h)] = node;
  }
  return e;
}

// The physical link a channel belongs to: its name without the virtual channel suffix.
std::string physical(const Topology& topo, LinkId id) {
  std::string s = topo.link_name(id);
  const auto vc = s.rfind(" vc");
  return vc == std::string::npos ? s : s.substr(0, vc);
}

// The physical links used by both messages of the pair (h, h xor 2^i).
std::set<std::string> pair_links(const Topology& topo, const Embedding& e, int h, int i) {
  std::set<std::string> out;
  std::vector<LinkId> path;
  const int a = e.node_of[static_cast<std::size_t>(h)], b = e.node_of[static_cast<std::size_t>(h ^ (1 << i))];
  topo.route(a, b, path);
  topo.route(b, a, path);
  for (LinkId id : path) out.insert(physical(topo, id));
  return out;
}

void check_dimension(const Embedding& e, int i) {
  if (i < 0 || i >= e.d) throw UsageError(fmt::format("hypercube dimension {} out of range 0..{}", i, e.d - 1));
}
}  // namespace

Embedding standard_embedding(const std::vector<int>& dims) {
  return grid_embedding(dims, "standard", [](int x, int) { return x; });
}

Embedding xor_embedding(const std::vector<int>& dims) {
  return grid_embedding(dims, "xor", [](int x, int n) { return x >= n / 2 ? x ^ (n / 2 - 1) : x; });
}

Embedding embedding_for(const Topology& topo) {
  const auto dims = topo.dims();
  if (!dims.empty()) return topo.name().rfind("torus:", 0) == 0 ? xor_embedding(dims) : standard_embedding(dims);
  return identity_embedding(topo.nodes());
}

Embedding identity_embedding(int n) {
  Embedding e;
  e.kind = "identity";
  e.d = log2_exact(n, "identity");
  for (int h = 0; h < n; ++h) {
    e.node_of.push_back(h);
    e.cube_of.push_back(h);
  }
  return e;
}

int dilation(const Topology& topo, const Embedding& e, int i) {
  check_dimension(e, i);
  int worst = 0;
  for (int h = 0; h < (1 << e.d); ++h)
    worst = std::max(worst, topo.distance(e.node_of[static_cast<std::size_t>(h)],
                                          e.node_of[static_cast<std::size_t>(h ^ (1 << i))]));
  return worst;
}

std::vector<std::vector<int>> exchange_rounds(const Topology& topo, const Embedding& e, int i) {
  check_dimension(e, i);
  std::vector<std::vector<int>> rounds;
  std::vector<std::set<std::string>> used;
  for (int h = 0; h < (1 << e.d); ++h) {
    if (h & (1 << i)) continue;
    const auto links = pair_links(topo, e, h, i);
    std::size_t r = 0;
    for (; r < rounds.size(); ++r)
      if (std::none_of(links.begin(), links.end(), [&](const std::string& l) { return used[r].count(l) > 0; })) break;
    if (r == rounds.size()) {
      rounds.emplace_back();
      used.emplace_back();
    }
    rounds[r].push_back(h);
    used[r].insert(links.begin(), links.end());
  }
  return rounds;
}

int link_load(const Topology& topo, const std::vector<std::pair<int, int>>& messages) {
  std::map<std::string, int> load;
  std::vector<LinkId> path;
  for (const auto& [a, b] : messages) {
    path.clear();
    topo.route(a, b, path);
    for (LinkId id : path) ++load[physical(topo, id)];
  }
  int worst = 0;
  for (const auto& [l, n] : load) worst = std::max(worst, n);
  return worst;
}

int congestion(const Topology& topo, const Embedding& e, int i) {
  check_dimension(e, i);
  std::vector<std::pair<int, int>> messages;
  for (int h = 0; h < (1 << e.d); ++h)
    messages.emplace_back(e.node_of[static_cast<std::size_t>(h)], e.node_of[static_cast<std::size_t>(h ^ (1 << i))]);
  return link_load(topo, messages);
}

}  // namespace touchstone::algorithms
