// `touchstone plot CSV... FIGURE`: draws saved sweeps (sweep --format csv) as sweep --plot would.
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/saved_sweeps.hpp"
#include "touchstone/error.hpp"
#include "touchstone/experiment/experiment.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::cli {

namespace {

struct Options {
  std::vector<std::string> csvs;
  std::string figure;
};

int plot(const Options& o) {
  experiment::check_figure_path(o.figure, "figure");
  if (o.csvs.size() == 1) {  // as written: the script checks it and says what is wrong, by line
    std::ifstream in(o.csvs[0]);
    std::stringstream text;
    text << in.rdbuf();
    const auto row = experiment::csv_fields(text.str().substr(text.str().find('\n') + 1));
    const auto evidence = ranking_evidence_of(text.str().find('\n') == std::string::npos || row.empty() ? "" : row[0]);
    experiment::plot(text.str(), o.figure, evidence ? &*evidence : nullptr, o.csvs[0]);
    return 0;
  }
  // Several files: their runs put together (read_saved_sweeps); the script draws the first machine's.
  const auto records = read_saved_sweeps(o.csvs);
  std::vector<const experiment::Record*> all;
  for (const auto& r : records) all.push_back(&r);
  // The machine's spec is its name in the CSV (sweep --plot passes the evidence of the spec it parsed).
  const auto evidence = ranking_evidence_of(records.empty() ? "" : records[0].machine);
  experiment::plot(experiment::records_csv(all), o.figure, evidence ? &*evidence : nullptr,
                   fmt::format("{}", fmt::join(o.csvs, ", ")));
  return 0;
}

}  // namespace

Subcommand add_plot(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("plot", "draw a sweep's CSV (sweep --format csv) as makespan against size per algorithm");
  cmd->add_option("csv", o->csvs, "the CSVs that sweep --format csv wrote (the first machine's runs are drawn)")
      ->required()
      ->expected(1, -1)
      ->check(CLI::ExistingFile);
  cmd->add_option("figure", o->figure, "the figure to write: .png, .svg or .pdf")->required();
  return Subcommand{cmd, [o] { return plot(*o); }};
}

}  // namespace touchstone::cli
