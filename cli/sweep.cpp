// `touchstone sweep`: algorithms x sizes in parallel, a table with the winner of each size marked,
// and with --vary the same sweep on machine variants (docs/cli.md).
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/common_options.hpp"
#include "cli/numeric_option.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/touchstone.hpp"

namespace touchstone::cli {

namespace {

constexpr std::size_t kMaxSize = std::size_t{1} << 30;
constexpr const char* kDefaultSizes = "16:16384";  // when --sizes is not given

struct Options {
  CommonOptions common;
  std::string algorithms = "alltoall/all", sizes = kDefaultSizes, out, plot;
  std::vector<std::string> vary;
  int jobs = 0;
  double memory_mb = 0;
};

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

int sweep(const Options& opt, const std::optional<std::string>& sizes_arg) {
  const CommonOptions& c = opt.common;
  const MachineSpec spec = MachineSpec::parse(c.machine);
  const Machine m = build_machine(spec);
  const auto algs = algorithms::select(opt.algorithms);
  // Where the results go is checked before the sweep runs, not after.
  experiment::check_output_path(opt.out, "--out");
  if (!opt.plot.empty()) experiment::check_figure_path(opt.plot, "--plot");
  // Without --sizes a sweep runs 16 B .. 16 KB, unless --traffic fixes the size.
  std::optional<std::vector<std::size_t>> given;
  if (sizes_arg)
    given = parse_sizes(*sizes_arg);
  else if (c.traffic.empty() || !algorithms::parse_traffic(c.traffic).fixed())
    given = parse_sizes(kDefaultSizes);
  const auto sizes = run_sizes(c, algs, given, "--sizes");
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
  // --host-cores N is split: `jobs` emulations at once (default N), each with N / jobs cores.
  RunOptions run_opts = run_options(c);
  const int jobs = opt.jobs > 0 ? opt.jobs : run_opts.host_cores;
  run_opts.host_cores = std::max(1, run_opts.host_cores / jobs);
  std::vector<experiment::Job> batch;
  for (const Machine* on : machines)
    for (auto* a : algs)
      for (auto s : sizes) batch.push_back({on, a, algorithm_args(c, s), run_opts});
  const auto outcomes = experiment::run_jobs(batch, {.parallel = jobs, .memory_mb = opt.memory_mb, .progress = true});
  int failures = 0;
  std::vector<const experiment::Record*> records;
  for (const auto& o : outcomes) {
    if (o.record)
      records.push_back(&*o.record);
    else
      fmt::print(stderr, "error: {} size {} on {}: {}\n", o.job->algorithm->name, o.job->args.size,
                 o.job->machine->name, o.error),
          ++failures;
  }
  // The preset's runs come first in the batch, each variant's after them, in the same order.
  const std::size_t per_machine = algs.size() * sizes.size();
  const std::vector<experiment::Outcome> base(outcomes.begin(),
                                              outcomes.begin() + static_cast<std::ptrdiff_t>(per_machine));
  std::vector<experiment::Variant> variants;
  for (std::size_t k = 0; k < variant_specs.size(); ++k) {
    const auto from = outcomes.begin() + static_cast<std::ptrdiff_t>((k + 1) * per_machine);
    variants.push_back(
        {variant_specs[k].options, variant_specs[k].why, {from, from + static_cast<std::ptrdiff_t>(per_machine)}});
  }
  const auto evidence = ranking_evidence(spec);
  std::string text = experiment::makespan_table(m, algs, sizes, base, evidence ? &*evidence : nullptr);
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
                  "host memory the parallel jobs may share, by their estimates (default: the largest job's)")
      ->check(number_in(1e-6, 1e12));
  cmd->add_option("--out", o->out, "write the output to this file instead of stdout");
  cmd->add_option(
      "--vary", o->vary,
      "also run the sweep with these machine options added (KEY=VALUE[,KEY=VALUE...], repeatable; open: every "
      "variant the machine's calibration leaves open, docs/machines.md) and say whether each size's winner holds");
  cmd->add_option("--plot", o->plot,
                  "also draw makespan against size per algorithm, log-log, winners ringed (.png, .svg or .pdf)");
  return Subcommand{
      cmd, [o, cmd] { return sweep(*o, cmd->count("--sizes") ? std::optional<std::string>(o->sizes) : std::nullopt); }};
}

}  // namespace touchstone::cli
