// `touchstone mpirun --machine SPEC [-np P] [--coll C=ALG,...] [run options] ./prog args...`
// (docs/mpi.md): runs an MPI program module on every VP through libtouchstone_mpi.so.
#include "tools/mpirun.hpp"

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "tools/debug_options.hpp"
#include "tools/numeric_option.hpp"
#include "touchstone/error.hpp"
#include "touchstone/mpirun.hpp"

namespace touchstone::cli {

namespace {

struct Options {
  mpi::LaunchOptions launch;
  DebugOptions debug;  // --trace, --order-log, --perturb, --races, --schedule, --explain, ...
  std::vector<std::string> coll;
  std::string execution = "fibers";
  double time_limit_s = 3600;
  std::size_t stack_kb = 1024;
};

// The options of `run` that an MPI run has too, each bound to its RunOptions field: a new
// RunOptions field becomes an mpirun option with one more line here.
void add_run_options(CLI::App* cmd, Options& o) {
  RunOptions& r = o.launch.run;
  add_debug_options(cmd, o.debug);  // the same debugging options as `touchstone run`
  cmd->add_option("--seed", r.seed, "seed of every random choice of the model and algorithms")
      ->check(number_in<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))->capture_default_str();
  cmd->add_flag("--phantom", r.phantom_payloads,
                "phantom payloads: sizes only, no bytes moved (only for programs that never read what they receive)");
  cmd->add_option("--host-cores", r.host_cores, "with --execution threads: pin the VP threads to host cores 0..N-1")
      ->check(number_in(0, 4096));
  cmd->add_option("--execution", o.execution, "how VPs run: fibers (fast) or threads; results are identical")
      ->check(CLI::IsMember({"fibers", "threads"}))->capture_default_str();
  cmd->add_option("--time-limit", o.time_limit_s, "virtual seconds after which a run is stopped as an error")
      ->check(time_limit_seconds())->capture_default_str();
  cmd->add_option("--stack-kb", o.stack_kb, "host stack of each VP (KiB): the program's main runs on it")
      ->check(number_in<std::size_t>(64, 1 << 20))->capture_default_str();
}

std::string coll_help() {
  std::string h = "collective algorithms, COLL=ALG,... (first = default):";
  for (const auto& [c, algs] : mpi::collective_algorithms()) h += fmt::format("\n  {}: {}", c, fmt::join(algs, ", "));
  return h;
}

int run(Options& o, CLI::App* cmd) {
  auto rest = cmd->remaining();
  if (rest.empty()) throw UsageError("mpirun: name the program to run (./prog args...)");
  o.launch.program = rest[0];
  o.launch.args.assign(rest.begin() + 1, rest.end());
  // COLL=ALG items, comma-separated; a piece without '=' continues the previous algorithm's name
  // (alltoall=2-lev-c,r).
  for (const auto& list : o.coll) {
    std::vector<std::string> items;
    std::size_t at = 0;
    while (at <= list.size()) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      std::string piece = list.substr(at, comma - at);
      if (piece.find('=') == std::string::npos && !items.empty()) items.back() += "," + piece;
      else items.push_back(std::move(piece));
      at = comma + 1;
    }
    for (const auto& item : items) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
        throw UsageError(fmt::format("--coll: expected COLLECTIVE=ALGORITHM, got '{}'", item));
      o.launch.coll[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  // Exploring re-runs the program; an MPI program's session (ranks' MPI state, loaded copies) is
  // not yet re-made per run, so --explore is refused rather than half done. --schedule replays a
  // chosen match of a single run.
  if (o.debug.explore > 0)
    throw UsageError("mpirun: --explore is not available for MPI programs yet; explore with `touchstone run` or "
                     "replay one choice with --schedule (docs/debugging.md)");
  apply_debug_options(o.debug, o.launch.run);
  o.launch.on_result = [&o](const Machine& m, const RunResult& r) {
    fmt::print(stderr, "{}", debug_findings(o.debug, m, Program{}, o.launch.run, r).text);
  };
  o.launch.run.execution = o.execution == "threads" ? Execution::threads : Execution::fibers;
  o.launch.run.time_limit = time_limit_ps(o.time_limit_s);
  o.launch.run.stack_bytes = o.stack_kb * 1024;
  return mpi::launch(o.launch);
}

}  // namespace

Subcommand add_mpirun(CLI::App& app) {
  auto o = std::make_shared<Options>();
  o->launch.machine = "mesh:4x4";
  CLI::App* cmd = app.add_subcommand("mpirun", "run an MPI program (built with touchstone-mpicc) on every VP of a machine");
  cmd->prefix_command();  // everything from the program on is the program's
  cmd->add_option("--machine", o->launch.machine, "machine spec, e.g. torus:16x16 (touchstone list machines)")->capture_default_str();
  cmd->add_option("-n,--np", o->launch.np, "MPI processes, on VPs 0..np-1 (default: every VP)")->check(number_in(1, 1 << 24));
  cmd->add_option("--coll", o->coll, coll_help())->allow_extra_args(false);  // one value per --coll
  cmd->add_flag("!--no-privatize", o->launch.privatize,
                "share the program's global variables between ranks (default: one copy per rank)");
  cmd->add_flag("--tag-output", o->launch.tag_output, "prefix every line a rank writes to stdout with \"[rank] \"");
  cmd->add_flag("--summary", o->launch.summary, "print makespan, messages and trace_hash to stderr at the end");
  add_run_options(cmd, *o);
  return Subcommand{cmd, [o, cmd] { return run(*o, cmd); }};
}

void normalize_mpirun_args(int argc, char** argv) {
  static char np[] = "--np";
  if (argc < 2 || std::string(argv[1]) != "mpirun") return;
  for (int i = 2; i < argc; ++i) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(argv[i], ec)) return;  // the program: the rest is its own
    if (std::string(argv[i]) == "-np") argv[i] = np;
  }
}

}  // namespace touchstone::cli
