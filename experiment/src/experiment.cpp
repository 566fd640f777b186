#include "touchstone/experiment/experiment.hpp"

#include <csv.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/parallel_for_each.h>
#include <oneapi/tbb/task_arena.h>

#include "algorithms/harness.hpp"
#include "algorithms/scratch.hpp"
#include "touchstone/error.hpp"
#include "touchstone/experiment/child.hpp"
#include "touchstone/number_text.hpp"

namespace touchstone::experiment {

namespace {

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

std::string hex(std::uint64_t x) { return fmt::format("{:016x}", x); }

nlohmann::json to_json(const Record& r) {
  nlohmann::json j = {{"machine", r.machine},
                      {"algorithm", r.algorithm},
                      {"size", r.size},
                      {"vps", r.vps},
                      {"makespan_us", to_us(r.result.makespan)},
                      {"messages", r.result.stats.messages},
                      {"packets", r.result.stats.packets},
                      {"blocked_us", to_us(r.result.stats.blocked_time)},
                      {"events", r.result.stats.events},
                      {"trace_hash", hex(r.result.trace_hash)},
                      {"host_seconds", r.result.host_seconds},
                      {"peak_rss_mb", r.peak_rss_mb}};
  if (r.analytic_us) j["analytic_us"] = *r.analytic_us;
  if (r.races) j["races"] = *r.races;
  if (r.measured_regions) j["measured_regions"] = *r.measured_regions;
  return j;
}

std::string seconds(double s) {
  if (s < 60) return fmt::format("{:.0f} s", s);
  return fmt::format("{}m{:02.0f}s", static_cast<int>(s / 60), s - 60 * static_cast<int>(s / 60));
}

// Progress of a batch on stderr. On a terminal: one status line with the jobs running and an ETA;
// the ETA weighs each job by its estimated work (messages x bytes), measured against the work of
// the jobs finished so far. Otherwise: one line per finished job, for logs.
class Progress {
 public:
  Progress(bool on, const std::vector<Job>& jobs) : on_(on), tty_(isatty(STDERR_FILENO) != 0), total_(jobs.size()) {
    for (const auto& j : jobs) total_work_ += work(j);
  }
  static double work(const Job& j) {
    const double p = j.machine->nodes();
    return p * p * (static_cast<double>(j.args.size) + 256.0);
  }
  void started(const Job& j) {
    running_.push_back(&j);
    show();
  }
  void finished(const Job& j, const Outcome& o) {
    running_.erase(std::find(running_.begin(), running_.end(), &j));
    ++done_;
    done_work_ += work(j);
    if (!on_) return;
    if (!tty_) {
      fmt::print(stderr, "[{}/{}] {} size {} on {}: {}\n", done_, total_, j.column(), j.args.size, j.machine->name,
                 o.record ? fmt::format("{:.3f} ms virtual, {:.2f} s host", to_us(o.record->result.makespan) / 1e3,
                                        o.record->result.host_seconds)
                          : "FAILED");
      return;
    }
    show();
  }
  void clear() {
    if (on_ && tty_) fmt::print(stderr, "\r\033[K");
  }

 private:
  void show() {
    if (!on_ || !tty_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string eta = "ETA after the first job";
    if (done_work_ > 0) eta = "ETA " + seconds(elapsed * (total_work_ - done_work_) / done_work_);
    std::string names;
    for (const Job* r : running_) names += fmt::format("{}{} {}", names.empty() ? "" : ", ", r->column(), r->args.size);
    if (names.size() > 60) names = names.substr(0, 57) + "...";
    fmt::print(stderr, "\r\033[K[{}/{}] {} elapsed, {} | running: {}", done_, total_, seconds(elapsed), eta, names);
  }
  bool on_, tty_;
  std::size_t total_, done_ = 0;
  double total_work_ = 0, done_work_ = 0;
  std::vector<const Job*> running_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

Record emulate(const Machine& m, const algorithms::Algorithm& alg, const algorithms::Args& args, const RunOptions& options) {
  if (args.root < 0 || args.root >= m.nodes())
    throw UsageError(fmt::format("--root {} is out of range for {} ({} processors)", args.root, m.name, m.nodes()));
  algorithms::check_host_memory(fmt::format("{} with {} bytes on {}", alg.name, args.size, m.name),
                                host_memory(m, alg, args, options));
  Record r;
  r.machine = m.name;
  r.algorithm = alg.name;
  r.size = args.size;
  r.vps = m.nodes();
  r.result = run(m, [&](Proc& p) { alg.program(p, args); }, options);
  r.peak_rss_mb = peak_rss_mb();
  if (alg.analytic_us) r.analytic_us = alg.analytic_us(m, args.size);
  return r;
}

algorithms::HostMemory host_memory(const Machine& m, const algorithms::Algorithm& alg, const algorithms::Args& args,
                                   const RunOptions& options) {
  return algorithms::host_memory(alg.footprint(m.nodes(), args.size), m.nodes(), options.phantom_payloads,
                                 options.stack_bytes);
}

// A program's memory is unknown before it runs: it is counted as the runtime's own for its ranks
// (their stacks and records), without payload buffers.
std::size_t job_bytes(const Job& job) {
  if (job.program)
    return algorithms::host_memory({}, job.program->ranks, job.options.phantom_payloads, job.options.stack_bytes)
        .resident;
  return host_memory(*job.machine, *job.algorithm, job.args, job.options).resident;
}

namespace {

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Why a program's run failed, in one line: the --result's error, else the last line the run wrote
// on stderr (the program's own report, or mpirun's), else its exit status.
std::string program_failure(int status, const nlohmann::json& result, const std::string& err) {
  std::string why;
  if (result.contains("error")) why = result["error"].get<std::string>();
  why = why.substr(0, why.find('\n'));  // the first line says what failed; the trace_hash line follows
  if (why.empty()) {
    std::istringstream lines(err);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && !line.starts_with("trace_hash ")) why = line;
  }
  return why.empty() ? fmt::format("exit status {}", status) : fmt::format("exit status {}: {}", status, why);
}

}  // namespace

Record run_program(const Machine& m, const ProgramRun& run, std::size_t size) {
  namespace fs = std::filesystem;
  const fs::path dir(make_temporary_folder("touchstone-program-"));
  struct RemoveDir {
    fs::path dir;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_dir{dir};
  const std::string result_file = dir / "result.json", out_file = dir / "stdout", err_file = dir / "stderr";
  std::vector<std::string> args = run.launcher;
  args.insert(args.end(), {"--result", result_file});
  args.insert(args.end(), run.command.begin(), run.command.end());
  // The program's output is not the sweep's: it is kept apart (stdout) or read for the error (stderr).
  const ChildExit child = run_child(args[0], args, out_file, err_file, fmt::format("cannot start {}", args[0]));
  const int rc = child.status;
  const std::string text = file_text(result_file);
  const nlohmann::json result = nlohmann::json::parse(text, nullptr, false);
  if (rc != 0 || result.is_discarded() || !result.contains("makespan_ps"))
    throw Error(program_failure(rc, result.is_discarded() ? nlohmann::json::object() : result, file_text(err_file)));
  Record r;
  r.machine = m.name;
  r.algorithm = run.column;
  r.size = size;
  r.vps = run.ranks;
  r.measured_regions = result.value("measured_regions", 0);
  r.result.makespan = result.at(*r.measured_regions > 0 ? "measured_ps" : "makespan_ps").get<Time>();
  r.result.stats.messages = result.value("messages", std::uint64_t{0});
  const std::string hash = result.value("trace_hash", std::string("0"));
  if (const auto h = number_from_text<std::uint64_t>(hash, 16))
    r.result.trace_hash = *h;
  else
    throw Error(fmt::format("{}: trace_hash '{}' is not a hexadecimal hash", result_file, hash));
  r.result.host_seconds = result.value("host_seconds", 0.0);
  r.peak_rss_mb = child.peak_rss_mb;
  return r;
}

std::size_t memory_budget(std::span<const std::size_t> job_bytes, double memory_mb, std::size_t host_bytes) {
  std::size_t budget = host_bytes / 8;
  for (auto b : job_bytes) budget = std::max(budget, b);
  if (memory_mb > 0) budget = std::max(budget, static_cast<std::size_t>(memory_mb * 1024 * 1024));
  return budget;
}

std::vector<Outcome> run_jobs(const std::vector<Job>& jobs, const RunnerOptions& options) {
  std::vector<Outcome> out(jobs.size());
  std::vector<std::size_t> order(jobs.size()), bytes(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) out[i].job = &jobs[i], order[i] = i, bytes[i] = job_bytes(jobs[i]);
  // Largest first; a job starts only while the memory of the jobs running (payloads and the
  // runtime's own, by the algorithm's measured bound) stays within the budget, so running in
  // parallel never needs more memory than the largest job alone or an eighth of the host's.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });
  const std::size_t budget = memory_budget(bytes, options.memory_mb, algorithms::host_limits().resident());
  std::mutex mu;
  std::condition_variable cv;
  std::size_t in_use = 0;
  // The runs' payload buffers are taken over by the next runs, already faulted in, within the room
  // the budget leaves beside the runs in progress.
  const algorithms::PayloadMemoryReuse reuse;
  Progress progress(options.progress, jobs);
  const int parallel = options.parallel > 0 ? options.parallel : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::task_arena arena(parallel);
  { const std::lock_guard lk(mu); }  // publishes the job list to the workers, which all take mu
  arena.execute([&] {
    tbb::parallel_for_each(order.begin(), order.end(), [&](std::size_t i) {
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return in_use == 0 || in_use + bytes[i] <= budget; });
        in_use += bytes[i];
        algorithms::PayloadMemoryReuse::keep_at_most(budget > in_use ? budget - in_use : 0);
        progress.started(jobs[i]);
      }
      Outcome o{&jobs[i], std::nullopt, {}};
      try {
        o.record = jobs[i].program ? run_program(*jobs[i].machine, *jobs[i].program, jobs[i].args.size)
                                   : emulate(*jobs[i].machine, *jobs[i].algorithm, jobs[i].args, jobs[i].options);
      } catch (const std::exception& e) {
        o.error = e.what();
      }
      {
        std::lock_guard lk(mu);
        in_use -= bytes[i];
        out[i] = std::move(o);
        progress.finished(jobs[i], out[i]);
        cv.notify_all();
      }
    });
  });
  // Every job published its outcome, and notified, while holding mu; taking mu here makes that
  // visible to this thread in a way ThreadSanitizer can see (it does not know oneTBB's own
  // synchronization, so all sharing between the jobs and this thread goes through mu).
  { const std::lock_guard lk(mu); }
  progress.clear();
  return out;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  // libcsv writes the field quoted, with its quotes doubled (RFC 4180, section 2, rules 6 and 7).
  std::string out(text.size() * 2 + 2, '\0');
  out.resize(csv_write(out.data(), out.size(), text.data(), text.size()));
  return out;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    line += csv_field(fields[i]);
  }
  return line + "\n";
}

std::string records_csv(const std::vector<const Record*>& records) {
  std::string text = csv_line({"machine", "algorithm", "size", "vps", "makespan_us", "messages", "packets", "blocked_us",
                               "events", "trace_hash", "host_seconds", "peak_rss_mb"});
  for (const Record* r : records)
    text += csv_line({r->machine, r->algorithm, std::to_string(r->size), std::to_string(r->vps),
                      exact_us(r->result.makespan), std::to_string(r->result.stats.messages),
                      std::to_string(r->result.stats.packets), exact_us(r->result.stats.blocked_time),
                      std::to_string(r->result.stats.events), hex(r->result.trace_hash),
                      fmt::format("{:.3f}", r->result.host_seconds), fmt::format("{:.1f}", r->peak_rss_mb)});
  return text;
}

std::string records_json(const std::vector<const Record*>& records) {
  nlohmann::json arr = nlohmann::json::array();
  for (const Record* r : records) arr.push_back(to_json(*r));
  return arr.dump(2) + "\n";
}

std::string record_json(const Record& record) { return to_json(record).dump(2) + "\n"; }

std::string record_lines(const Record& record) {
  std::string text;
  const nlohmann::json j = to_json(record);
  for (const auto& [k, v] : j.items())
    text += fmt::format("{:<14} {}\n", k, v.is_string() ? v.get<std::string>() : v.dump());
  return text;
}

std::string text_table(const std::string& corner, const std::vector<std::string>& row_labels,
                       const std::vector<std::string>& column_labels, const std::vector<std::vector<std::string>>& cells) {
  std::size_t first = corner.size();
  for (const auto& r : row_labels) first = std::max(first, r.size());
  std::vector<std::size_t> width(column_labels.size());
  for (std::size_t c = 0; c < column_labels.size(); ++c) {
    width[c] = std::max<std::size_t>(column_labels[c].size(), 1);
    for (const auto& row : cells)
      if (c < row.size()) width[c] = std::max(width[c], row[c].size());
  }
  std::string text = fmt::format("{:>{}}", corner, first);
  for (std::size_t c = 0; c < column_labels.size(); ++c) text += fmt::format("  {:>{}}", column_labels[c], width[c]);
  text += "\n";
  for (std::size_t r = 0; r < row_labels.size(); ++r) {
    text += fmt::format("{:>{}}", row_labels[r], first);
    for (std::size_t c = 0; c < column_labels.size(); ++c) {
      const std::string cell = r < cells.size() && c < cells[r].size() && !cells[r][c].empty() ? cells[r][c] : "-";
      text += fmt::format("  {:>{}}", cell, width[c]);
    }
    text += "\n";
  }
  return text;
}

namespace {
// The second fastest of `makespans` over the fastest, minus 1: 0 for a tie; none with fewer than
// two times or a fastest time of 0.
std::optional<double> lead_of(std::vector<Time> makespans) {
  if (makespans.size() < 2) return std::nullopt;
  std::partial_sort(makespans.begin(), makespans.begin() + 2, makespans.end());
  const Time best = makespans[0], next = makespans[1];
  if (next == best) return 0.0;
  if (best <= 0) return std::nullopt;
  return static_cast<double>(next) / static_cast<double>(best) - 1.0;
}

// `text` broken into lines of at most `width` columns at spaces (a longer word keeps its own line).
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out, line;
  std::size_t from = 0;
  while (from < text.size()) {
    const std::size_t space = text.find(' ', from);
    const std::string word = text.substr(from, space == std::string::npos ? std::string::npos : space - from);
    from = space == std::string::npos ? text.size() : space + 1;
    if (!line.empty() && line.size() + 1 + word.size() > width) out += line + "\n", line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}
}  // namespace

std::string winner_lead(std::vector<Time> makespans) {
  const auto lead = lead_of(std::move(makespans));
  if (!lead) return "-";
  if (*lead == 0) return "tie";
  const double percent = 100.0 * *lead;
  return percent < 0.05 ? "<0.1%" : fmt::format("{:.1f}%", percent);  // never "0.0%" for a real lead
}

std::string winner_table(const std::string& title, const std::vector<std::string>& columns,
                         const std::vector<std::size_t>& sizes, const std::vector<TableCell>& cells, bool traffic,
                         const RankingEvidence* evidence) {
  // Runs without a size (size 0) alone: one row per column, the winner among the rows.
  const bool turned = sizes.size() == 1 && sizes[0] == 0;
  std::vector<std::string> rows, cols;
  if (turned) {
    rows = columns;
    cols = {"makespan"};
  } else {
    for (auto s : sizes) rows.push_back(std::to_string(s));
    cols = columns;
  }
  // With two algorithms or more, a last column says by how much the winner wins: a winner a few
  // percent ahead of the next is a near tie, whatever the '*' says, when a preset's calibration is
  // good to some 10% (docs/machines.md).
  const bool lead_column = columns.size() > 1;
  if (lead_column && !turned) cols.push_back("lead");
  std::vector<std::vector<std::string>> table(rows.size(), std::vector<std::string>(cols.size()));
  int doubtful = 0;
  std::string turned_lead;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    std::vector<Time> times;
    for (const auto& c : cells)
      if (c.size == sizes[r] && c.makespan) times.push_back(*c.makespan);
    const Time best = times.empty() ? kNever : *std::min_element(times.begin(), times.end());
    for (std::size_t k = 0; k < columns.size(); ++k)
      for (const auto& c : cells)
        if (c.column == columns[k] && c.size == sizes[r])
          (turned ? table[k][0] : table[r][k]) =
              c.makespan ? fmt::format("{:.3f}{}", to_us(*c.makespan) / 1e3, *c.makespan == best ? '*' : ' ')
                         : "failed ";
    if (!lead_column) continue;
    std::string lead = winner_lead(times);
    // A tie is no winner already; a real lead below what the preset's evidence calls decisive
    // is marked, so that the '*' is not read as more than the calibration can tell.
    const auto l = lead_of(times);
    if (evidence && l && *l > 0 && *l < evidence->decisive_lead) lead += '?', ++doubtful;
    if (turned)
      turned_lead = lead;
    else
      table[r].back() = lead;
  }
  std::string text = fmt::format("{}: virtual makespan in ms, * = fastest {}{}\n", title,
                                 turned     ? "of the runs"
                                 : traffic ? "at that t (bytes of traffic per processor)"
                                           : "at that size",
                                 lead_column && !turned ? "; lead = how much longer the next fastest takes" : "");
  if (doubtful && !turned)  // the unmarked leads keep their digits in line with the marked ones
    for (auto& row : table)
      if (row.back().empty() || row.back().back() != '?') row.back() += ' ';
  text += text_table(turned ? "run" : traffic ? "t" : "size", rows, cols, table);
  if (turned && lead_column) text += fmt::format("lead = how much longer the next fastest takes: {}\n", turned_lead);
  if (doubtful)
    text += wrapped(fmt::format("? = a lead under {:.0f}%: {}. `--vary open` shows where such a winner holds.",
                                100 * evidence->decisive_lead, evidence->statement()),
                    100);
  return text;
}

std::string makespan_table(const Machine& m, const std::vector<const algorithms::Algorithm*>& algs,
                           const std::vector<std::size_t>& sizes, const std::vector<Outcome>& outcomes,
                           const RankingEvidence* evidence) {
  std::vector<std::string> columns;
  for (const auto* a : algs) columns.push_back(a->name);
  return makespan_table(m, columns, sizes, outcomes, evidence);
}

std::string makespan_table(const Machine& m, const std::vector<std::string>& columns,
                           const std::vector<std::size_t>& sizes, const std::vector<Outcome>& outcomes,
                           const RankingEvidence* evidence) {
  std::vector<TableCell> cells;
  double host = 0, rss = peak_rss_mb();
  std::uint64_t msgs = 0;
  for (const auto& o : outcomes) {
    cells.push_back({o.job->column(), o.job->args.size,
                     o.record ? std::optional<Time>(o.record->result.makespan) : std::nullopt});
    if (o.record)
      host += o.record->result.host_seconds, msgs += o.record->result.stats.messages,
          rss = std::max(rss, o.record->peak_rss_mb);
  }
  // An alltoallv/ run's size is its traffic per processor t (docs/algorithms.md).
  const bool traffic =
      std::all_of(columns.begin(), columns.end(), [](const auto& c) { return c.starts_with("alltoallv/"); });
  std::string text = winner_table(fmt::format("{} ({} processors)", m.name, m.nodes()), columns, sizes, cells,
                                  traffic, evidence);
  text += fmt::format("{} runs, {} messages, {:.2f} host seconds of emulation, peak RSS {:.0f} MB\n", outcomes.size(),
                      msgs, host, rss);
  return text;
}

std::vector<std::string> fastest_by_size(const std::vector<std::size_t>& sizes, const std::vector<Outcome>& outcomes) {
  std::vector<std::string> out;
  for (const std::size_t size : sizes) {
    Time best = kNever;
    std::vector<std::string> names;
    for (const auto& o : outcomes) {
      if (o.job->args.size != size || !o.record) continue;
      const Time t = o.record->result.makespan;
      if (t < best) best = t, names.clear();
      if (t == best) names.push_back(o.job->column());
    }
    out.push_back(names.size() > 1 ? fmt::format("tie: {}", fmt::join(names, ", ")) : names.empty() ? "" : names[0]);
  }
  return out;
}

std::string winner_stability_table(const std::vector<std::size_t>& sizes, const std::vector<Outcome>& base,
                                   const std::vector<Variant>& variants) {
  const auto winners = fastest_by_size(sizes, base);
  std::vector<std::vector<std::string>> by_variant;
  for (const auto& v : variants) by_variant.push_back(fastest_by_size(sizes, v.outcomes));
  struct Row {
    std::string size, winner, lead, holds, elsewhere;
  };
  std::vector<Row> rows{{"size", "winner", "lead", "holds on", "where another wins"}};
  int holding = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    std::vector<Time> times;
    for (const auto& o : base)
      if (o.job->args.size == sizes[r] && o.record) times.push_back(o.record->result.makespan);
    std::size_t same = 0;
    std::vector<std::string> changes;
    for (std::size_t k = 0; k < variants.size(); ++k) {
      const std::string& w = by_variant[k][r];
      if (w == winners[r]) ++same;
      else changes.push_back(fmt::format("[{}] {}", k + 1, w.empty() ? "no run finished" : w));
    }
    holding += same == variants.size();
    rows.push_back({std::to_string(sizes[r]), winners[r].empty() ? "-" : winners[r], winner_lead(times),
                    fmt::format("{} of {}", same, variants.size()), fmt::format("{}", fmt::join(changes, ", "))});
  }
  // Sizes and counts right-aligned, names left-aligned (they differ in length far more).
  std::size_t w[4] = {};
  for (const auto& row : rows)
    for (std::size_t i = 0; i < 4; ++i)
      w[i] = std::max(w[i], std::array{row.size, row.winner, row.lead, row.holds}[i].size());
  std::size_t runs = 0;
  for (const auto& v : variants) runs += v.outcomes.size();
  std::string text = fmt::format(
      "Winners across {} machine variant{} (--vary, {} runs more): the winner holds on every variant at {} of {} sizes\n",
      variants.size(), variants.size() == 1 ? "" : "s", runs, holding, sizes.size());
  for (const auto& row : rows) {
    std::string line = fmt::format("{:>{}}  {:<{}}  {:>{}}  {:>{}}  {}", row.size, w[0], row.winner, w[1], row.lead, w[2],
                                   row.holds, w[3], row.elsewhere);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  for (std::size_t k = 0; k < variants.size(); ++k)
    text += fmt::format("[{}] {}{}{}\n", k + 1, variants[k].options, variants[k].why.empty() ? "" : ": ", variants[k].why);
  return text;
}

namespace {

// A plotting script of experiment/scripts/ by name: $TOUCHSTONE_PLOT_SCRIPT for plot_sweep.py, else
// beside an installed binary (PREFIX/share/touchstone), else in the source tree this was built from.
std::string plot_script(const std::string& name) {
  if (const char* env = std::getenv("TOUCHSTONE_PLOT_SCRIPT"); env && name == "plot_sweep.py") return env;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "touchstone" / name;
    if (std::filesystem::exists(installed)) return installed.string();
  }
  return (std::filesystem::path(TOUCHSTONE_PLOT_SCRIPT_DIR) / name).string();
}

}  // namespace

void run_plot_script(const std::string& script_name, const std::vector<std::string>& arguments, const std::string& what) {
  const std::string python = "/usr/bin/python3", script = plot_script(script_name);
  std::vector<std::string> args{python, script};
  args.insert(args.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int status = 0;
  const int spawned = posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (spawned == 0) waitpid(pid, &status, 0);
  if (spawned != 0) throw UsageError(fmt::format("cannot plot: {} is missing (install python3-matplotlib)", python));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  // The scripts say why on stderr: 2 for input they cannot draw, 3 without matplotlib.
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 2) throw UsageError(fmt::format("cannot plot {} (see the line above)", what));
  if (code == 3) throw UsageError(fmt::format("cannot plot {}: install python3-matplotlib", what));
  throw UsageError(fmt::format("plotting {} failed ({} {} ended with {})", what, python, script,
                               WIFEXITED(status) ? fmt::format("exit status {}", code)
                                                 : fmt::format("signal {}", WTERMSIG(status))));
}

void check_figure_path(const std::string& figure, const std::string& option) {
  const auto ext = std::filesystem::path(figure).extension().string();
  if (ext != ".png" && ext != ".svg" && ext != ".pdf")
    throw UsageError(fmt::format("{} {}: the figure's name must end in .png, .svg or .pdf", option, figure));
  check_output_path(figure, option);
}

void plot(const std::string& csv_text, const std::string& figure, const RankingEvidence* evidence,
          const std::string& source) {
  check_figure_path(figure, "--plot");
  const auto csv_path =
      std::filesystem::path(host_temporary_folder()) / fmt::format("touchstone-plot-{}.csv", ::getpid());
  write_output(csv_path.string(), csv_text);
  try {
    std::vector<std::string> args{csv_path.string(), figure};
    if (evidence) args.insert(args.begin(), {"--doubtful-below", fmt::format("{}", evidence->decisive_lead)});
    if (!source.empty()) args.insert(args.begin(), {"--source", source});
    run_plot_script("plot_sweep.py", args, figure);
  } catch (...) {
    std::filesystem::remove(csv_path);
    throw;
  }
  std::filesystem::remove(csv_path);
}

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(fmt::format("{} {}: that is a directory; give a file's name", option, path));
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("{} {}: there is no directory '{}'", option, path, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("{} {}: the directory '{}' is not writable", option, path, dir.string()));
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("{} {}: the file is not writable", option, path));
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty()) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      throw UsageError("cannot write the output to standard output");
    return;
  }
  std::ofstream f(path, std::ios::binary);
  if (!f) throw UsageError(fmt::format("cannot write '{}'", path));
  f << text;
  f.flush();
  if (!f) throw UsageError(fmt::format("cannot write '{}' (disk full?)", path));
}

}  // namespace touchstone::experiment
