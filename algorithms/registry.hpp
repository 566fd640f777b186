// The algorithm catalog (docs/algorithms.md): every algorithm under its paper's name, "collective/name",
// wrapped in the harness of its collective (buffers in, exact check of every byte out).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/traffic.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::algorithms {

/// What a run of an algorithm is asked to do.
struct Args {
  std::size_t size = 0;  ///< the actual message size L in bytes
  int root = 0;          ///< source (one-to-all) or destination (all-to-one)
  bool check = true;     ///< fill and verify payloads (off for phantom payloads)
  TrafficSpec traffic{}; ///< the communication matrix of alltoallv/ algorithms (paper 003)
};

/// Payload memory of one run of an algorithm at its worst moment, in bytes and messages.
struct Footprint {
  /// Buffers the harness and the algorithm allocate (allocated under phantom payloads too).
  std::size_t buffers = 0;
  /// Copies of payloads the runtime holds for messages between send and delivery (none under
  /// phantom payloads).
  std::size_t in_flight = 0;
  /// Messages posted and not yet complete at that moment (each a record in the runtime).
  std::size_t messages = 0;
  /// The part of `buffers` that is the harness's send and receive buffers of every VP, and what
  /// they take under phantom payloads, where the VPs of a run share them (harness.hpp,
  /// PayloadBuffer): a phantom run allocates buffers - harness + harness_phantom. An algorithm whose
  /// own message copies are shared the same way under phantom (alltoallv/) counts them here too.
  std::size_t harness = 0, harness_phantom = 0;
};

/// An algorithm itself, for callers with their own buffers (the MPI interface, mpi/ and
/// docs/mpi.md): the harness of each collective fills in the member of its signature.
struct Collective {
  /// alltoall/: send and recv hold g.size() blocks of `size` bytes (alltoall.hpp).
  std::function<void(Proc&, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv,
                     std::size_t size)> alltoall;
  /// scatter/ and gather/: scatter.hpp and gather.hpp.
  std::function<void(Proc&, const Group& g, int root, std::span<const std::byte> send, std::span<std::byte> recv,
                     std::size_t size)> rooted;
  /// allgather/ (the whole machine only): buf holds p blocks of `size` bytes, the own one in place.
  std::function<void(Proc&, std::span<std::byte> buf, std::size_t size)> allgather_world;
  /// bcast/ (the whole machine only): the root's buf reaches every processor.
  std::function<void(Proc&, int root, std::span<std::byte> buf)> bcast_world;
  /// The MPI libraries' algorithms (collective.hpp), on any group of any size.
  std::function<BcastCollective> bcast;
  std::function<AllgatherCollective> allgather;
  std::function<ReduceCollective> reduce;
  std::function<AllreduceCollective> allreduce;
  std::function<ReduceScatterCollective> reduce_scatter;
  std::function<ScanCollective> scan;
  std::function<BarrierCollective> barrier;
  /// The algorithm reorders operands: correct for commutative operators only (the MPI interface
  /// falls back to its default for the others).
  bool needs_commutative = false;
};

struct Algorithm {
  std::string name;     ///< "alltoall/1-lev-xor"
  std::string summary;  ///< one line, citing the paper
  std::function<void(Proc&, const Args&)> program;  ///< harness + algorithm, run on every VP
  /// Host memory of payloads in a run on `vps` processors with messages of `size` bytes: a bound
  /// that tests/memory/test_footprint.cpp checks against the measured peak of every catalog entry
  /// (host_footprint in harness.hpp adds the runtime's own per-VP and per-message memory).
  std::function<Footprint(int vps, std::size_t size)> footprint;
  /// The paper's analytic time for this machine and size, when the paper gives one (paper 001's
  /// eqs. 4-14); printed as `analytic_us` beside the emulated makespan. Empty otherwise.
  std::function<std::optional<double>(const Machine& machine, std::size_t size)> analytic_us = {};
  Collective raw = {};  ///< the algorithm without its harness, where its collective has one signature
};

/// What the family files register (each from its add_*_algorithms function), and plug-ins too
/// (load_plugin): fixed entries, in catalog order, and families whose names carry a parameter in
/// parentheses, such as "scatter/logp-lev-rec(0.6)".
class Catalog {
 public:
  /// Builds the entry for the text between the parentheses; UsageError naming the constraint.
  using Make = std::function<Algorithm(const std::string& name, const std::string& param)>;
  void push_back(Algorithm a) { entries_.push_back(std::move(a)); }
  /// `prefix` ends with '(': "alltoall/pipelined-cc-cube(".
  void add_family(std::string prefix, Make make) { families_.push_back({std::move(prefix), std::move(make)}); }

  /// A deque: entries keep their addresses as plug-ins add more.
  const std::deque<Algorithm>& entries() const { return entries_; }
  /// The prefixes of the parameterised families, in catalog order.
  std::vector<std::string> family_prefixes() const;
  /// The family whose prefix `name` starts with (and which ends with ')'), or nullptr.
  const Make* family_of(const std::string& name, std::string* param) const;
  /// Adds `other`'s entries and families; UsageError, naming `origin`, for a name already taken (an
  /// entry, or a family whose names it would shadow), before anything is added.
  void merge(Catalog other, const std::string& origin);

 private:
  std::deque<Algorithm> entries_;
  std::deque<std::pair<std::string, Make>> families_;
};

/// A real number in (lo, hi), or [lo, hi) when lo_closed, for a family's parameter; UsageError
/// saying `why` otherwise.
double parse_real_param(const std::string& name, const std::string& number, bool lo_closed, double lo, double hi,
                        const char* why);

/// Every algorithm, in catalog order, then the plug-ins' in the order they were loaded.
const std::deque<Algorithm>& catalog();
/// The parameterised families' prefixes, such as "alltoall/pipelined-cc-cube(".
std::vector<std::string> family_prefixes();
/// The algorithm of that name; UsageError listing close names if unknown.
const Algorithm& find(const std::string& name);
/// A comma-separated list of names, where "collective/all" stands for its whole family (plug-ins'
/// algorithms included); each algorithm once, where first named.
std::vector<const Algorithm*> select(const std::string& list);

/// The arguments of a run at message size `size`. `traffic` ("" for none; touchstone run --traffic)
/// is the communication matrix of alltoallv/ algorithms, whose message size is their traffic per
/// processor t (docs/algorithms.md): a spec without t= takes it from `size`, so a sweep over sizes
/// is a sweep over the traffic.
Args run_args(std::size_t size, int root, bool check, const std::string& traffic);

/// The sizes a run or sweep of `algs` runs: `given` (from the option `flag`) checked against
/// `traffic`. A traffic spec that fixes the matrix (t= or file=) fixes the size too: every size of a
/// sweep would run the same matrix under a different label, so a size that disagrees is refused
/// rather than printed. UsageError if `traffic` is given to an algorithm that takes none.
std::vector<std::size_t> run_sizes(const std::string& traffic, const std::vector<const Algorithm*>& algs,
                                   const std::optional<std::vector<std::size_t>>& given, const std::string& flag);

/// Loads the plug-in at `path` (a shared object, docs/extending.md) and adds the algorithms its
/// touchstone_register_algorithms registers to the catalog, for find, select and the MPI
/// collectives alike. UsageError if the file is missing, is not a loadable shared object, defines no
/// entry point, or registers a name the catalog (or a plug-in loaded before) already has. Loading
/// the same file again does nothing. Call it before any run: the catalog is not locked against runs.
void load_plugin(const std::string& path);

}  // namespace touchstone::algorithms

/// The entry point a plug-in defines: it registers its algorithms into `catalog`, as the catalog's
/// family files do (push_back, add_family). extern "C": looked up by this unmangled name; visible
/// even in a plug-in built with -fvisibility=hidden.
extern "C" __attribute__((visibility("default"))) void touchstone_register_algorithms(
    touchstone::algorithms::Catalog& catalog);
