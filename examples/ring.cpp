// A first SPMD program: every processor passes a greeting around a ring of a 4x4 mesh, then all
// meet at a barrier. Build: cmake --build build --target example_ring; run: build/bin/example_ring
#include <array>
#include <cstdio>
#include <cstring>

#include <touchstone/touchstone.hpp>

int main() {
  using namespace touchstone;
  const Machine machine = parse_machine("mesh:4x4");
  const RunResult r = run(machine, [](Proc& p) {
    const int next = (p.rank() + 1) % p.size(), prev = (p.rank() + p.size() - 1) % p.size();
    std::array<char, 32> out{}, in{};
    std::snprintf(out.data(), out.size(), "hello from %d", p.rank());
    p.sendrecv(next, 0, std::as_bytes(std::span(out)), prev, 0, std::as_writable_bytes(std::span(in)));
    p.barrier();
    if (p.rank() == 0) std::printf("rank 0 got \"%s\" at t=%.3f us\n", in.data(), to_us(p.now()));
  });
  std::printf("makespan %.3f us, %llu messages, trace hash %016llx\n", to_us(r.makespan),
              static_cast<unsigned long long>(r.stats.messages), static_cast<unsigned long long>(r.trace_hash));
}
