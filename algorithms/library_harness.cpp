#include "library_harness.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common.hpp"
#include "harness.hpp"
#include "reduce.hpp"
#include "touchstone/error.hpp"
#include "touchstone/time.hpp"

namespace touchstone::algorithms {

namespace {

std::uint64_t load(const std::byte* at) {
  std::uint64_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}
void store(std::byte* at, std::uint64_t v) { std::memcpy(at, &v, sizeof v); }

// The operands of ranks 0..last combined in rank order, element by element.
std::vector<std::uint64_t> fold(bool commutative, int last, std::size_t count) {
  std::vector<std::uint64_t> acc(count);
  for (std::size_t j = 0; j < count; ++j) acc[j] = harness_operand(0, j);
  for (int r = 1; r <= last; ++r)
    for (std::size_t j = 0; j < count; ++j) acc[j] = harness_combine(commutative, acc[j], harness_operand(r, j));
  return acc;
}

// The result of the whole group, computed once per run by the first processor that checks, for
// the others to share (Proc::run_local; VPs run one at a time).
struct Total {
  bool commutative;
  std::vector<std::uint64_t> elements;
};
const std::vector<std::uint64_t>& total(Proc& p, bool commutative, std::size_t count) {
  static const char key = 0;
  std::shared_ptr<void>& slot = p.run_local(&key);
  auto* t = static_cast<Total*>(slot.get());
  if (!t || t->commutative != commutative || t->elements.size() != count) {
    // A new slot object, so that a VP still holding the old result keeps it valid.
    slot = std::make_shared<Total>(Total{commutative, fold(commutative, p.size() - 1, count)});
    t = static_cast<Total*>(slot.get());
  }
  return t->elements;
}

void fill_operands(int rank, std::span<std::byte> out) {
  for (std::size_t j = 0; j < out.size() / kHarnessElement; ++j)
    store(out.data() + j * kHarnessElement, harness_operand(rank, j));
}

// Throws naming the algorithm, the rank and the first wrong element unless got holds `want`.
void check_elements(const std::string& name, int rank, std::span<const std::byte> got,
                    std::span<const std::uint64_t> want) {
  for (std::size_t j = 0; j < want.size(); ++j)
    if (load(got.data() + j * kHarnessElement) != want[j])
      throw std::runtime_error(
          fmt::format("{}: rank {} holds a wrong result in element {} of {}", name, rank, j, want.size()));
}

std::size_t elements(const std::string& name, std::size_t size) {
  if (size % kHarnessElement)
    throw UsageError(
        fmt::format("{}: the catalog's reductions combine {}-byte elements, so the size must be a multiple of "
                    "{}, not {}",
                    name, kHarnessElement, kHarnessElement, size));
  return size / kHarnessElement;
}

// A reduction's buffers: every processor's operands and result (send and recv, `size` bytes, or
// `blocks` blocks of it), the algorithm's own copies (up to four vectors), their copies in flight
// (two per processor), and the expected result, shared.
Footprint reduction_footprint(int vps, std::size_t size, std::size_t blocks) {
  const auto p = static_cast<std::size_t>(vps), v = blocks * size;
  return Footprint{p * (2 * v + 4 * v + 2 * size) + v, 2 * p * v, 8 * p, p * (v + size), v + size};
}

// The harness of a reduction: the operator for the algorithm, charged; the element count checked.
Reduction charged_reduction(Proc& p, bool commutative_only) {
  Reduction r = harness_reduction(commutative_only);
  // Under phantom payloads no operand is read for its value, and the harness's buffers are shared
  // by the VPs, of which one instant's may run at once: the operator only charges its time.
  if (p.phantom_payloads()) r.op = [](std::span<const std::byte>, std::span<std::byte>) {};
  r.op = charged(p, std::move(r.op), OperandClass::integer);
  return r;
}

// What a processor's result must hold: the reduction of every rank's vector (on the root only, or
// on every processor), the processor's own block of it (reduce-scatter: the vectors have p blocks),
// or the reduction of ranks 0..itself (inclusive scan).
enum class Result { at_root, everywhere, own_block, prefix };

// The harness of a reduction: every processor fills its operands (one vector of `size` bytes, p of
// them for Result::own_block), `run` calls the algorithm with the operator, charged, into the
// processor's `size` bytes of result, and every element of the result is checked.
using ReductionRun = std::function<void(Proc&, const Args&, std::span<const std::byte> send,
                                        std::span<std::byte> recv, const Reduction&)>;
Algorithm reduction_entry(std::string name, std::string summary, bool commutative_only, Result result,
                          ReductionRun run) {
  auto program = [name, commutative_only, result, run](Proc& p, const Args& a) {
    const int n = p.size(), me = p.rank();
    const std::size_t count = elements(name, a.size),
                      vectors = result == Result::own_block ? static_cast<std::size_t>(n) : 1;
    const PayloadBuffer send(p, a, PayloadBuffer::Role::send, vectors * a.size, vectors * a.size),
        recv(p, a, PayloadBuffer::Role::recv, a.size, a.size);
    if (a.check) fill_operands(me, send.span());
    run(p, a, send.span(), recv.span(), charged_reduction(p, commutative_only));
    if (!a.check) return;
    switch (result) {
      case Result::at_root:
        if (me == a.root) check_elements(name, me, recv.span(), total(p, commutative_only, count));
        break;
      case Result::everywhere:
        check_elements(name, me, recv.span(), total(p, commutative_only, count));
        break;
      case Result::own_block:
        check_elements(name, me, recv.span(),
                       std::span(total(p, commutative_only, count * vectors))
                           .subspan(static_cast<std::size_t>(me) * count, count));
        break;
      case Result::prefix:
        check_elements(name, me, recv.span(), fold(commutative_only, me, count));
        break;
    }
  };
  auto footprint = [result](int vps, std::size_t size) {
    return reduction_footprint(vps, size, result == Result::own_block ? static_cast<std::size_t>(vps) : 1);
  };
  Algorithm alg{std::move(name), std::move(summary), std::move(program), footprint};
  alg.raw.needs_commutative = commutative_only;
  return alg;
}

}  // namespace

std::uint64_t harness_operand(int rank, std::size_t j) {
  std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(rank)) << 32) ^ j ^ 0x243f6a8885a308d3ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;  // splitmix64's finalizer
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t harness_combine(bool commutative, std::uint64_t lower, std::uint64_t higher) {
  if (commutative) return lower + higher;
  // (a, b): x -> a x + b, a the low word. Lower first, then higher: x -> ah (al x + bl) + bh.
  const auto al = static_cast<std::uint32_t>(lower), bl = static_cast<std::uint32_t>(lower >> 32);
  const auto ah = static_cast<std::uint32_t>(higher), bh = static_cast<std::uint32_t>(higher >> 32);
  const std::uint32_t a = ah * al, b = ah * bl + bh;
  return static_cast<std::uint64_t>(b) << 32 | a;
}

Reduction harness_reduction(bool commutative) {
  Reducer op = [commutative](std::span<const std::byte> in, std::span<std::byte> inout) {
    for (std::size_t at = 0; at + kHarnessElement <= in.size(); at += kHarnessElement)
      store(inout.data() + at, harness_combine(commutative, load(in.data() + at), load(inout.data() + at)));
  };
  return Reduction{std::move(op), commutative, kHarnessElement};
}

Algorithm library_bcast_entry(std::string name, std::string summary, std::function<BcastCollective> fn) {
  auto program = [name, fn](Proc& p, const Args& a) {
    const PayloadBuffer mem(p, a, PayloadBuffer::Role::recv, a.size, a.size);
    const std::span<std::byte> buf = mem.span();
    if (a.check) (p.rank() == a.root ? fill_pattern : mark_undelivered)(a.root, a.root, buf);
    fn(p, p.world(), a.root, buf);
    p.leave();
    if (a.check) check_pattern(name, a.root, a.root, buf);
  };
  // Every processor's buffer and up to two copies of it in flight per processor; the chain posts
  // a receive per segment.
  auto footprint = [](int vps, std::size_t size) {
    const auto p = static_cast<std::size_t>(vps);
    return Footprint{p * size, 2 * p * size, p * (8 + size / 1024), p * size, size};
  };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  alg.raw.bcast = std::move(fn);
  return alg;
}

Algorithm library_allgather_entry(std::string name, std::string summary, std::function<AllgatherCollective> fn) {
  auto program = allgather_program(
      name, [fn](Proc& p, std::span<std::byte> buf, std::size_t size) { fn(p, p.world(), buf, size); });
  // Every processor's p blocks, Bruck's rotated copy of them, and up to two copies in flight.
  auto footprint = [](int vps, std::size_t size) {
    const auto p = static_cast<std::size_t>(vps);
    return Footprint{2 * p * p * size, 2 * p * p * size, 8 * p, p * p * size, p * size};
  };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  alg.raw.allgather = std::move(fn);
  return alg;
}

Algorithm reduce_entry(std::string name, std::string summary, std::function<ReduceCollective> fn,
                       bool commutative_only) {
  auto run = [fn](Proc& p, const Args& a, auto send, auto recv, const Reduction& r) {
    fn(p, p.world(), a.root, send, recv, r);
  };
  Algorithm alg = reduction_entry(std::move(name), std::move(summary), commutative_only, Result::at_root, run);
  alg.raw.reduce = std::move(fn);
  return alg;
}

Algorithm allreduce_entry(std::string name, std::string summary, std::function<AllreduceCollective> fn,
                          bool commutative_only) {
  auto run = [fn](Proc& p, const Args&, auto send, auto recv, const Reduction& r) {
    fn(p, p.world(), send, recv, r);
  };
  Algorithm alg = reduction_entry(std::move(name), std::move(summary), commutative_only, Result::everywhere, run);
  alg.raw.allreduce = std::move(fn);
  return alg;
}

Algorithm reduce_scatter_entry(std::string name, std::string summary, std::function<ReduceScatterCollective> fn,
                               bool commutative_only) {
  auto run = [fn](Proc& p, const Args& a, auto send, auto recv, const Reduction& r) {
    const std::vector<std::size_t> counts(static_cast<std::size_t>(p.size()), a.size);
    fn(p, p.world(), send, recv, counts, r);
  };
  Algorithm alg = reduction_entry(std::move(name), std::move(summary), commutative_only, Result::own_block, run);
  alg.raw.reduce_scatter = std::move(fn);
  return alg;
}

Algorithm scan_entry(std::string name, std::string summary, std::function<ScanCollective> fn) {
  auto run = [fn](Proc& p, const Args&, auto send, auto recv, const Reduction& r) {
    fn(p, p.world(), send, recv, r, false);
  };
  Algorithm alg = reduction_entry(std::move(name), std::move(summary), false, Result::prefix, run);
  alg.raw.scan = std::move(fn);
  return alg;
}

Algorithm barrier_entry(std::string name, std::string summary, std::function<BarrierCollective> fn) {
  auto program = [name, fn](Proc& p, const Args&) {
    p.compute(microseconds(p.rank() + 1));
    fn(p, p.world());
    if (p.now() < microseconds(p.size()))
      throw std::runtime_error(fmt::format("{}: rank {} left the barrier at {} us, before rank {} entered it at {} us",
                                           name, p.rank(), to_us(p.now()), p.size() - 1, p.size()));
  };
  auto footprint = [](int vps, std::size_t) { return Footprint{0, 0, 8 * static_cast<std::size_t>(vps)}; };
  Algorithm alg{std::move(name), std::move(summary), program, footprint};
  alg.raw.barrier = std::move(fn);
  return alg;
}

}  // namespace touchstone::algorithms
