// A sweep from a program, with the experiment harness the command line and the paper programs use
// (Touchstone::experiment): two all-to-all algorithms at three sizes on a 4x4 mesh, run in parallel;
// each run's virtual makespan, then the fastest algorithm of each size.
// Build: cmake --build build --target example_sweep; run: build/bin/example_sweep
#include <cstdio>
#include <vector>

#include <algorithms/registry.hpp>
#include <touchstone/experiment/experiment.hpp>
#include <touchstone/touchstone.hpp>

int main() {
  using namespace touchstone;
  const Machine machine = parse_machine("mesh:4x4");
  const std::vector<const algorithms::Algorithm*> algs{&algorithms::find("alltoall/1-lev-dir"),
                                                       &algorithms::find("alltoall/1-lev-xor")};
  const std::vector<std::size_t> sizes{64, 1024, 16384};
  std::vector<experiment::Job> jobs;
  for (const auto* a : algs)
    for (const auto s : sizes) jobs.push_back({&machine, a, {s}, {}});
  const auto outcomes = experiment::run_jobs(jobs, {.parallel = 2});
  for (const auto& o : outcomes) {
    if (!o.record) return std::fprintf(stderr, "%s failed: %s\n", o.job->algorithm->name.c_str(), o.error.c_str()), 1;
    std::printf("%-20s %6zu B  %10.3f us\n", o.job->algorithm->name.c_str(), o.job->args.size,
                to_us(o.record->result.makespan));
  }
  const auto fastest = experiment::fastest_by_size(sizes, outcomes);
  for (std::size_t i = 0; i < sizes.size(); ++i) std::printf("fastest at %zu B: %s\n", sizes[i], fastest[i].c_str());
}
