// A plug-in whose run fails in one order of a race and completes in the other (tests/plugins/
// plugins.cmake): alltoall/first-wins, a pairwise all-to-all before which ranks 1 and 2 each send
// rank 0 an empty message that it takes with any_source; rank 0 fails when rank 1's comes first.
#include <span>
#include <vector>

#include "algorithms/harness.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/error.hpp"

namespace {

constexpr int kRaceTag = 2, kDataTag = 1;

void first_wins(touchstone::Proc& p, const touchstone::Group& g, std::span<const std::byte> send,
                std::span<std::byte> recv, std::size_t L) {
  const int me = g.local_rank(p.rank()), n = g.size();
  if (n < 3) throw touchstone::UsageError("alltoall/first-wins needs 3 ranks or more");
  if (me == 1 || me == 2) p.send(0, kRaceTag, {}, g);
  if (me == 0) {
    const touchstone::Status first = p.recv(touchstone::any_source, kRaceTag, {}, g);
    p.recv(touchstone::any_source, kRaceTag, {}, g);
    if (first.source == 1) throw touchstone::Error("rank 1's message came first");
  }
  std::vector<touchstone::Request> reqs;
  for (int j = 0; j < n; ++j) {
    const auto block = static_cast<std::size_t>(j) * L;
    reqs.push_back(p.irecv(j, kDataTag, recv.subspan(block, L), g));
    reqs.push_back(p.isend(j, kDataTag, send.subspan(block, L), g));
  }
  p.waitall(reqs);
}

}  // namespace

extern "C" void touchstone_register_algorithms(touchstone::algorithms::Catalog& catalog) {
  catalog.push_back(touchstone::algorithms::alltoall_entry("alltoall/first-wins", "fails when rank 1's message wins",
                                                           first_wins));
}
