// Plug-ins that are wrong on purpose (tests/plugins/plugins.cmake), built twice:
//   CLASH: registers alltoall/bruck, a name the catalog has: loading it is refused.
//   otherwise: registers alltoall/no-exchange, an all-to-all that sends nothing and keeps its own
//   blocks: the harness's data check must fail it, as it fails a catalog algorithm.
#include <algorithm>
#include <span>

#include "algorithms/harness.hpp"
#include "algorithms/registry.hpp"

namespace {

void no_exchange(touchstone::Proc&, const touchstone::Group&, std::span<const std::byte> send,
                 std::span<std::byte> recv, std::size_t) {
  std::copy(send.begin(), send.end(), recv.begin());
}

}  // namespace

extern "C" void touchstone_register_algorithms(touchstone::algorithms::Catalog& catalog) {
#ifdef CLASH
  catalog.push_back(touchstone::algorithms::alltoall_entry("alltoall/bruck", "a second alltoall/bruck", no_exchange));
#else
  catalog.push_back(touchstone::algorithms::alltoall_entry("alltoall/no-exchange", "sends nothing", no_exchange));
#endif
}
