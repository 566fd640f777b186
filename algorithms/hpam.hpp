// Paper 001 (Ben Miled, Fortes, Eigenmann, Taylor): broadcast, scatter and gather on a two-level
// HPAM machine (topologies/hpam.hpp), and the binary-tree broadcast and scatter inside one mesh
// (section 3, ref. [3]) that they use in every initial sub-mesh.
#pragma once
#include <string>
#include <vector>

#include "registry.hpp"

namespace touchstone::algorithms {

/// A rectangle of a level's mesh: rows r0 .. r0+h-1, columns c0 .. c0+w-1.
struct Rect {
  int r0 = 0, c0 = 0, h = 1, w = 1;
  bool contains(int r, int c) const { return r >= r0 && r < r0 + h && c >= c0 && c < c0 + w; }
  int size() const { return h * w; }
};

/// One processor's part in the binary tree of a rectangle rooted at its top-left corner (section
/// 3: "The first step divides the original mesh into two sub-meshes. Each additional step divides
/// the meshes obtained from the previous step into two"): columns are halved first, then rows, so
/// an r x c mesh takes log2 r + log2 c steps. The corner holds the whole rectangle; every other
/// processor gets the rectangle it is the corner of from `parent` and hands `children` (corners
/// of the halves it gives away, in step order) on.
struct TreeRole {
  bool has_parent = false;
  int parent_r = 0, parent_c = 0;
  Rect mine;
  std::vector<Rect> children;
};
TreeRole tree_role(const Rect& whole, int r, int c);

/// The initial sub-mesh p2 x q2 of a family parameter such as "4x2"; UsageError otherwise.
struct SubMesh {
  int p = 1, q = 1;
};
SubMesh parse_submesh(const std::string& name, const std::string& param);

/// bcast/hybrid(p2xq2), scatter/hybrid(p2xq2), gather/hybrid(p2xq2) for one level-1 processor
/// (sections 3.1, 4.1, 5); p2 x q2 = 1x1 is brute force.
Algorithm bcast_hybrid_entry(SubMesh s);
Algorithm scatter_hybrid_entry(SubMesh s);
Algorithm gather_hybrid_entry(SubMesh s);
/// bcast/multicast(p2x1) (sections 3.1 and 3.2, eqs. 6 and 8) and scatter/multicast(p2x1) (section
/// 4.1, eq. 11, one level-1 processor), on a machine with inter-level multicast hardware
/// (hpam:...,multicast). The multicast gather is not built: it needs combining routers (section 5).
Algorithm bcast_multicast_entry(SubMesh s);
Algorithm scatter_multicast_entry(SubMesh s);
/// scatter/multicast-level2(p2x1): section 4.2 with the multicast hardware, level 2 only (eq. 14).
Algorithm scatter_level2_multicast_entry(SubMesh s);
/// scatter/hybrid-level2(p2xq2): section 4.2, any level 1, destinations in level 2 only (cases a
/// and b, eqs. 12 and 13).
Algorithm scatter_level2_hybrid_entry(SubMesh s);
/// scatter/hybrid-both(p2xq2): section 4.2 to both levels with equal final sizes (q2 <= f2);
/// with `qs`, scatter/hybrid-both-qs(p2xq2): Q S bytes to each level-1 processor, S to level 2's.
Algorithm scatter_both_hybrid_entry(SubMesh s, bool qs = false);
/// scatter/multicast-both(p2x1), scatter/multicast-both-qs(p2x1): the same with the multicast
/// hardware for the inter-level transfer.
Algorithm scatter_both_multicast_entry(SubMesh s, bool qs = false);
/// gather/hybrid-level2(p2xq2): the same run backwards (section 5).
Algorithm gather_level2_hybrid_entry(SubMesh s);


}  // namespace touchstone::algorithms
