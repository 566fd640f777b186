// `touchstone sweep`: algorithms x sizes in parallel, a table with the winner of each size marked,
// and with --vary the same sweep on machine variants (docs/cli.md). With --program an MPI program
// runs beside the catalog's algorithms, once per size (and per algorithm of `--coll C=all`), each run
// a child `touchstone mpirun --result` (docs/benchmarking.md).
#include <filesystem>
#include <algorithm>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/common_options.hpp"
#include "cli/numeric_option.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/mpirun.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/touchstone.hpp"

namespace touchstone::cli {

namespace {

constexpr std::size_t kMaxSize = std::size_t{1} << 30;
constexpr const char* kDefaultSizes = "16:16384";  // when --sizes is not given

struct Options {
  CommonOptions common;
  std::string algorithms = "alltoall/all", sizes = kDefaultSizes, out, plot;
  std::vector<std::string> vary;
  std::string program, program_args;  // --program, --args
  std::vector<std::string> coll;      // --coll, passed to mpirun (C=all: one column per algorithm)
  int np = 0;
  int jobs = 0;
  double memory_mb = 0;
};

// Parses FROM:TO (doubling) or a single size.
std::vector<std::size_t> parse_sizes(const std::string& s) {
  auto num = [&](const std::string& v) -> std::size_t {
    if (const auto x = number_from_text<std::size_t>(v)) return *x;
    throw UsageError(fmt::format("--sizes: expected FROM:TO or a size in bytes, got '{}'", s));
  };
  const auto colon = s.find(':');
  const bool range = colon != std::string::npos;
  const std::size_t from = num(s.substr(0, colon)), to = range ? num(s.substr(colon + 1)) : from;
  if (range && (from == 0 || to < from)) throw UsageError(fmt::format("--sizes {}: need 0 < FROM <= TO", s));
  if (to > kMaxSize) throw UsageError(fmt::format("--sizes {}: sizes are limited to {} bytes", s, kMaxSize));
  if (!range) return {from};
  std::vector<std::size_t> out;
  for (std::size_t x = from; x <= to; x *= 2) out.push_back(x);
  return out;
}

// A machine variant of `sweep --vary`: the spec with options added, as written and why.
struct VariantSpec {
  MachineSpec spec;
  std::string options, why;
};

// The machine variants of `sweep --vary`: each argument adds options to the spec, `open` adds the
// variants the machine's calibration leaves open (touchstone::open_variants). A later option
// overrides the spec's own.
std::vector<VariantSpec> sweep_variants(const MachineSpec& base, const std::vector<std::string>& vary) {
  if (!vary.empty() && base.is_file())
    throw UsageError("--vary adds options to a machine spec; put a machine file's variants in files of their own");
  std::vector<std::pair<std::string, std::string>> added;  // options, why
  for (const auto& v : vary) {
    if (v != "open") {
      added.emplace_back(v, "");
      continue;
    }
    const auto open = open_variants(base);
    if (open.empty())
      throw UsageError(
          fmt::format("--vary open: '{}' is not calibrated against a paper, so no range of its parameters is "
                      "known to be open (docs/machines.md); give variants as --vary KEY=VALUE[,KEY=VALUE...]",
                      base.text()));
    for (const auto& o : open) added.emplace_back(o.options, o.why);
  }
  std::vector<VariantSpec> out;
  for (auto& [options, why] : added) {
    VariantSpec v{base, std::move(options), std::move(why)};
    try {
      v.spec.add_options(v.options);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--vary '{}': {}", v.options, e.what()));
    }
    out.push_back(std::move(v));
  }
  return out;
}

// The program's columns: one, or with `--coll C=all` one per algorithm of C (those without a
// parameter to fill in), each with the --coll options its runs pass to mpirun.
struct ProgramColumn {
  std::string name;
  std::vector<std::string> coll;  // mpirun --coll values
};

std::vector<ProgramColumn> program_columns(const Options& opt) {
  const std::string base = "program:" + std::filesystem::path(opt.program).filename().string();
  std::vector<std::string> fixed;
  std::optional<std::string> every;  // the collective of C=all
  for (const auto& c : opt.coll) {
    const auto eq = c.find('=');
    if (eq != std::string::npos && c.substr(eq + 1) == "all") {
      if (every) throw UsageError("--coll: only one collective can be given as C=all");
      every = c.substr(0, eq);
    } else {
      fixed.push_back(c);
    }
  }
  if (!every) return {{base, fixed}};
  std::vector<ProgramColumn> out;
  for (const auto& [collective, algorithms] : mpi::collective_algorithms()) {
    if (collective != *every) continue;
    for (const auto& a : algorithms) {
      if (a.find('(') != std::string::npos) continue;  // chain(N) and the like need their parameter
      auto coll = fixed;
      coll.push_back(fmt::format("{}={}", collective, a));
      out.push_back({fmt::format("{}[{}={}]", base, collective, a), std::move(coll)});
    }
  }
  if (out.empty())
    throw UsageError(fmt::format("--coll {}=all: no collective '{}' (see mpirun --help)", *every, *every));
  return out;
}

// --args split at spaces, "{size}" in each replaced by the size.
std::vector<std::string> program_command(const Options& opt, std::size_t size) {
  std::vector<std::string> command{std::filesystem::absolute(opt.program).string()};
  std::istringstream words(opt.program_args);
  for (std::string w; words >> w;) {
    for (std::size_t at; (at = w.find("{size}")) != std::string::npos;) w.replace(at, 6, std::to_string(size));
    command.push_back(w);
  }
  return command;
}

// `touchstone mpirun` with the sweep's options that an MPI run has too, up to the program.
std::vector<std::string> mpirun_launcher(const Options& opt, const MachineSpec& spec,
                                         const std::vector<std::string>& coll) {
  const CommonOptions& c = opt.common;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("sweep --program: cannot find the touchstone program itself (/proc/self/exe)");
  std::vector<std::string> l{self.string(),  "mpirun",       "--machine",  spec.text(),
                             "--seed",       std::to_string(c.seed), "--execution", c.execution,
                             "--time-limit", fmt::format("{}", c.time_limit_s)};
  if (c.stack_kb > 0) l.insert(l.end(), {"--stack-kb", std::to_string(c.stack_kb)});
  if (opt.np) l.insert(l.end(), {"--np", std::to_string(opt.np)});
  if (c.phantom) l.push_back("--phantom");
  if (c.host_cores > 0) l.insert(l.end(), {"--host-cores", std::to_string(c.host_cores)});
  if (c.parallel_programs_from_us != RunOptions{}.parallel_programs_from_us)
    l.insert(l.end(), {"--parallel-programs-from-us", fmt::format("{}", c.parallel_programs_from_us)});
  if (!c.eager_limit.empty()) l.insert(l.end(), {"--eager-limit", c.eager_limit});
  for (const auto& v : coll) l.insert(l.end(), {"--coll", v});
  return l;
}

int sweep(const Options& opt, const std::optional<std::string>& sizes_arg, bool algorithms_given) {
  const CommonOptions& c = opt.common;
  const MachineSpec spec = MachineSpec::parse(c.machine);
  const Machine m = build_machine(spec);
  load_plugins(c.plugins);
  const bool program = !opt.program.empty();
  if (!program && (!opt.coll.empty() || opt.np || !opt.program_args.empty()))
    throw UsageError("--coll, --np and --args are options of --program");
  // With --program the catalog's algorithms run only when named.
  const auto algs = program && !algorithms_given ? std::vector<const algorithms::Algorithm*>{}
                                                 : algorithms::select(opt.algorithms);
  // A program without {size} in --args chooses its own sizes: it runs once (per column), size 0.
  const bool sized = opt.program_args.find("{size}") != std::string::npos;
  if (program) {
    if (!std::filesystem::is_regular_file(opt.program))
      throw UsageError(fmt::format("--program {}: no such file", opt.program));
    if (opt.np > m.nodes())
      throw UsageError(fmt::format("--np {}: {} has {} processors", opt.np, m.name, m.nodes()));
    if (!sized && !opt.plot.empty())
      throw UsageError("--plot draws makespan against size: a --program without {size} in --args has no sizes");
    if (!sized && (sizes_arg || !algs.empty()))
      throw UsageError("--program without {size} in --args runs once, at the sizes the program chooses: it takes no "
                       "--sizes and shares no table with --algorithms");
  }
  // Where the results go is checked before the sweep runs, not after.
  experiment::check_output_path(opt.out, "--out");
  if (!opt.plot.empty()) experiment::check_figure_path(opt.plot, "--plot");
  // Without --sizes a sweep runs 16 B .. 16 KB, unless --traffic fixes the size.
  std::optional<std::vector<std::size_t>> given;
  if (sizes_arg)
    given = parse_sizes(*sizes_arg);
  else if (c.traffic.empty() || !algorithms::parse_traffic(c.traffic).fixed())
    given = parse_sizes(kDefaultSizes);
  const auto sizes = program && !sized ? std::vector<std::size_t>{0} : run_sizes(c, algs, given, "--sizes");
  // Every variant is the same sweep on a variant of the spec; all of them run in one batch.
  const auto variant_specs = sweep_variants(spec, opt.vary);
  std::vector<Machine> variant_machines;
  variant_machines.reserve(variant_specs.size());
  for (const auto& v : variant_specs) {
    try {
      variant_machines.push_back(build_machine(v.spec));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--vary '{}': {}", v.options, e.what()));
    }
  }
  std::vector<const Machine*> machines{&m};
  for (const auto& v : variant_machines) machines.push_back(&v);
  // --host-cores N: `jobs` emulations at once (default N), each running its sequential turns on
  // one core, and each free to use all N in its parallel phases (the run-ahead start and the rests
  // after Proc::leave, docs/parallel.md). Those phases are short: on N cores they fill what the
  // other emulations' sequential turns leave idle, where N / jobs cores each left one emulation's
  // phases on one core while another core waited for a job.
  const RunOptions run_opts = run_options(c);
  const int jobs = opt.jobs > 0 ? opt.jobs : run_opts.host_cores;
  const auto program_cols = program ? program_columns(opt) : std::vector<ProgramColumn>{};
  std::vector<std::string> columns;
  for (auto* a : algs) columns.push_back(a->name);
  for (const auto& p : program_cols) columns.push_back(p.name);
  std::vector<experiment::Job> batch;
  for (std::size_t k = 0; k < machines.size(); ++k) {
    const Machine* on = machines[k];
    for (auto* a : algs)
      for (auto s : sizes) batch.push_back({on, a, algorithm_args(c, s), run_opts, std::nullopt});
    for (const auto& p : program_cols) {
      const auto launcher = mpirun_launcher(opt, k == 0 ? spec : variant_specs[k - 1].spec, p.coll);
      for (auto s : sizes) {
        experiment::Job job;
        job.machine = on;
        job.args.size = s;
        job.options = run_opts;
        job.program = experiment::ProgramRun{p.name, launcher, program_command(opt, s), opt.np ? opt.np : on->nodes()};
        batch.push_back(std::move(job));
      }
    }
  }
  const auto outcomes =
      experiment::run_jobs(batch, {.parallel = jobs, .memory_mb = opt.memory_mb, .progress = true});
  int failures = 0;
  std::vector<const experiment::Record*> records;
  for (const auto& o : outcomes) {
    if (o.record)
      records.push_back(&*o.record);
    else
      fmt::print(stderr, "error: {} size {} on {}: {}\n", o.job->column(), o.job->args.size,
                 o.job->machine->name, o.error),
          ++failures;
  }
  // The preset's runs come first in the batch, each variant's after them, in the same order.
  const std::size_t per_machine = columns.size() * sizes.size();
  const std::vector<experiment::Outcome> base(outcomes.begin(),
                                              outcomes.begin() + static_cast<std::ptrdiff_t>(per_machine));
  std::vector<experiment::Variant> variants;
  for (std::size_t k = 0; k < variant_specs.size(); ++k) {
    const auto from = outcomes.begin() + static_cast<std::ptrdiff_t>((k + 1) * per_machine);
    variants.push_back(
        {variant_specs[k].options, variant_specs[k].why, {from, from + static_cast<std::ptrdiff_t>(per_machine)}});
  }
  const auto evidence = ranking_evidence(spec);
  std::string text = experiment::makespan_table(m, columns, sizes, base, evidence ? &*evidence : nullptr);
  if (!variants.empty()) text += "\n" + experiment::winner_stability_table(sizes, base, variants);
  experiment::write_output(opt.out, c.format == "json"  ? experiment::records_json(records)
                                    : c.format == "csv" ? experiment::records_csv(records)
                                                        : text);
  if (!opt.plot.empty()) {
    std::vector<const experiment::Record*> base_records;
    for (const auto& o : base)
      if (o.record) base_records.push_back(&*o.record);
    experiment::plot(experiment::records_csv(base_records), opt.plot, evidence ? &*evidence : nullptr);
  }
  return failures ? 2 : 0;
}

}  // namespace

Subcommand add_sweep(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("sweep", "run algorithms x sizes in parallel and print a table, winners marked");
  add_common_options(cmd, o->common);
  cmd->add_option("--algorithms", o->algorithms, "comma-separated names, or COLLECTIVE/all")->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "FROM:TO, doubling, or one size; for alltoallv/ the traffic per processor t")
      ->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "parallel emulations (default: --host-cores)")->check(number_in(1, 4096));
  cmd->add_option("--memory-mb", o->memory_mb,
                  "host memory the parallel jobs may share, by their estimates (default: the largest job's, at least an eighth of the host's)")
      ->check(number_in(1e-6, 1e12));
  cmd->add_option("--out", o->out, "write the output to this file instead of stdout");
  cmd->add_option(
      "--vary", o->vary,
      "also run the sweep with these machine options added (KEY=VALUE[,KEY=VALUE...], repeatable; open: every "
      "variant the machine's calibration leaves open, docs/machines.md) and say whether each size's winner holds");
  cmd->add_option("--program", o->program,
                  "also run this MPI program (built with touchstone-mpicc) at every size, as a column "
                  "program:NAME; with it, catalog algorithms run only when --algorithms names them");
  cmd->add_option("--args", o->program_args,
                  "the program's arguments, split at spaces, {size} replaced by the size; without {size} the "
                  "program runs once and chooses its own sizes");
  cmd->add_option("-n,--np", o->np, "--program: MPI processes (default: every VP)")->check(number_in(1, 1 << 24));
  cmd->add_option("--coll", o->coll,
                  "--program: collective algorithms as mpirun --coll COLL=ALG,...; COLL=all runs the program "
                  "once per algorithm of COLL, a column each")
      ->allow_extra_args(false);
  cmd->add_option("--plot", o->plot,
                  "also draw makespan against size per algorithm, log-log, winners ringed (.png, .svg or .pdf)");
  return Subcommand{
      cmd, [o, cmd] {
        return sweep(*o, cmd->count("--sizes") ? std::optional<std::string>(o->sizes) : std::nullopt,
                     cmd->count("--algorithms") > 0);
      }};
}

void normalize_sweep_args(int argc, char** argv) {
  static char np[] = "--np";
  if (argc < 2 || std::string(argv[1]) != "sweep") return;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--args") ++i;  // the program's own arguments stay as given
    else if (std::string(argv[i]) == "-np") argv[i] = np;
  }
}

}  // namespace touchstone::cli
