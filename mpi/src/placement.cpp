// Rank placement for reordering topology constructors (placement.hpp; docs/mpi.md, "Rank placement").
#include "placement.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "topology.hpp"

namespace touchstone::mpi {

namespace {

// The machine node (= world rank: rank r of `touchstone mpirun` runs on VP r) of old rank r of c.
int node_of(const Comm& c, int old_rank) { return c.pt2pt.world_rank(old_rank); }

// Each vertex's neighbours with the weights of all edges between them summed (self-edges dropped:
// a message to oneself crosses no link).
std::vector<std::map<int, std::int64_t>> adjacency(const CommGraph& g) {
  std::vector<std::map<int, std::int64_t>> adj(static_cast<std::size_t>(g.n));
  for (const auto& e : g.edges) {
    if (e.u == e.v) continue;
    adj[static_cast<std::size_t>(e.u)][e.v] += e.weight;
    adj[static_cast<std::size_t>(e.v)][e.u] += e.weight;
  }
  return adj;
}

std::vector<int> identity(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

// Greedy placement: vertices in order of their connection to the vertices already placed (the
// heaviest weighted degree first, ties to the lower vertex); each to the free member whose hops to
// its placed neighbours, weighted, sum least (ties to the lower old rank). A vertex with no placed
// neighbour (the first of each connected component) goes to the lowest free old rank.
std::vector<int> greedy(Proc& p, const Comm& c, const CommGraph& g) {
  const auto adj = adjacency(g);
  const auto n = static_cast<std::size_t>(g.n);
  std::vector<std::int64_t> degree(n, 0), linked(n, 0);
  for (std::size_t v = 0; v < n; ++v)
    for (const auto& [u, w] : adj[v]) degree[v] += w;
  std::vector<int> slot(n, -1);
  std::vector<bool> used(static_cast<std::size_t>(c.size), false);
  for (std::size_t placed = 0; placed < n; ++placed) {
    std::size_t v = n;
    for (std::size_t x = 0; x < n; ++x) {
      if (slot[x] >= 0) continue;
      if (v == n || linked[x] > linked[v] || (linked[x] == linked[v] && degree[x] > degree[v])) v = x;
    }
    int best = -1;
    std::int64_t best_cost = std::numeric_limits<std::int64_t>::max();
    for (int s = 0; s < c.size; ++s) {
      if (used[static_cast<std::size_t>(s)]) continue;
      std::int64_t cost = 0;
      if (linked[v] > 0)
        for (const auto& [u, w] : adj[v])
          if (const int su = slot[static_cast<std::size_t>(u)]; su >= 0)
            cost += w * p.hops(node_of(c, s), node_of(c, su));
      if (cost < best_cost) best = s, best_cost = cost;
      if (linked[v] == 0) break;  // the lowest free old rank
    }
    slot[v] = best;
    used[static_cast<std::size_t>(best)] = true;
    for (const auto& [u, w] : adj[v]) linked[static_cast<std::size_t>(u)] += w;
  }
  return slot;
}

// The Cartesian grid's edges: each rank to its +1 neighbour along every dimension of more than one
// process, wrapping around periodic ones (a periodic dimension of two gives the pair two edges, as
// its halo exchange sends two messages each way).
CommGraph cart_graph(const std::vector<int>& dims, const std::vector<int>& periods) {
  CommGraph g;
  g.n = 1;
  for (int d : dims) g.n *= d;
  for (int r = 0; r < g.n; ++r) {
    const std::vector<int> at = cart_coords(dims, r);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 2) continue;
      std::vector<int> next = at;
      ++next[i];
      if (const int q = cart_rank(dims, periods, next); q >= 0) g.edges.push_back({r, q, 1});
    }
  }
  return g;
}

// The position along one machine dimension of a point whose coordinates along the grid
// dimensions laid there (outermost first) are `at`, with extents `radix`: boustrophedon order, each
// level running backwards when the position of the levels outside it is odd, so that consecutive
// points of the innermost dimension are adjacent and so are the ends of consecutive runs.
int snake_position(const std::vector<int>& at, const std::vector<int>& radix) {
  int pos = 0;
  for (std::size_t t = 0; t < at.size(); ++t) pos = pos * radix[t] + (pos % 2 ? radix[t] - 1 - at[t] : at[t]);
  return pos;
}

// Every layout of the grid `dims` on the machine's grid whose nodes are all members of c: each
// grid dimension of more than one process is laid along a machine dimension; grid dimensions
// sharing one are folded onto it in boustrophedon order (the earlier grid dimension outermost), and
// their extents multiply to at most the machine dimension's. With one grid dimension per machine
// dimension the layout is a box of the grid's shape. Order: the machine dimension of each grid
// dimension in lexicographic order, then origins in row-major order. `visit` gets the old rank of
// each new rank.
void for_each_layout(const Comm& c, const std::vector<int>& machine, const std::vector<int>& dims,
                     const std::function<void(const std::vector<int>&)>& visit) {
  const auto k = machine.size();
  std::vector<std::size_t> active;  // grid dimensions that need a machine dimension
  for (std::size_t j = 0; j < dims.size(); ++j)
    if (dims[j] > 1) active.push_back(j);
  std::vector<std::size_t> along(active.size(), 0);  // the machine dimension of each active grid dimension
  const int n = [&] {
    int x = 1;
    for (int d : dims) x *= d;
    return x;
  }();
  auto try_origins = [&] {
    std::vector<long long> extent(k, 1);
    std::vector<std::vector<int>> radix(k);
    for (std::size_t a = 0; a < active.size(); ++a) {
      extent[along[a]] *= dims[active[a]];
      radix[along[a]].push_back(dims[active[a]]);
    }
    for (std::size_t i = 0; i < k; ++i)
      if (extent[i] > machine[i]) return;
    std::vector<int> origin(k, 0);
    for (;;) {
      std::vector<int> old(static_cast<std::size_t>(n));
      bool inside = true;
      for (int r = 0; r < n && inside; ++r) {
        const std::vector<int> at = cart_coords(dims, r);
        std::vector<std::vector<int>> digits(k);
        for (std::size_t a = 0; a < active.size(); ++a) digits[along[a]].push_back(at[active[a]]);
        int node = 0;
        for (std::size_t i = 0; i < k; ++i) node = node * machine[i] + origin[i] + snake_position(digits[i], radix[i]);
        const int local = c.pt2pt.local_rank(node);
        inside = local >= 0;
        old[static_cast<std::size_t>(r)] = local;
      }
      if (inside) visit(old);
      std::size_t i = k;  // the next origin, row-major
      while (i > 0) {
        --i;
        if (++origin[i] + extent[i] <= machine[i]) break;
        origin[i] = 0;
        if (i == 0) return;
      }
    }
  };
  std::function<void(std::size_t)> assign = [&](std::size_t a) {
    if (a == active.size()) return try_origins();
    for (std::size_t i = 0; i < k; ++i) {
      along[a] = i;
      assign(a + 1);
    }
  };
  assign(0);
}

}  // namespace

std::int64_t placement_cost(Proc& p, const Comm& c, const CommGraph& g, const std::vector<int>& old_of_new) {
  std::int64_t cost = 0;
  for (const auto& e : g.edges)
    cost += e.weight * p.hops(node_of(c, old_of_new[static_cast<std::size_t>(e.u)]),
                              node_of(c, old_of_new[static_cast<std::size_t>(e.v)]));
  return cost;
}

namespace {

// Every rank of the communicator computes the same placement from the same inputs, so the run
// computes each once and the other ranks read it (Proc::run_local; VPs run one at a time). This
// saves host time only: ranks placing the same graph on the same communicator get the same answer.
using PlacementCache = std::map<std::vector<std::int64_t>, std::vector<int>>;
const char kPlacementCache = 0;

std::vector<int> memoized(Proc& p, const Comm& c, std::vector<std::int64_t> key,
                          const std::function<std::vector<int>()>& compute) {
  for (int w : c.pt2pt.members()) key.push_back(w);
  auto& slot = p.run_local(&kPlacementCache);
  if (!slot) slot = std::make_shared<PlacementCache>();
  auto& cache = *std::static_pointer_cast<PlacementCache>(slot);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(std::move(key), compute()).first;
  return it->second;
}

std::vector<std::int64_t> graph_key(char kind, const CommGraph& g) {
  std::vector<std::int64_t> key{kind, g.n};
  for (const auto& e : g.edges) key.insert(key.end(), {e.u, e.v, e.weight});
  key.push_back(-1);  // the end of the graph, before the members
  return key;
}

std::vector<int> place_graph_once(Proc& p, const Comm& c, const CommGraph& g) {
  std::vector<int> best = identity(g.n);
  if (g.n == 0) return best;
  const std::vector<int> placed = greedy(p, c, g);
  return placement_cost(p, c, g, placed) < placement_cost(p, c, g, best) ? placed : best;
}

}  // namespace

std::vector<int> place_graph(Proc& p, const Comm& c, const CommGraph& g) {
  return memoized(p, c, graph_key('G', g), [&] { return place_graph_once(p, c, g); });
}

std::vector<int> place_cart(Proc& p, const Comm& c, const std::vector<int>& dims, const std::vector<int>& periods) {
  const CommGraph g = cart_graph(dims, periods);
  std::vector<std::int64_t> key = graph_key('C', g);
  key.insert(key.end(), dims.begin(), dims.end());
  key.insert(key.end(), periods.begin(), periods.end());
  key.push_back(-1);
  return memoized(p, c, std::move(key), [&] {
    std::vector<int> best = identity(g.n);
    std::int64_t best_cost = placement_cost(p, c, g, best);
    auto consider = [&](const std::vector<int>& old) {
      if (const std::int64_t cost = placement_cost(p, c, g, old); cost < best_cost) best = old, best_cost = cost;
    };
    const std::vector<int> machine = p.machine().topology->dims();
    if (!machine.empty()) for_each_layout(c, machine, dims, consider);
    consider(greedy(p, c, g));
    return best;
  });
}

}  // namespace touchstone::mpi
