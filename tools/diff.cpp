#include "tools/diff.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "touchstone/error.hpp"
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
  const auto dot = s.find('.');
  if (dot == std::string::npos || s.size() - dot - 1 != 6) throw UsageError(fmt::format("{}: bad time '{}'", what, s));
  return std::stoll(s.substr(0, dot)) * 1'000'000 + std::stoll(s.substr(dot + 1));
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
    std::string t, unit, kind, id, dir;
    Event e;
    l >> t >> unit >> kind >> id >> dir >> e.peer;
    std::string word;
    l >> word >> e.tag >> word >> e.size;
    if (!l || (kind != "send" && kind != "recv")) throw UsageError(fmt::format("{}: cannot read '{}'", where, line));
    e.t = parse_us(t, where);
    e.recv = kind == "recv";
    e.text = fmt::format("{} {} {} tag {} size {}", kind, dir, e.peer, e.tag, e.size);
    vps.back().push_back(e);
  }
  if (vps.empty()) throw UsageError(fmt::format("{}: no 'VP N:' section: not an order log", name));
  return vps;
}

std::string signed_us(Time d) {
  return fmt::format("{}{}.{:06} us", d < 0 ? "-" : "+", std::abs(d) / 1'000'000, std::abs(d) % 1'000'000);
}
std::string at_us(Time t) { return fmt::format("{}.{:06} us", t / 1'000'000, t % 1'000'000); }

}  // namespace

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
      if (first_match == n && x[i].recv && y[i].recv && (x[i].peer != y[i].peer || x[i].tag != y[i].tag)) first_match = i;
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
      s += fmt::format("  first different time: event {} ({}): t={} vs t={} ({})\n", first_time + 1,
                       x[first_time].text, at_us(x[first_time].t), at_us(y[first_time].t),
                       signed_us(y[first_time].t - x[first_time].t));
    if (x.size() != y.size()) s += fmt::format("  {} vs {} events\n", x.size(), y.size());
  }
  if (!differ) s += fmt::format("identical: every VP sent and received the same messages at the same times\n");
  return s;
}

}  // namespace touchstone::cli
