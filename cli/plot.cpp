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
  std::vector<std::string> csvs;  // the first CSV, then: more CSVs and the figure, last
  std::string figure;
};

int plot(Options o) {
  o.figure = o.csvs.back();
  o.csvs.pop_back();
  for (std::size_t i = 1; i < o.csvs.size(); ++i)
    if (const std::string why = CLI::ExistingFile(o.csvs[i]); !why.empty()) throw UsageError("csv: " + why);
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
  // CLI11 gives a list of positionals all it can take: the CSVs and the figure are one list, the
  // first CSV checked as CLI11 checks a file, the figure the last.
  auto first = std::make_shared<std::string>();
  cmd->add_option("csv", *first, "the CSV that sweep --format csv wrote")->required()->check(CLI::ExistingFile);
  cmd->add_option("more", o->csvs,
                  "more CSVs (their runs are put together; the first machine's are drawn), then the figure to "
                  "write: .png, .svg or .pdf")
      ->required()
      ->expected(1, -1);
  return Subcommand{cmd, [o, first] {
                      Options all = *o;
                      all.csvs.insert(all.csvs.begin(), *first);
                      return plot(std::move(all));
                    }};
}

}  // namespace touchstone::cli
