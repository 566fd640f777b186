// The algorithm families of the catalog, one file each; each registers its fixed entries and its
// parameterised families (registry.hpp's Catalog) from this function.
#pragma once
#include "registry.hpp"

namespace touchstone::algorithms {

void add_alltoall_algorithms(Catalog& c);    // alltoall.cpp: paper 000, section 5
void add_cc_cube_algorithms(Catalog& c);     // cccube.cpp: paper 002
void add_scatter_algorithms(Catalog& c);     // scatter.cpp: paper 000, section 3
void add_gather_algorithms(Catalog& c);      // gather.cpp: paper 000, section 4
void add_selftest_algorithms(Catalog& c);    // selftest.cpp: checks of the runtime itself
void add_alltoallv_algorithms(Catalog& c);   // alltoallv.cpp: paper 003
void add_allgather_algorithms(Catalog& c);   // allgather.cpp: paper 004
void add_hpam_algorithms(Catalog& c);        // hpam.cpp: paper 001
// The MPI libraries' algorithms (MPICH, Open MPI) on any group: alltoall/ and allgather/ register
// theirs beside the papers'.
void add_bcast_algorithms(Catalog& c);            // bcast.cpp
void add_reduce_algorithms(Catalog& c);           // reduce.cpp
void add_allreduce_algorithms(Catalog& c);        // allreduce.cpp
void add_reduce_scatter_algorithms(Catalog& c);   // reduce_scatter.cpp
void add_scan_algorithms(Catalog& c);             // scan.cpp
void add_barrier_algorithms(Catalog& c);          // barrier.cpp

}  // namespace touchstone::algorithms
