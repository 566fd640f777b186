#include "tools/cli.hpp"

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "algorithms/harness.hpp"
#include "algorithms/permutations.hpp"
#include "algorithms/registry.hpp"
#include "tools/debug_options.hpp"
#include "tools/diff.hpp"
#include "tools/numeric_option.hpp"
#include "tools/parse_command_line.hpp"
#include "tools/experiment/experiment.hpp"
#include "tools/mpirun.hpp"
#include "touchstone/touchstone.hpp"

namespace touchstone::cli {

namespace {

constexpr std::size_t kMaxSize = std::size_t{1} << 30;
constexpr const char* kDefaultSizes = "16:16384";  // sweep's sizes when --sizes is not given


// Parses FROM:TO (doubling) or a single size.
std::vector<std::size_t> parse_sizes(const std::string& s) {
  auto num = [&](const std::string& v) -> std::size_t {
    std::size_t pos = 0;
    unsigned long long x = 0;
    try {
      x = std::stoull(v, &pos);
    } catch (...) {
      pos = 0;
    }
    if (v.empty() || pos != v.size() || v[0] == '-')
      throw UsageError(fmt::format("--sizes: expected FROM:TO or a size in bytes, got '{}'", s));
    return x;
  };
  const auto colon = s.find(':');
  if (colon == std::string::npos) return {num(s)};
  const std::size_t from = num(s.substr(0, colon)), to = num(s.substr(colon + 1));
  if (from == 0 || to < from) throw UsageError(fmt::format("--sizes {}: need 0 < FROM <= TO", s));
  if (to > kMaxSize) throw UsageError(fmt::format("--sizes {}: sizes are limited to {} bytes", s, kMaxSize));
  std::vector<std::size_t> out;
  for (std::size_t x = from; x <= to; x *= 2) out.push_back(x);
  return out;
}

struct Common {
  std::string machine = "mesh:16x16";
  int root = 0;
  std::uint64_t seed = 1;
  std::string format = "table";
  bool phantom = false;
  double time_limit_s = 3600;
  std::size_t stack_kb = 1024;
  std::string execution = "fibers";
  int host_cores = 0;
  std::string traffic;  // paper 003: the communication matrix of alltoallv/ algorithms
  std::string eager_limit;  // overrides the machine's eager_limit (docs/model.md 2.16)
};

void add_common(CLI::App* cmd, Common& c) {
  cmd->add_option("--machine", c.machine, "machine spec, e.g. mesh:16x16 (touchstone list machines)")->capture_default_str();
  cmd->add_option("--root", c.root, "source or destination processor of rooted collectives")
      ->check(number_in(0, std::numeric_limits<int>::max()))->capture_default_str();
  cmd->add_option("--traffic", c.traffic,
                  "communication matrix of alltoallv/ algorithms: k=K,l=L,t=BYTES (paper 003, section 7) or file=M.csv");
  cmd->add_option("--seed", c.seed, "seed of every random choice of the model and algorithms")
      ->check(number_in<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))->capture_default_str();
  cmd->add_option("--format", c.format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}))->capture_default_str();
  cmd->add_flag("--phantom", c.phantom, "phantom payloads: sizes only, no bytes copied or checked");
  cmd->add_option("--time-limit", c.time_limit_s, "virtual seconds after which a run is stopped as an error")
      ->check(time_limit_seconds())->capture_default_str();
  cmd->add_option("--execution", c.execution, "how VPs run: fibers (fast) or threads (one OS thread per VP); results are identical")
      ->check(CLI::IsMember({"fibers", "threads"}))->capture_default_str();
  cmd->add_option("--host-cores", c.host_cores, "with --execution threads: pin the VP threads to host cores 0..N-1")
      ->check(number_in(0, 4096));
  cmd->add_option("--eager-limit", c.eager_limit,
                  "flow control (docs/model.md 2.16): messages above BYTES go by rendezvous; unlimited (only a full "
                  "buffer= does), or off; overrides the machine's eager_limit");
  cmd->add_option("--stack-kb", c.stack_kb, "host stack of each VP thread (KiB)")->check(number_in<std::size_t>(64, 1 << 20))->capture_default_str();
}

RunOptions run_options(const Common& c) {
  RunOptions o;
  o.seed = c.seed;
  o.phantom_payloads = c.phantom;
  o.time_limit = time_limit_ps(c.time_limit_s);
  o.stack_bytes = c.stack_kb * 1024;
  o.execution = c.execution == "threads" ? Execution::threads : Execution::fibers;
  o.host_cores = c.host_cores;
  o.eager_limit = eager_limit_bytes(c.eager_limit);
  return o;
}

// The message size of an alltoallv/ run is its traffic per processor t (docs/algorithms.md): a
// --traffic without t= takes it from the size, so `sweep --sizes` sweeps the traffic.
algorithms::Args algorithm_args(const Common& c, std::size_t size) {
  algorithms::Args args{size, c.root, !c.phantom};
  if (!c.traffic.empty()) {
    args.traffic = algorithms::parse_traffic(c.traffic);
    if (!args.traffic.fixed()) args.traffic.t = static_cast<std::int64_t>(size);
  }
  return args;
}

// The sizes a run or sweep runs: `given` (from `flag`) checked against --traffic. A --traffic that
// fixes the matrix (t= or file=) fixes the size too: every size of a sweep would run the same
// matrix under a different label, so a size that disagrees is refused rather than printed.
std::vector<std::size_t> run_sizes(const Common& c, const std::vector<const algorithms::Algorithm*>& algs,
                                   const std::optional<std::vector<std::size_t>>& given, const std::string& flag) {
  if (c.traffic.empty()) {
    if (!given) throw UsageError(fmt::format("{} is required (see touchstone run --help)", flag));
    return *given;
  }
  for (const auto* a : algs)
    if (!a->name.starts_with("alltoallv/"))
      throw UsageError(fmt::format("--traffic is the communication matrix of alltoallv/ algorithms; {} takes none", a->name));
  const algorithms::TrafficSpec spec = algorithms::parse_traffic(c.traffic);
  if (!spec.fixed()) {
    if (!given)
      throw UsageError(fmt::format("--traffic {} gives no t: give the traffic per processor as t=BYTES or with {}", c.traffic, flag));
    return *given;
  }
  if (!spec.file.empty()) {
    if (given) throw UsageError(fmt::format("--traffic file= fixes every message; {} does not apply", flag));
    return {0};
  }
  const auto t = static_cast<std::size_t>(spec.t);
  if (given && *given != std::vector<std::size_t>{t})
    throw UsageError(fmt::format("{} and --traffic t={} disagree: the traffic per processor is the run's size; give it once "
                                 "(leave t= out to take it from {})",
                                 flag, t, flag));
  return {t};
}

int cmd_list(const std::string& what) {
  if (what == "machines") {
    for (const auto& [k, v] : machine_presets()) fmt::print("{:<24} {}\n", k, v);
  } else {
    for (const auto& a : algorithms::catalog()) fmt::print("{:<26} {}\n", a.name, a.summary);
  }
  return 0;
}

int cmd_run(const Common& c, const std::string& algorithm, std::optional<std::size_t> given_size,
            const DebugOptions& debug, double wall_limit_s) {
  const Machine m = parse_machine(c.machine);
  const auto& alg = algorithms::find(algorithm);
  std::optional<std::vector<std::size_t>> given;
  if (given_size) given = std::vector<std::size_t>{*given_size};
  const std::size_t size = run_sizes(c, {&alg}, given, "--size").front();
  RunOptions o = run_options(c);
  o.wall_limit_s = wall_limit_s;
  o.stop_on_signals = true;
  o.progress_line = true;
  apply_debug_options(debug, o);
  const algorithms::Args args = algorithm_args(c, size);
  experiment::Record r = experiment::emulate(m, alg, args, o);
  const Findings findings = debug_findings(debug, m, [&alg, args](Proc& p) { alg.program(p, args); }, o, r.result);
  if (!debug.races.empty()) r.races = r.result.races.size();
  const std::vector<const experiment::Record*> one{&r};
  experiment::write_output("", c.format == "json"  ? experiment::record_json(r)
                               : c.format == "csv" ? experiment::records_csv(one)
                                                   : experiment::record_lines(r));
  fmt::print(stderr, "{}", findings.text);
  return findings.other_outcomes ? 3 : 0;
}

// The machine variants of `sweep --vary`: each argument adds options to the spec, `open` adds the
// variants the machine's calibration leaves open (touchstone::open_variants).
std::vector<std::pair<std::string, std::string>> sweep_variants(const std::string& spec, const std::vector<std::string>& vary) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& v : vary) {
    if (v != "open") {
      out.emplace_back(v, "");
      continue;
    }
    const auto open = open_variants(spec);
    if (open.empty())
      throw UsageError(fmt::format("--vary open: '{}' is not calibrated against a paper, so no range of its parameters is "
                                   "known to be open (docs/machines.md); give variants as --vary KEY=VALUE[,KEY=VALUE...]",
                                   spec));
    for (const auto& o : open) out.emplace_back(o.options, o.why);
  }
  return out;
}

// The ranking evidence of the machine of a sweep's CSV (its first run's, the preset's when the
// sweep had variants: they come after it), for `touchstone plot`; none when the CSV has no run or
// its machine is a file or no family's.
std::optional<RankingEvidence> ranking_evidence_of_csv(const std::string& csv) {
  const auto row = csv.find('\n');
  if (row == std::string::npos || row + 1 >= csv.size()) return std::nullopt;
  const auto fields = experiment::csv_fields(csv.substr(row + 1, csv.find('\n', row + 1) - row - 1));
  const std::string machine = fields.empty() ? "" : fields[0];
  if (machine.empty() || is_machine_file(machine)) return std::nullopt;
  try {
    return ranking_evidence(machine);
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

int cmd_sweep(const Common& c, const std::string& list, const std::optional<std::string>& sizes_arg, int jobs,
              double memory_mb, const std::string& out_path, const std::string& plot_path,
              const std::vector<std::string>& vary) {
  const Machine m = parse_machine(c.machine);
  const auto algs = algorithms::select(list);
  // Where the results go is checked before the sweep runs, not after.
  experiment::check_output_path(out_path, "--out");
  if (!plot_path.empty()) experiment::check_figure_path(plot_path, "--plot");
  // Without --sizes a sweep runs 16 B .. 16 KB, unless --traffic fixes the size.
  std::optional<std::vector<std::size_t>> given;
  if (sizes_arg) given = parse_sizes(*sizes_arg);
  else if (c.traffic.empty() || !algorithms::parse_traffic(c.traffic).fixed()) given = parse_sizes(kDefaultSizes);
  const auto sizes = run_sizes(c, algs, given, "--sizes");
  // Every variant is the same sweep on the spec with the variant's options added (a later option
  // overrides the spec's own); all of them run in one batch.
  if (!vary.empty() && is_machine_file(c.machine))
    throw UsageError("--vary adds options to a machine spec; put a machine file's variants in files of their own");
  const auto variant_specs = sweep_variants(c.machine, vary);
  std::vector<Machine> variant_machines;
  variant_machines.reserve(variant_specs.size());
  for (const auto& [options, why] : variant_specs) {
    try {
      variant_machines.push_back(parse_machine(c.machine + "," + options));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--vary '{}': {}", options, e.what()));
    }
  }
  std::vector<const Machine*> machines{&m};
  for (const auto& v : variant_machines) machines.push_back(&v);
  std::vector<experiment::Job> batch;
  for (const Machine* on : machines)
    for (auto* a : algs)
      for (auto s : sizes) batch.push_back({on, a, algorithm_args(c, s), run_options(c)});
  const auto outcomes = experiment::run_jobs(batch, {.parallel = jobs, .memory_mb = memory_mb, .progress = true});
  int failures = 0;
  std::vector<const experiment::Record*> records;
  for (const auto& o : outcomes) {
    if (o.record) records.push_back(&*o.record);
    else fmt::print(stderr, "error: {} size {} on {}: {}\n", o.job->algorithm->name, o.job->args.size, o.job->machine->name, o.error), ++failures;
  }
  // The preset's runs come first in the batch, each variant's after them, in the same order.
  const std::size_t per_machine = algs.size() * sizes.size();
  const std::vector<experiment::Outcome> base(outcomes.begin(), outcomes.begin() + static_cast<std::ptrdiff_t>(per_machine));
  std::vector<experiment::Variant> variants;
  for (std::size_t k = 0; k < variant_specs.size(); ++k) {
    const auto from = outcomes.begin() + static_cast<std::ptrdiff_t>((k + 1) * per_machine);
    variants.push_back({variant_specs[k].first, variant_specs[k].second, {from, from + static_cast<std::ptrdiff_t>(per_machine)}});
  }
  const auto evidence = is_machine_file(c.machine) ? std::nullopt : ranking_evidence(c.machine);
  std::string text = experiment::makespan_table(m, algs, sizes, base, evidence ? &*evidence : nullptr);
  if (!variants.empty()) text += "\n" + experiment::winner_stability_table(sizes, base, variants);
  experiment::write_output(out_path, c.format == "json"  ? experiment::records_json(records)
                                     : c.format == "csv" ? experiment::records_csv(records)
                                                         : text);
  if (!plot_path.empty()) {
    std::vector<const experiment::Record*> base_records;
    for (const auto& o : base)
      if (o.record) base_records.push_back(&*o.record);
    experiment::plot(experiment::records_csv(base_records), plot_path, evidence ? &*evidence : nullptr);
  }
  return failures ? 2 : 0;
}

// Paper 000, section 5.1: max_load and sum_load of the linear, exclusive-or and balanced
// permutation schedules of the whole machine, routed by the machine's own route function. Beside
// them, on a square mesh whose side is a multiple of 4, the figures the paper states.
int cmd_loads(const std::string& machine, const std::string& format) {
  const Machine m = parse_machine(machine);
  const int p = m.nodes();
  const auto dims = m.topology->dims();
  const bool paper = dims.size() == 2 && dims[0] == dims[1] && dims[0] % 4 == 0;
  const double side = paper ? dims[0] : 0, p32 = side * side * side;
  struct Row {
    std::string name;
    std::vector<int> shape;
    double paper_max, paper_sum;  // 0: the paper gives no figure
  };
  const std::vector<Row> rows{{"linear", {p}, side / 2, 0},
                              {"xor", {p}, side / 2, 3.0 / 7.0 * p32},
                              {"balanced", dims.empty() ? std::vector<int>{p} : dims, side / 4, p32 / 4}};
  nlohmann::json arr = nlohmann::json::array();
  std::string text = fmt::format("{} ({} processors): link loads of permutation schedules (paper 000, sec. 5.1)\n",
                                 m.name, p);
  text += fmt::format("{:<10} {:>12} {:>9} {:>10} {:>15} {:>15}\n", "schedule", "permutations", "max_load", "sum_load",
                      "paper max_load", "paper sum_load");
  std::string csv = "machine,schedule,permutations,max_load,sum_load,paper_max_load,paper_sum_load\n";
  auto fig = [](double x) { return x > 0 ? fmt::format("{:g}", x) : std::string("-"); };
  for (const auto& r : rows) {
    const auto& s = algorithms::shared_schedule(r.name, r.shape);
    const auto l = algorithms::schedule_loads(s, *m.topology);
    text += fmt::format("{:<10} {:>12} {:>9} {:>10} {:>15} {:>15}\n", r.name, s.size(), l.max_load, l.sum_load,
                        fig(r.paper_max), fig(r.paper_sum));
    csv += experiment::csv_line({m.name, r.name, std::to_string(s.size()), std::to_string(l.max_load),
                                 std::to_string(l.sum_load), r.paper_max > 0 ? fig(r.paper_max) : "",
                                 r.paper_sum > 0 ? fig(r.paper_sum) : ""});
    nlohmann::json j{{"machine", m.name},          {"schedule", r.name},       {"vps", p},
                     {"permutations", s.size()},   {"max_load", l.max_load},   {"sum_load", l.sum_load},
                     {"per_permutation", l.per_permutation}};
    j["paper_max_load"] = r.paper_max > 0 ? nlohmann::json(r.paper_max) : nlohmann::json(nullptr);
    j["paper_sum_load"] = r.paper_sum > 0 ? nlohmann::json(r.paper_sum) : nlohmann::json(nullptr);
    arr.push_back(std::move(j));
  }
  if (paper)
    text += fmt::format("lower bounds for any partition (paper, [13]): max_load >= {:g}, sum_load >= {:g}\n", side / 4,
                        p32 / 4);
  fmt::print("{}", format == "json" ? arr.dump(2) + "\n" : format == "csv" ? csv : text);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Emulations allocate and free large payload buffers run after run: keep freed memory in the
  // process for the next run instead of returning it to the kernel and faulting it in again.
  // Buffers up to 32 MiB come from the heap, and the heap is never trimmed (-1): with a threshold
  // (it was 1 GiB) glibc gives the heap's free top back whenever that much lies free above the
  // last block in use, which in a sweep depends on what the other thread's job holds at that
  // moment, and the next job faults it all in again, a trap per 4 KiB page (docs/performance.md,
  // "Memory": not seen in the measured sweeps, but the one way their heap could go back). The
  // process keeps its largest heap until it exits: the peak is
  // unchanged, it is only not given back early.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, -1);
  mallopt(M_ARENA_MAX, 1);
  CLI::App app{"Touchstone: emulates distributed-memory parallel machines on one workstation, in exact virtual time"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "touchstone 0.1.0");

  std::string list_what;
  auto* list = app.add_subcommand("list", "list machines or algorithms");
  list->add_option("what", list_what, "machines or algorithms")->required()->check(CLI::IsMember({"machines", "algorithms"}));

  Common run_c;
  std::string algorithm;
  long long size = 0;
  DebugOptions run_debug;
  auto* runc = app.add_subcommand("run", "run one algorithm on one machine and print its figures");
  add_common(runc, run_c);
  runc->add_option("--algorithm", algorithm, "COLLECTIVE/NAME (touchstone list algorithms)")->required();
  runc->add_option("--size", size,
                   "actual message size L in bytes (0 .. 2^30); for alltoallv/ the traffic per processor t, unless --traffic "
                   "gives t= or file=")
      ->check(number_in(0LL, 1LL << 30));
  add_debug_options(runc, run_debug);
  double run_wall_limit_s = 600;
  runc->add_option("--wall-limit", run_wall_limit_s,
                   "host seconds the run may go without progress before it is ended, naming the VP running and its "
                   "stack; 0: no limit")
      ->check(number_in(0.0, 1e9))->capture_default_str();

  Common sweep_c;
  std::string algs = "alltoall/all", sizes = kDefaultSizes, out;
  std::vector<std::string> vary;
  int jobs = 0;
  double memory_mb = 0;
  auto* sweep = app.add_subcommand("sweep", "run algorithms x sizes in parallel and print a table, winners marked");
  add_common(sweep, sweep_c);
  sweep->add_option("--algorithms", algs, "comma-separated names, or COLLECTIVE/all")->capture_default_str();
  sweep->add_option("--sizes", sizes, "FROM:TO, doubling, or one size; for alltoallv/ the traffic per processor t")
      ->capture_default_str();
  sweep->add_option("--jobs", jobs, "parallel emulations (default: host cores)")->check(number_in(1, 4096));
  sweep->add_option("--memory-mb", memory_mb, "host memory the parallel jobs may share, by their estimates (default: the largest job's)")
      ->check(number_in(1e-6, 1e12));
  sweep->add_option("--out", out, "write the output to this file instead of stdout");
  sweep->add_option("--vary", vary,
                    "also run the sweep with these machine options added (KEY=VALUE[,KEY=VALUE...], repeatable; open: every "
                    "variant the machine's calibration leaves open, docs/machines.md) and say whether each size's winner holds");
  std::string plot_out;
  sweep->add_option("--plot", plot_out, "also draw makespan against size per algorithm, log-log, winners ringed (.png, .svg or .pdf)");

  std::string plot_csv, plot_figure;
  auto* plotc = app.add_subcommand("plot", "draw a sweep's CSV (sweep --format csv) as makespan against size per algorithm");
  plotc->add_option("csv", plot_csv, "the CSV that sweep --format csv wrote")->required()->check(CLI::ExistingFile);
  plotc->add_option("figure", plot_figure, "the figure to write: .png, .svg or .pdf")->required();

  std::string loads_machine = "mesh:16x16", loads_format = "table";
  auto* loads = app.add_subcommand(
      "loads",
      "max_load and sum_load of the linear, xor and balanced permutation schedules (paper 000, sec. 5.1): the\n"
      "load of a directed link in a permutation is the number of its messages routed over that link; load(Pi)\n"
      "is the largest over the links; max_load is the largest over the permutations, sum_load their sum");
  loads->add_option("--machine", loads_machine, "machine spec, e.g. mesh:16x16 (touchstone list machines)")->capture_default_str();
  loads->add_option("--format", loads_format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}))->capture_default_str();

  const Subcommand mpirun = add_mpirun(app);  // tools/mpirun.cpp

  std::string diff_a, diff_b;
  std::vector<std::string> diff_specs;
  auto* diff = app.add_subcommand("diff", "the first divergence per VP between two order logs (--order-log), or two runs "
                                          "(--run twice): the first receive matched differently, the first time that "
                                          "differs and by how much; for runs also their outcomes and figures");
  auto* diff_files = diff->add_option("A", diff_a, "order log of the first run")->check(CLI::ExistingFile);
  diff->add_option("B", diff_b, "order log of the second run")->check(CLI::ExistingFile);
  diff->add_option("--run", diff_specs, "a touchstone command line, e.g. \"run --machine mesh:2x2 --algorithm "
                                        "alltoall/1-lev-dir --size 64\" or \"mpirun --machine mesh:2x2 ./prog\"; give two")
      ->excludes(diff_files);

  // CLI11 only says "A subcommand is required" for a misspelled command: name it and the known ones.
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      found |= sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      fmt::print(stderr, "error: unknown command '{}' (known: {}; see --help)\n", argv[1], known);
      return 1;
    }
  }
  normalize_mpirun_args(argc, argv);
  if (const auto code = parse_command_line(app, argc, argv)) return *code;
  try {
    if (*list) return cmd_list(list_what);
    if (*runc)
      return cmd_run(run_c, algorithm,
                     runc->count("--size") ? std::optional<std::size_t>(static_cast<std::size_t>(size)) : std::nullopt,
                     run_debug, run_wall_limit_s);
    if (*sweep)
      return cmd_sweep(sweep_c, algs, sweep->count("--sizes") ? std::optional<std::string>(sizes) : std::nullopt, jobs,
                       memory_mb, out, plot_out, vary);
    if (*plotc) {
      experiment::check_figure_path(plot_figure, "figure");
      std::ifstream in(plot_csv);
      std::stringstream text;
      text << in.rdbuf();
      const auto evidence = ranking_evidence_of_csv(text.str());
      experiment::plot(text.str(), plot_figure, evidence ? &*evidence : nullptr, plot_csv);
      return 0;
    }
    if (*loads) return cmd_loads(loads_machine, loads_format);
    if (*mpirun.app) return mpirun.run();
    if (*diff) {
      auto read = [](const std::string& path) {
        std::ifstream f(path);
        std::stringstream s;
        s << f.rdbuf();
        return s.str();
      };
      bool differ = false;
      if (!diff_specs.empty() || diff_a.empty() || diff_b.empty()) {
        if (diff_specs.size() != 2)
          throw UsageError(fmt::format("diff takes two order logs, or --run twice ({} given)", diff_specs.size()));
        fmt::print("{}", diff_runs(diff_specs[0], diff_specs[1], std::filesystem::canonical("/proc/self/exe").string(), differ));
      } else {
        fmt::print("{}", diff_order_logs(read(diff_a), read(diff_b), diff_a, diff_b, differ));
      }
      return differ ? 3 : 0;
    }
  } catch (const std::exception& e) {
    return report_failure(e);
  }
  return 0;
}

}  // namespace touchstone::cli
