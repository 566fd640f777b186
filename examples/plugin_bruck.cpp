// A plug-in (docs/extending.md): an all-to-all of your own, benchmarked as the catalog's are.
//
//   touchstone sweep --plugin ./plugin_bruck.so --machine mesh:16x16 --algorithms alltoall/all
//   touchstone mpirun --plugin ./plugin_bruck.so --coll alltoall=my-bruck ./prog
//
// It registers the index algorithm of Bruck, Ho, Kipnis, Upfal and Weathersby ("Efficient
// algorithms for all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11),
// 1997) in radix r: alltoall/my-bruck (r = 2) and the family alltoall/my-bruck(R), R >= 2. With
// n processors, each holds its n blocks in a working array:
//   1. rotate: slot k holds the block for processor me + k (mod n);
//   2. for each radix-r digit position x (weight w = r^x) and digit value z = 1 .. r-1: send every
//      slot k whose digit x is z to processor me + z w, and receive the same slots from me - z w.
//      A block in slot k travels k = sum of z w in total, so after the last digit it has arrived at
//      its destination, and slot k holds the block that came from processor me - k;
//   3. rotate back: block me - k of the receive buffer is slot k.
// ceil(log_r n) (r - 1) rounds of at most ceil(n / r) blocks each: fewer, longer messages than the
// n - 1 of a direct exchange, which is what pays for short blocks.
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "algorithms/harness.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/proc.hpp"

namespace {

using touchstone::Group;
using touchstone::Proc;

constexpr int kTag = 1997;

void bruck_alltoall(int radix, Proc& p, const Group& g0, std::span<const std::byte> send, std::span<std::byte> recv,
                    std::size_t L) {
  const Group g = g0.is_world_placeholder() ? p.world() : g0;  // the default Group is the whole machine
  const int n = g.size(), me = g.local_rank(p.rank());
  const auto at = [L](auto buf, int k) { return buf.subspan(static_cast<std::size_t>(k) * L, L); };
  std::vector<std::byte> slots(static_cast<std::size_t>(n) * L), out, in;
  const std::span<std::byte> slot_bytes(slots);

  // Local copies cost the processor time too (docs/model.md 2.11): charged once per phase.
  for (int k = 0; k < n; ++k) std::memcpy(at(slot_bytes, k).data(), at(send, (me + k) % n).data(), L);
  p.local_copy(static_cast<std::size_t>(n) * L, static_cast<std::size_t>(n));

  for (long long weight = 1; weight < n; weight *= radix) {
    for (int digit = 1; digit < radix && digit * weight < n; ++digit) {
      std::vector<int> moving;  // the slots whose radix-r digit at `weight` is `digit`
      for (int k = 1; k < n; ++k)
        if ((k / weight) % radix == digit) moving.push_back(k);
      out.resize(moving.size() * L);
      in.resize(out.size());
      for (std::size_t i = 0; i < moving.size(); ++i)
        std::memcpy(out.data() + i * L, at(slot_bytes, moving[i]).data(), L);
      const int hop = static_cast<int>(digit * weight);
      p.sendrecv((me + hop) % n, kTag, out, (me - hop + n) % n, kTag, in, g);
      for (std::size_t i = 0; i < moving.size(); ++i)
        std::memcpy(at(slot_bytes, moving[i]).data(), in.data() + i * L, L);
      p.local_copy(2 * out.size(), 2 * moving.size());
    }
  }

  for (int k = 0; k < n; ++k) std::memcpy(at(recv, (me - k + n) % n).data(), at(slot_bytes, k).data(), L);
  p.local_copy(static_cast<std::size_t>(n) * L, static_cast<std::size_t>(n));
}

touchstone::algorithms::Algorithm bruck_entry(std::string name, int radix) {
  return touchstone::algorithms::alltoall_entry(
      std::move(name), fmt::format("Bruck et al. 1997, radix {}: combined blocks, log_r p rounds (plug-in)", radix),
      [radix](Proc& p, const Group& g, std::span<const std::byte> send, std::span<std::byte> recv, std::size_t L) {
        bruck_alltoall(radix, p, g, send, recv, L);
      },
      // Memory: the working array and the two message buffers, about 2 p L per processor.
      {.scratch_halves = 4, .in_flight_halves = 2});
}

}  // namespace

extern "C" void touchstone_register_algorithms(touchstone::algorithms::Catalog& catalog) {
  catalog.push_back(bruck_entry("alltoall/my-bruck", 2));
  catalog.add_family("alltoall/my-bruck(", [](const std::string& name, const std::string& param) {
    // The whole parameter, digits only: touchstone::number_in_range refuses " 4", "+4" and "4x".
    const auto radix = touchstone::number_in_range(param, 2, std::numeric_limits<int>::max());
    if (!radix) throw touchstone::UsageError(fmt::format("'{}': the radix must be an integer >= 2", name));
    return bruck_entry(name, *radix);
  });
}
