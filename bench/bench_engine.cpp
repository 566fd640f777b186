// Host cost of the engine (docs/performance.md). These measure host time, never virtual time:
// the virtual results of every run are fixed by the model and checked by the tests.
//
//   build/bin/bench_engine                       # everything
//   build/bin/bench_engine --benchmark_filter=PingPong
#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>

#include "algorithms/registry.hpp"
#include "touchstone/touchstone.hpp"

namespace {

using touchstone::Execution;

Execution execution_of(const benchmark::State& state) {
  return state.range(0) == 0 ? Execution::fibers : Execution::threads;
}

const char* name_of(Execution e) { return e == Execution::fibers ? "fibers" : "threads"; }

// Runs the emulation once per benchmark iteration; returns the messages and events of all runs.
std::pair<std::uint64_t, std::uint64_t> run_timed(benchmark::State& state, const touchstone::Machine& machine,
                                                  const touchstone::Program& program,
                                                  const touchstone::RunOptions& opts) {
  std::uint64_t messages = 0, events = 0;
  for (auto _ : state) {
    const touchstone::RunResult r = touchstone::run(machine, program, opts);
    messages += r.stats.messages;
    events += r.stats.events;
    benchmark::DoNotOptimize(r.trace_hash);
  }
  return {messages, events};
}

// Two VPs on mesh:1x2 pass an 8-byte message back and forth. Each message costs one VP switch on
// each side plus its events, so items_processed (messages) shows the host cost per message.
void BM_PingPongHostCostPerMessage(benchmark::State& state) {
  const touchstone::Machine machine = touchstone::parse_machine("mesh:1x2");
  const int round_trips = static_cast<int>(state.range(1));
  touchstone::RunOptions opts;
  opts.execution = execution_of(state);
  const touchstone::Program program = [round_trips](touchstone::Proc& p) {
    std::array<std::byte, 8> buf{};
    const int other = 1 - p.rank();
    for (int i = 0; i < round_trips; ++i) {
      if (p.rank() == 0) {
        p.send(other, 0, buf);
        p.recv(other, 0, buf);
      } else {
        p.recv(other, 0, buf);
        p.send(other, 0, buf);
      }
    }
  };
  const auto [messages, events] = run_timed(state, machine, program, opts);
  state.SetItemsProcessed(static_cast<std::int64_t>(messages));
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.SetLabel(name_of(opts.execution));
}
BENCHMARK(BM_PingPongHostCostPerMessage)
    ->ArgNames({"os_threads", "round_trips"})
    ->Args({0, 10'000})
    ->Args({1, 1'000})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// alltoall/1-lev-xor (paper 000, section 5.1) at 1024 bytes per pair, harness included (it fills
// and checks every byte): p(p-1) messages per run.
void BM_EngineThroughput(benchmark::State& state) {
  const int side = static_cast<int>(state.range(1));
  const touchstone::Machine machine =
      touchstone::parse_machine("mesh:" + std::to_string(side) + "x" + std::to_string(side));
  const auto& alg = touchstone::algorithms::find("alltoall/1-lev-xor");
  const touchstone::algorithms::Args args{1024, 0, true};
  touchstone::RunOptions opts;
  opts.execution = execution_of(state);
  const touchstone::Program program = [&](touchstone::Proc& p) { alg.program(p, args); };
  const auto [messages, events] = run_timed(state, machine, program, opts);
  state.counters["messages/s"] = benchmark::Counter(static_cast<double>(messages), benchmark::Counter::kIsRate);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(name_of(opts.execution)) + " mesh:" + std::to_string(side) + "x" + std::to_string(side));
}
BENCHMARK(BM_EngineThroughput)
    ->ArgNames({"os_threads", "side"})
    ->Args({0, 8})
    ->Args({0, 16})
    ->Args({1, 8})
    ->Args({1, 16})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
