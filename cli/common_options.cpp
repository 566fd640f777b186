#include "cli/common_options.hpp"

#include <limits>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "algorithms/traffic.hpp"
#include "cli/numeric_option.hpp"
#include "touchstone/error.hpp"
#include "touchstone/mpirun.hpp"

namespace touchstone::cli {

void add_machine_option(CLI::App* cmd, std::string& spec) {
  cmd->add_option("--machine", spec, "machine spec, e.g. torus:16x16 or delta:16x16 (touchstone list machines)")
      ->capture_default_str();
}

void add_plugin_option(CLI::App* cmd, std::vector<std::string>& paths) {
  cmd->add_option("--plugin", paths,
                  "load a shared object that registers algorithms of your own (docs/extending.md); repeatable")
      ->allow_extra_args(false);  // one path per --plugin
}

void load_plugins(const std::vector<std::string>& paths) {
  for (const auto& path : paths) algorithms::load_plugin(path);
}

void add_common_options(CLI::App* cmd, CommonOptions& c) {
  add_machine_option(cmd, c.machine);
  add_plugin_option(cmd, c.plugins);
  cmd->add_option("--root", c.root, "source or destination processor of rooted collectives")
      ->check(number_in(0, std::numeric_limits<int>::max()))
      ->capture_default_str();
  cmd->add_option(
      "--traffic", c.traffic,
      "communication matrix of alltoallv/ algorithms: k=K,l=L,t=BYTES (paper 003, section 7) or file=M.csv");
  cmd->add_option("--seed", c.seed, "seed of every random choice of the model and algorithms")
      ->check(number_in<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))
      ->capture_default_str();
  cmd->add_option("--format", c.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_flag("--phantom", c.phantom, "phantom payloads: sizes only, no bytes copied or checked");
  cmd->add_option("--time-limit", c.time_limit_s, "virtual seconds after which a run is stopped as an error")
      ->check(time_limit_seconds())
      ->capture_default_str();
  cmd->add_option("--execution", c.execution,
                  "how VPs run: fibers (fast) or threads (one OS thread per VP); results are identical")
      ->check(CLI::IsMember({"fibers", "threads"}))
      ->capture_default_str();
  cmd->add_option("--host-cores", c.host_cores, kHostCoresHelp)->check(number_in(1, 4096));
  cmd->add_option("--parallel-programs-from-us", c.parallel_programs_from_us, kParallelProgramsHelp)
      ->check(number_in(0.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--eager-limit", c.eager_limit,
                  "flow control (docs/model.md 2.16): messages above BYTES go by rendezvous; unlimited (only a full "
                  "buffer= does), or off; overrides the machine's eager_limit");
  cmd->add_option("--stack-kb", c.stack_kb,
                  fmt::format("host stack of each VP (KiB; default {}, an MPI program's {})", RunOptions{}.stack_bytes / 1024,
                              mpi::program_run_options().stack_bytes / 1024))
      ->check(number_in<std::size_t>(64, 1 << 20));
}

RunOptions run_options(const CommonOptions& c) {
  RunOptions o;
  o.seed = c.seed;
  o.phantom_payloads = c.phantom;
  o.time_limit = time_limit_ps(c.time_limit_s);
  if (c.stack_kb > 0) o.stack_bytes = c.stack_kb * 1024;
  o.execution = c.execution == "threads" ? Execution::threads : Execution::fibers;
  o.host_cores = c.host_cores > 0 ? c.host_cores : available_host_cores();
  o.parallel_programs_from_us = c.parallel_programs_from_us;
  o.eager_limit = eager_limit_bytes(c.eager_limit);
  return o;
}

algorithms::Args algorithm_args(const CommonOptions& c, std::size_t size) {
  return algorithms::run_args(size, c.root, !c.phantom, c.traffic);
}

std::vector<std::size_t> run_sizes(const CommonOptions& c, const std::vector<const algorithms::Algorithm*>& algs,
                                   const std::optional<std::vector<std::size_t>>& given, const std::string& flag) {
  return algorithms::run_sizes(c.traffic, algs, given, flag);
}

}  // namespace touchstone::cli
