// `touchstone plot CSV FIGURE`: draws a saved sweep (sweep --format csv) as sweep --plot would.
#include <fstream>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "touchstone/error.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::cli {

namespace {

struct Options {
  std::string csv, figure;
};

// The ranking evidence of the machine of a sweep's CSV (its first run's, the preset's when the
// sweep had variants: they come after it); none when the CSV has no run or its machine is a file
// or no family's. The CSV holds the machine's name only, so its spec is read back from there
// (sweep --plot passes the evidence of the spec it parsed instead).
std::optional<RankingEvidence> ranking_evidence_of_csv(const std::string& csv) {
  const auto row = csv.find('\n');
  if (row == std::string::npos || row + 1 >= csv.size()) return std::nullopt;
  const auto fields = experiment::csv_fields(csv.substr(row + 1, csv.find('\n', row + 1) - row - 1));
  const std::string machine = fields.empty() ? "" : fields[0];
  if (machine.empty()) return std::nullopt;
  try {
    return ranking_evidence(MachineSpec::parse(machine));
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

int plot(const Options& o) {
  experiment::check_figure_path(o.figure, "figure");
  std::ifstream in(o.csv);
  std::stringstream text;
  text << in.rdbuf();
  const auto evidence = ranking_evidence_of_csv(text.str());
  experiment::plot(text.str(), o.figure, evidence ? &*evidence : nullptr, o.csv);
  return 0;
}

}  // namespace

Subcommand add_plot(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("plot", "draw a sweep's CSV (sweep --format csv) as makespan against size per algorithm");
  cmd->add_option("csv", o->csv, "the CSV that sweep --format csv wrote")->required()->check(CLI::ExistingFile);
  cmd->add_option("figure", o->figure, "the figure to write: .png, .svg or .pdf")->required();
  return Subcommand{cmd, [o] { return plot(*o); }};
}

}  // namespace touchstone::cli
