// `touchstone table CSV...`: the winner table of saved sweeps (sweep --format csv), one per machine,
// rows sizes, columns the algorithms and programs of every file (docs/cli.md).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/saved_sweeps.hpp"
#include "touchstone/error.hpp"

namespace touchstone::cli {

std::vector<experiment::Record> read_saved_sweeps(const std::vector<std::string>& files) {
  std::vector<experiment::Record> all;
  std::set<std::pair<std::string, std::string>> seen;  // (machine, column) of the files read so far
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) throw UsageError(fmt::format("cannot read '{}'", file));
    std::stringstream text;
    text << in.rdbuf();
    auto records = experiment::parse_records_csv(text.str(), file);
    std::set<std::pair<std::string, std::string>> here;
    for (auto& r : records) {
      here.insert({r.machine, r.algorithm});
      if (seen.contains({r.machine, r.algorithm}))
        r.algorithm += fmt::format(" ({})", std::filesystem::path(file).filename().string());
    }
    seen.insert(here.begin(), here.end());
    for (auto& r : records) all.push_back(std::move(r));
  }
  return all;
}

std::optional<RankingEvidence> ranking_evidence_of(const std::string& machine) {
  if (machine.empty()) return std::nullopt;
  try {
    return ranking_evidence(MachineSpec::parse(machine));
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

namespace {

struct Options {
  std::vector<std::string> csvs;
};

template <class T>
void add_once(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

int table(const Options& o) {
  const auto records = read_saved_sweeps(o.csvs);
  if (records.empty()) throw UsageError("no runs in the CSV file(s)");
  std::vector<std::string> machines;
  for (const auto& r : records) add_once(machines, r.machine);
  std::string text;
  for (const auto& machine : machines) {
    std::vector<std::string> columns;
    std::vector<std::size_t> sizes;
    std::vector<experiment::TableCell> cells;
    int vps = 0, runs = 0;
    for (const auto& r : records) {
      if (r.machine != machine) continue;
      add_once(columns, r.algorithm);
      add_once(sizes, r.size);
      cells.push_back({r.algorithm, r.size, r.result.makespan});
      vps = std::max(vps, r.vps), ++runs;
    }
    std::sort(sizes.begin(), sizes.end());
    // A size of 0 (a program that chose its own sizes) is a row among sizes only when alone.
    if (sizes.size() > 1 && sizes[0] == 0) sizes.erase(sizes.begin());
    const bool traffic =
        std::all_of(columns.begin(), columns.end(), [](const auto& c) { return c.starts_with("alltoallv/"); });
    const auto evidence = ranking_evidence_of(machine);
    if (!text.empty()) text += "\n";
    text += experiment::winner_table(fmt::format("{} ({} processors)", machine, vps), columns, sizes, cells, traffic,
                                     evidence ? &*evidence : nullptr);
    if (sizes.size() > 1 || sizes[0] != 0)
      for (const auto& r : records)
        if (r.machine == machine && r.size == 0)
          text += fmt::format("not in the table: {}, a run without a size\n", r.algorithm);
    text += fmt::format("{} runs\n", runs);
  }
  experiment::write_output("", text);
  return 0;
}

}  // namespace

Subcommand add_table(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "table", "print the winner table of saved sweeps (sweep --format csv): one per machine, every file's columns");
  cmd->add_option("csv", o->csvs, "CSV files that sweep --format csv wrote")->required()->check(CLI::ExistingFile);
  return Subcommand{cmd, [o] { return table(*o); }};
}

}  // namespace touchstone::cli
