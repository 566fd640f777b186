// All-to-all personalized communication (paper 000, section 5): every processor of group g sends
// a distinct block of `size` bytes to every other. send and recv hold g.size() blocks, in group
// rank order; block i of recv ends up holding what rank i sent to this processor.
//
// The 1-level algorithms run on any group of any size. 2-lev-sq, 2-lev-c,r and 2-lev-c,r-int need
// the whole machine as g on a 1-D or 2-D mesh or torus (2-lev-sq also a perfect-square p whose
// mesh tiles into sqrt(p) sub-meshes); logp-lev-bfly needs a power-of-two group. Otherwise they
// throw touchstone::UsageError naming the constraint.
#pragma once
#include <cstddef>
#include <span>

#include "algorithms/collective.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// 1-lev-dir (paper 000, section 5.1 and 5.3): every processor issues its p-1 sends, farthest
/// destination first, and its p-1 receives, and leaves congestion to the network.
AlltoallCollective alltoall_1lev_dir;

/// 1-lev-lin (paper 000, section 5.1): p-1 linear permutations; in permutation i, P_j sends to
/// P_((i+j) mod p).
AlltoallCollective alltoall_1lev_lin;

/// 1-lev-xor (paper 000, section 5.1): p-1 exclusive-or permutations; in permutation i, P_j
/// exchanges with P_(i xor j). Any p: partners outside the group are skipped.
AlltoallCollective alltoall_1lev_xor;

/// 1-lev-bal (paper 000, section 5.1): balanced permutations, the cross product of those of the
/// mesh's rows and columns (those of a linear array when g is not the whole grid machine).
AlltoallCollective alltoall_1lev_bal;

/// 2-lev-sq (paper 000, sections 5.2 and 5.3): the 3-step algorithm on sqrt(p) sub-meshes of
/// sqrt(p) processors (p^(1/4) x p^(1/4) on a square mesh whose side is a perfect square).
AlltoallCollective alltoall_2lev_sq;

/// 2-lev-c,r (paper 000, sections 5.2 and 5.3): the 2-step algorithm, 1-lev-xor within the
/// columns with combined messages, then within the rows. Any R x C mesh.
AlltoallCollective alltoall_2lev_cr;

/// 2-lev-c,r-int (paper 000, section 5.3): 2-lev-c,r with the steps interleaved: each L-byte
/// piece of a combined column message goes on along the row as soon as that message arrives.
AlltoallCollective alltoall_2lev_cr_int;

/// logp-lev-bfly (paper 000, section 5.2): log p butterfly supersteps; P_i hands the p/2 blocks
/// for the other half to P_((i+p/2) mod p), then each half recurses. p must be a power of two.
AlltoallCollective alltoall_logp_lev_bfly;

// The all-to-alls of the MPI libraries (MPICH, Open MPI), on any group of any size. alpha is a
// message's start-up, beta its time per byte, L = size the block for each destination.

/// Bruck et al., IEEE TPDS 1997 (MPICH's short-message all-to-all): a local rotation, ceil(log p)
/// rounds in which rank i sends to i + 2^k every block whose rotated index has bit k, and a final
/// rotation: ceil(log p) alpha + ceil(log p) ceil(p/2) L beta, plus the local copies.
AlltoallCollective alltoall_bruck;

/// Pairwise exchange (Thakur et al., IJHPCA 2005, sec. 4.6; MPICH's long-message all-to-all): p - 1
/// steps; in step i rank j exchanges with j xor i when p is a power of two, else sends to j + i and
/// receives from j - i: (p-1) (alpha + L beta).
AlltoallCollective alltoall_pairwise;

/// Linear (Open MPI's basic linear all-to-all): every rank posts all its p - 1 receives and sends at
/// once, to j + 1, j + 2, ..., and waits for them: (p-1) alpha + (p-1) L beta at the ports, the
/// network deciding the rest.
AlltoallCollective alltoall_linear;

}  // namespace touchstone::algorithms
