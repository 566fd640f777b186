// `touchstone diff`: the first divergence per VP between two order logs or two runs (docs/debugging.md).
#include "cli/diff.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <vector>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/run.hpp"
#include "touchstone/time.hpp"

namespace touchstone::cli {

namespace {

// One line of an order log: "t=12.345678 us  recv #5 from 2 tag 0 size 8 (arrived 11.000000 us)".
struct Event {
  Time t = 0;
  bool recv = false;
  int peer = 0, tag = 0;
  std::size_t size = 0;
  std::string text;  // the line without its message id, which differs between runs
};

Time parse_us(const std::string& s, const std::string& what) {
  if (const auto t = time_from_us_text(s)) return *t;
  throw UsageError(fmt::format("{}: bad time '{}'", what, s));
}

std::vector<std::vector<Event>> parse(const std::string& text, const std::string& name) {
  std::vector<std::vector<Event>> vps;
  std::istringstream in(text);
  int lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    const std::string where = fmt::format("{}:{}", name, lineno);
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("VP ", 0) == 0) {
      vps.emplace_back();
      continue;
    }
    if (vps.empty() || line.rfind("  t=", 0) != 0)
      throw UsageError(fmt::format("{}: not an order log line (written by --order-log): '{}'", where, line));
    std::istringstream l(line.substr(4));
    std::string t, unit, kind, id, dir, peer, tag_word, tag, size_word, size;
    l >> t >> unit >> kind >> id >> dir >> peer >> tag_word >> tag >> size_word >> size;
    Event e;
    // Whole decimal numbers, as the log writes them: a stream would read "-1" as a size of 2^64 - 1.
    const auto whole = [](const std::string& text, auto& v) { return read_number(text, v) == NumberText::fits; };
    if (!l || (kind != "send" && kind != "recv") || !whole(peer, e.peer) || !whole(tag, e.tag) || !whole(size, e.size))
      throw UsageError(fmt::format("{}: cannot read '{}'", where, line));
    e.t = parse_us(t, where);
    e.recv = kind == "recv";
    e.text = fmt::format("{} {} {} tag {} size {}", kind, dir, e.peer, e.tag, e.size);
    vps.back().push_back(e);
  }
  if (vps.empty()) throw UsageError(fmt::format("{}: no 'VP N:' section: not an order log", name));
  return vps;
}

std::string signed_us(Time d) { return (d < 0 ? "" : "+") + exact_us(d) + " us"; }
std::string at_us(Time t) { return exact_us(t) + " us"; }

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string shell_quote(const std::string& w) {
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// "error: the run failed:\nrank 0 failed at t=62.12 us: ..." -> "rank 0 failed at t=62.12 us: ...":
// the first line that says something.
std::string first_line(const std::string& s) {
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("error: ", 0) == 0) line = line.substr(7);
    if (!line.empty() && line != "the run failed:") return line;
  }
  return {};
}

// One run of a spec: its exit status, its error (stderr) and, for `run`, its figures.
struct Outcome {
  int status = 0;
  std::string error;
  nlohmann::json figures;
  std::string order_log;
};

Outcome run_spec(const std::string& spec, const std::string& self, const std::string& base, const std::string& name) {
  wordexp_t w;
  if (wordexp(spec.c_str(), &w, WRDE_NOCMD | WRDE_UNDEF) != 0)
    throw UsageError(fmt::format("--run '{}': cannot split it into words (no $, `, unmatched quotes)", spec));
  std::vector<std::string> words(w.we_wordv, w.we_wordv + w.we_wordc);
  wordfree(&w);
  if (words.empty() || (words[0] != "run" && words[0] != "mpirun"))
    throw UsageError(
        fmt::format("--run '{}': {} must start with 'run' or 'mpirun' (a touchstone command line)", spec, name));
  for (const auto& word : words)
    if (word == "--order-log" || word.rfind("--order-log=", 0) == 0 || word == "--format" ||
        word.rfind("--format=", 0) == 0)
      throw UsageError(
          fmt::format("--run '{}': diff sets --order-log{} itself", spec, words[0] == "run" ? " and --format" : ""));
  const std::string log = base + ".order.txt", out = base + ".out", err = base + ".err";
  // Options go before an mpirun program's own arguments: right after the command word.
  std::string cmd = fmt::format("{} {} --order-log {}{}", shell_quote(self), words[0], shell_quote(log),
                                words[0] == "run" ? " --format json" : "");
  for (std::size_t i = 1; i < words.size(); ++i) fmt::format_to(std::back_inserter(cmd), " {}", shell_quote(words[i]));
  fmt::format_to(std::back_inserter(cmd), " >{} 2>{} </dev/null", shell_quote(out), shell_quote(err));
  const int st = std::system(cmd.c_str());
  Outcome o;
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  o.error = slurp(err);
  if (words[0] == "run" && o.status == 0) o.figures = nlohmann::json::parse(slurp(out), nullptr, false);
  o.order_log = slurp(log);
  for (const auto& f : {log, out, err}) std::filesystem::remove(f);
  if (o.status == 1) throw UsageError(fmt::format("--run '{}' ({}): {}", spec, name, first_line(o.error)));
  return o;
}

}  // namespace

std::string diff_runs(const std::string& a_spec, const std::string& b_spec, const std::string& self, bool& differ) {
  const std::string base =
      (std::filesystem::path(host_temporary_folder()) / fmt::format("touchstone_diff_{}", ::getpid())).string();
  const Outcome a = run_spec(a_spec, self, base + "_a", "A"), b = run_spec(b_spec, self, base + "_b", "B");
  std::string s = fmt::format("--- A: {}\n+++ B: {}\n", a_spec, b_spec);
  differ = false;
  auto outcome = [](const Outcome& o) {
    return o.status == 0 ? std::string("completed")
                         : fmt::format("failed (exit {}): {}", o.status, first_line(o.error));
  };
  if (a.status != b.status || (a.status != 0 && first_line(a.error) != first_line(b.error))) {
    differ = true;
    s += fmt::format("outcome: A {}\n         B {}\n", outcome(a), outcome(b));
  } else {
    s += fmt::format("outcome: both {}\n", outcome(a));
  }
  // Figures that depend on virtual time only (docs/cli.md), in the order `run` prints them.
  if (a.figures.is_object() && b.figures.is_object()) {
    for (const char* f : {"machine", "algorithm", "size", "vps", "makespan_us", "messages", "packets", "blocked_us",
                          "events", "trace_hash"}) {
      if (!a.figures.contains(f) || !b.figures.contains(f) || a.figures[f] == b.figures[f]) continue;
      differ = true;
      std::string delta;
      if (a.figures[f].is_number() && b.figures[f].is_number())
        delta = fmt::format(" ({:+g})", b.figures[f].get<double>() - a.figures[f].get<double>());
      s += fmt::format("{}: {} vs {}{}\n", f, a.figures[f].dump(), b.figures[f].dump(), delta);
    }
  }
  if (a.order_log.empty() || b.order_log.empty()) {
    s += fmt::format("no order log from {}: the run stopped before its VPs ran\n", a.order_log.empty() ? "A" : "B");
    differ = true;
    return s;
  }
  bool order_differs = false;
  const std::string order = diff_order_logs(a.order_log, b.order_log, "A", "B", order_differs);
  differ |= order_differs;
  return s + order.substr(order.find('\n', order.find('\n') + 1) + 1);  // without the ---/+++ lines
}

std::string diff_order_logs(const std::string& a_text, const std::string& b_text, const std::string& a_name,
                            const std::string& b_name, bool& differ) {
  const auto a = parse(a_text, a_name), b = parse(b_text, b_name);
  differ = a.size() != b.size();
  std::string s = fmt::format("--- {}\n+++ {}\n", a_name, b_name);
  if (a.size() != b.size()) s += fmt::format("the logs have {} and {} VPs\n", a.size(), b.size());
  for (std::size_t r = 0; r < std::min(a.size(), b.size()); ++r) {
    const auto &x = a[r], &y = b[r];
    const std::size_t n = std::min(x.size(), y.size());
    std::size_t first_event = n, first_match = n, first_time = n;
    for (std::size_t i = 0; i < n; ++i) {
      if (first_event == n && x[i].text != y[i].text) first_event = i;
      if (first_match == n && x[i].recv && y[i].recv && (x[i].peer != y[i].peer || x[i].tag != y[i].tag))
        first_match = i;
      if (first_time == n && x[i].t != y[i].t) first_time = i;
    }
    if (first_event == n && first_time == n && x.size() == y.size()) continue;
    differ = true;
    s += fmt::format("VP {}:\n", r);
    if (first_match < n)
      s += fmt::format("  first receive matched differently: event {}: {} (t={}) vs {} (t={})\n", first_match + 1,
                       x[first_match].text, at_us(x[first_match].t), y[first_match].text, at_us(y[first_match].t));
    else if (first_event < n)
      s += fmt::format("  first different event: event {}: {} vs {}\n", first_event + 1, x[first_event].text,
                       y[first_event].text);
    if (first_time < n)
      s += fmt::format("  first different time: event {} ({}): t={} vs t={} ({})\n", first_time + 1, x[first_time].text,
                       at_us(x[first_time].t), at_us(y[first_time].t), signed_us(y[first_time].t - x[first_time].t));
    if (x.size() != y.size()) s += fmt::format("  {} vs {} events\n", x.size(), y.size());
  }
  if (!differ) s += fmt::format("identical: every VP sent and received the same messages at the same times\n");
  return s;
}

namespace {

struct Options {
  std::string a, b;
  std::vector<std::string> runs;
};

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int diff(const Options& o) {
  bool differ = false;
  if (!o.runs.empty() || o.a.empty() || o.b.empty()) {
    if (o.runs.size() != 2)
      throw UsageError(fmt::format("diff takes two order logs, or --run twice ({} given)", o.runs.size()));
    fmt::print("{}", diff_runs(o.runs[0], o.runs[1], std::filesystem::canonical("/proc/self/exe").string(), differ));
  } else {
    fmt::print("{}", diff_order_logs(read_file(o.a), read_file(o.b), o.a, o.b, differ));
  }
  return differ ? 3 : 0;
}

}  // namespace

Subcommand add_diff(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("diff",
                                     "the first divergence per VP between two order logs (--order-log), or two runs "
                                     "(--run twice): the first receive matched differently, the first time that "
                                     "differs and by how much; for runs also their outcomes and figures");
  auto* files = cmd->add_option("A", o->a, "order log of the first run")->check(CLI::ExistingFile);
  cmd->add_option("B", o->b, "order log of the second run")->check(CLI::ExistingFile);
  cmd->add_option("--run", o->runs,
                  "a touchstone command line, e.g. \"run --machine mesh:2x2 --algorithm "
                  "alltoall/1-lev-dir --size 64\" or \"mpirun --machine mesh:2x2 ./prog\"; give two")
      ->excludes(files);
  return Subcommand{cmd, [o] { return diff(*o); }};
}

}  // namespace touchstone::cli
