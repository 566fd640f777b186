// Active messages and remote atomics (docs/model.md section 7): every processor of a 32-node
// CM-5 takes a lock held in rank 0's memory with remote test-and-set, adds one to a counter with
// remote fetch-and-add while it holds the lock, and frees the lock with a remote swap.
// Build: cmake --build build --target example_lock; run: build/bin/example_lock
#include <cstdio>

#include <touchstone/touchstone.hpp>

int main() {
  using namespace touchstone;
  constexpr int kLock = 0, kCounter = 1;
  std::int64_t counter = 0;
  int tries = 0;
  const RunResult r = run(parse_machine("cm5:32"), [&](Proc& p) {
    if (p.rank() == 0) {
      p.register_word(kLock);
      p.register_word(kCounter);
    }
    p.barrier();  // the words exist before anyone asks for them
    if (p.rank() != 0) {
      while (++tries, p.test_and_set(0, kLock) != 0) {
      }
      p.fetch_add(0, kCounter, 1);
      p.swap(0, kLock, 0);
    }
    p.barrier();
    if (p.rank() == 0) counter = p.word(kCounter);
  });
  std::printf("counter %lld after %d test-and-set tries, makespan %.3f us, trace hash %016llx\n",
              static_cast<long long>(counter), tries, to_us(r.makespan),
              static_cast<unsigned long long>(r.trace_hash));
}
