// The experiment harness shared by `touchstone sweep` and the paper programs (bench/paperNNN):
// emulate one catalog algorithm on one machine, run many such emulations in parallel within a
// memory budget, write the figures as a table, RFC 4180 CSV or JSON, and check a paper's claims.
//
//   std::vector<experiment::Job> jobs;
//   for (auto s : sizes) jobs.push_back({&machine, &algorithms::find("alltoall/1-lev-xor"), {s}, {}});
//   const auto outcomes = experiment::run_jobs(jobs, {.parallel = 2});
//   fmt::print("{}", experiment::format_table(outcomes, machine));
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "algorithms/harness.hpp"
#include "algorithms/registry.hpp"
#include "touchstone/machine.hpp"
#include "touchstone/machines.hpp"
#include "touchstone/run.hpp"

namespace touchstone::experiment {

/// One emulation's figures, as every writer prints them.
struct Record {
  std::string machine, algorithm;
  std::size_t size = 0;
  int vps = 0;
  RunResult result;
  double peak_rss_mb = 0;
  std::optional<double> analytic_us;  ///< the paper's formula for this run, when it has one
  std::optional<std::size_t> races;   ///< wildcard races found, when race detection was asked for
  /// An MPI program's run (ProgramRun): the regions it marked with MPI_Pcontrol; its makespan is
  /// then their total (docs/mpi.md, "Measuring a region"), or the whole run's when it marked none.
  std::optional<int> measured_regions;
};

/// Emulates `alg` on `m` with `args` (checking the root and the host memory first).
Record emulate(const Machine& m, const algorithms::Algorithm& alg, const algorithms::Args& args,
               const RunOptions& options = {});

/// An MPI program run as a job: a child process `LAUNCHER... --result FILE PROGRAM ARGS...`, where
/// the launcher is `touchstone mpirun` with its options (one process holds one MPI session). Its
/// record is what --result says: the measured regions' total, or the makespan when the program
/// marks no region; a run that fails (a non-zero exit) is a failed job with the run's error.
struct ProgramRun {
  std::string column;                 ///< the table's column, e.g. "program:my_alltoall[alltoall=1-lev-xor]"
  std::vector<std::string> launcher;  ///< e.g. {"/usr/bin/touchstone", "mpirun", "--machine", "delta:16x16"}
  std::vector<std::string> command;   ///< the program and its arguments
  int ranks = 0;                      ///< MPI processes (for the memory estimate and the record)
};

/// One emulation of a batch: a catalog algorithm, or an MPI program when `program` is set.
struct Job {
  const Machine* machine = nullptr;
  const algorithms::Algorithm* algorithm = nullptr;
  algorithms::Args args;  ///< args.size: the row of the table (a program's runs too)
  RunOptions options;
  std::optional<ProgramRun> program{};
  /// The column of the table: the algorithm's name or the program's column.
  const std::string& column() const { return program ? program->column : algorithm->name; }
};

/// Runs `run` on `m` as a child process and reads its --result (ProgramRun); throws Error with the
/// run's error when it fails.
Record run_program(const Machine& m, const ProgramRun& run, std::size_t size);

/// What became of a job: its record, or the error that ended it.
struct Outcome {
  const Job* job = nullptr;
  std::optional<Record> record;
  std::string error;
};

struct RunnerOptions {
  int parallel = 0;        ///< emulations at once (0: the host's cores)
  double memory_mb = 0;    ///< memory the running jobs may share (0: memory_budget's default)
  /// Progress on stderr: on a terminal a status line with the running jobs and an ETA, otherwise
  /// one line per finished job.
  bool progress = false;
};

/// The estimated bytes the jobs running at once may hold together: at least the largest job's
/// `job_bytes` (so every job can run), and at least an eighth of `host_bytes` (the memory this
/// process may use, algorithms::HostLimits::resident; 0 if unknown), so that small jobs run side
/// by side even when they are all alike (a phantom sweep); `memory_mb` (> 0) raises it further.
std::size_t memory_budget(std::span<const std::size_t> job_bytes, double memory_mb, std::size_t host_bytes);

/// Runs every job, largest estimated memory first, as many at once as `parallel` and the memory
/// budget (memory_budget) allow. Outcomes are in the jobs' order; a failed job does not stop the
/// others.
std::vector<Outcome> run_jobs(const std::vector<Job>& jobs, const RunnerOptions& options = {});

/// Host memory an emulation needs by the algorithm's measured bound (algorithms::host_memory):
/// payload buffers, copies in flight unless phantom, the runtime's per-VP and per-message memory.
algorithms::HostMemory host_memory(const Machine& m, const algorithms::Algorithm& alg, const algorithms::Args& args,
                                   const RunOptions& options);
/// Resident bytes the job's emulation needs (host_memory).
std::size_t job_bytes(const Job& job);

// --- writers ---

/// A CSV field as RFC 4180 wants it: quoted (quotes doubled) when it holds a comma, a quote or a
/// line break.
std::string csv_field(const std::string& text);
/// One CSV line of fields, each passed through csv_field, ended by CRLF-free "\n".
std::string csv_line(const std::vector<std::string>& fields);
/// The fields of one CSV line (without its line end), quotes undone as RFC 4180 says: the reader
/// of what csv_line writes.
std::vector<std::string> csv_fields(const std::string& line);

/// The header and rows of the standard record CSV (docs/cli.md).
std::string records_csv(const std::vector<const Record*>& records);
/// A JSON array of records (docs/cli.md fields).
std::string records_json(const std::vector<const Record*>& records);
/// One record as a JSON object.
std::string record_json(const Record& record);
/// One record as "key value" lines.
std::string record_lines(const Record& record);

/// A text table: one row per row label, one column per column label; widths fit the longest
/// entry. `cells[r][c]` empty prints "-".
std::string text_table(const std::string& corner, const std::vector<std::string>& row_labels,
                       const std::vector<std::string>& column_labels, const std::vector<std::vector<std::string>>& cells);

/// How much longer the second fastest of `makespans` takes than the fastest, as "6.8%" ("<0.1%"
/// below 0.05%); "tie" when two or more share the fastest time, "-" with fewer than two times (or
/// a fastest time of 0).
std::string winner_lead(std::vector<Time> makespans);

/// The sweep table: rows are sizes, columns algorithms, virtual makespan in ms, '*' on the fastest
/// of each size and, with two algorithms or more, a last column `lead` (winner_lead), then a
/// summary line. With the machine's `evidence` (touchstone::ranking_evidence), a lead below its
/// decisive lead is marked '?', and a line under the table says what such a lead is worth.
std::string makespan_table(const Machine& m, const std::vector<const algorithms::Algorithm*>& algorithms,
                           const std::vector<std::size_t>& sizes, const std::vector<Outcome>& outcomes,
                           const RankingEvidence* evidence = nullptr);
/// The same with columns named (Job::column: algorithms and programs side by side).
std::string makespan_table(const Machine& m, const std::vector<std::string>& columns,
                           const std::vector<std::size_t>& sizes, const std::vector<Outcome>& outcomes,
                           const RankingEvidence* evidence = nullptr);

/// One cell of a winner table: a column's time at a size, none when its run failed.
struct TableCell {
  std::string column;
  std::size_t size = 0;
  std::optional<Time> makespan;
};

/// The winner table of makespan_table without its summary line, from cells: `title` heads it (the
/// machine and what the numbers are), rows are `sizes` ("t" rows when `traffic`), columns
/// `columns`. A size of 0 is a run without a size (an MPI program that chooses its own sizes):
/// when it is the only size, the table is turned round, one row per column, so that the columns
/// (say, one program under every algorithm of a collective) read down with the winner marked.
std::string winner_table(const std::string& title, const std::vector<std::string>& columns,
                         const std::vector<std::size_t>& sizes, const std::vector<TableCell>& cells, bool traffic,
                         const RankingEvidence* evidence);

/// The records of a CSV that records_csv wrote, parsed back: machine, algorithm, size and makespan_us
/// (read to the picosecond) are needed, vps, messages, trace_hash, host_seconds and peak_rss_mb are
/// read when present. UsageError naming `source` and the line when a line is not such a record.
std::vector<Record> parse_records_csv(const std::string& csv_text, const std::string& source);

/// The fastest algorithm at each of `sizes` among `outcomes` (the runs of one machine): its name,
/// "tie: A, B" when several share the fastest time, "" when no run of that size finished.
std::vector<std::string> fastest_by_size(const std::vector<std::size_t>& sizes, const std::vector<Outcome>& outcomes);

/// The same sweep on a machine variant: the options added to the spec, why, and its runs.
struct Variant {
  std::string options, why;
  std::vector<Outcome> outcomes;
};

/// Whether each size's winner holds on every variant (touchstone sweep --vary): per size the
/// winner on `base`, its lead, on how many variants the same algorithm wins, and where another
/// does, which ([k] = variant k); then the variants, numbered, with why.
std::string winner_stability_table(const std::vector<std::size_t>& sizes, const std::vector<Outcome>& base,
                                   const std::vector<Variant>& variants);

/// Draws makespan against message size per algorithm, log-log, fastest ringed, from records CSV
/// (records_csv) into `figure` (.png, .svg or .pdf) with experiment/scripts/plot_sweep.py and Debian's
/// matplotlib. With `evidence` a winner whose lead is under its decisive lead is ringed twice and
/// marked '?', as makespan_table marks it. UsageError when the figure cannot be drawn, saying why.
/// `source` names the CSV in the script's error messages (the user's file for `touchstone plot`).
/// check_figure_path: the same checks of the figure's name and place, for before a long sweep;
/// `option` names the figure in the message ("--plot", or "figure" for `touchstone plot`).
void plot(const std::string& csv_text, const std::string& figure, const RankingEvidence* evidence = nullptr,
          const std::string& source = "the sweep's CSV");
void check_figure_path(const std::string& figure, const std::string& option);

/// Runs the plotting script `script_name` of experiment/scripts/ (installed in PREFIX/share/touchstone) with
/// Debian's /usr/bin/python3 and `arguments`; UsageError naming `what` when it cannot run or fails.
void run_plot_script(const std::string& script_name, const std::vector<std::string>& arguments, const std::string& what);

/// Writes `text` to `path` (stdout when empty); UsageError when it cannot be written completely.
void write_output(const std::string& path, const std::string& text);

/// Before a long job: UsageError naming `option` when `path` (if not empty) could not be written
/// afterwards, because it is a directory or its directory is missing or not writable. Creates
/// nothing.
void check_output_path(const std::string& path, const std::string& option);

}  // namespace touchstone::experiment
