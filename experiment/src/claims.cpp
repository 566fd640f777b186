#include "touchstone/experiment/claims.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace touchstone::claims {
namespace {

std::string number_text(double x, const std::string& unit) {
  if (!std::isfinite(x)) return "n/a";
  const double a = std::fabs(x);
  const std::string s = a < 1e9 && x == std::round(x) ? fmt::format("{:.0f}", x)
                        : a != 0 && (a >= 1e5 || a < 1e-2) ? fmt::format("{:.4g}", x)
                        : a >= 100                        ? fmt::format("{:.1f}", x)
                                                          : fmt::format("{:.3g}", x);
  return unit.empty() ? s : s + " " + unit;
}

// CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Markdown cell: a '|' would end the cell.
std::string md(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

}  // namespace

Format parse_format(const std::string& name) {
  if (name == "text") return Format::text;
  if (name == "csv") return Format::csv;
  if (name == "markdown") return Format::markdown;
  throw std::invalid_argument(fmt::format("claims format must be text, csv or markdown, not '{}'", name));
}

std::string verdict_text(const Claim& c) {
  switch (c.verdict) {
    case Verdict::reproduced: return "reproduced";
    case Verdict::off: return fmt::format("off by {:.2f}x", c.factor);
    case Verdict::ordering_differs: return "ordering differs";
    case Verdict::undecided: return fmt::format("undecided (preset: {})", c.at_preset);
  }
  return "?";
}

const Claim& Ledger::number(std::string id, std::string source, double paper, double ours, double tolerance,
                            const std::string& unit, std::string note) {
  if (!(tolerance >= 1)) throw std::invalid_argument(fmt::format("claim {}: tolerance {} must be >= 1", id, tolerance));
  Claim c{std::move(id), std::move(source), number_text(paper, unit), number_text(ours, unit), Verdict::reproduced, 0,
          std::move(note), ""};
  c.factor = paper != 0 && std::isfinite(paper) && std::isfinite(ours) ? ours / paper : NAN;
  // A small relative slack keeps a ratio printed as "1.10" on the side its rounding suggests.
  const bool within = std::isfinite(c.factor) && c.factor <= tolerance * (1 + 1e-12) && c.factor * tolerance >= 1 - 1e-12;
  if (!within) c.verdict = Verdict::off;
  if (!within && !std::isfinite(c.factor) && c.note.empty()) c.note = "no value";
  claims_.push_back(std::move(c));
  return claims_.back();
}

const Claim& Ledger::statement(std::string id, std::string source, std::string paper, std::string ours, bool holds,
                               std::string note) {
  claims_.push_back(Claim{std::move(id), std::move(source), std::move(paper), std::move(ours),
                          holds ? Verdict::reproduced : Verdict::ordering_differs, 0, std::move(note), ""});
  return claims_.back();
}

void Ledger::settle(const Ledger& variant, const std::string& options) { compare(variant, options, true); }

void Ledger::annotate(const Ledger& variant, const std::string& options) { compare(variant, options, false); }

void Ledger::compare(const Ledger& variant, const std::string& options, bool decides) {
  for (auto& c : claims_) {
    const auto other =
        std::find_if(variant.claims_.begin(), variant.claims_.end(), [&](const Claim& v) { return v.id == c.id; });
    if (other == variant.claims_.end()) continue;
    const bool here =
        c.verdict == Verdict::reproduced || (c.verdict == Verdict::undecided && c.at_preset == "reproduced");
    if (here == (other->verdict == Verdict::reproduced)) continue;
    if (decides && c.verdict != Verdict::undecided) {
      c.at_preset = verdict_text(c);
      c.verdict = Verdict::undecided;
      c.factor = 0;
    }
    const std::string flip =
        fmt::format("{} {} {} ({})", here ? "fails" : "holds", decides ? "with" : "at the stated", options, other->ours);
    c.note = c.note.empty() ? flip : c.note + "; " + flip;
  }
}

int Ledger::count(Verdict v) const {
  int n = 0;
  for (const auto& c : claims_) n += c.verdict == v;
  return n;
}

std::string Ledger::summary() const {
  const int undecided = count(Verdict::undecided);
  return fmt::format("{} claims: {} reproduced, {} off, {} ordering differs{}", claims_.size(),
                     count(Verdict::reproduced), count(Verdict::off), count(Verdict::ordering_differs),
                     undecided ? fmt::format(", {} undecided", undecided) : "");
}

void Ledger::print(std::FILE* out, Format format) const {
  switch (format) {
    case Format::csv:
      fmt::print(out, "id,source,paper,ours,verdict,factor,note\n");
      for (const auto& c : claims_)
        fmt::print(out, "{},{},{},{},{},{},{}\n", csv(c.id), csv(c.source), csv(c.paper), csv(c.ours), csv(verdict_text(c)),
                   c.factor != 0 && std::isfinite(c.factor) ? fmt::format("{:.4f}", c.factor) : "", csv(c.note));
      return;
    case Format::markdown:
      fmt::print(out, "| id | source | paper | ours | verdict | note |\n|---|---|---|---|---|---|\n");
      for (const auto& c : claims_)
        fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", md(c.id), md(c.source), md(c.paper), md(c.ours),
                   c.verdict == Verdict::reproduced ? "reproduced" : "**" + verdict_text(c) + "**", md(c.note));
      fmt::print(out, "\n{}\n", summary());
      return;
    case Format::text: {
      std::size_t wid = 2, wp = 5, wo = 4;
      for (const auto& c : claims_) wid = std::max(wid, c.id.size()), wp = std::max(wp, c.paper.size()), wo = std::max(wo, c.ours.size());
      wp = std::min<std::size_t>(wp, 40), wo = std::min<std::size_t>(wo, 40);
      fmt::print(out, "{:<{}}  {:<{}}  {:<{}}  {}\n", "id", wid, "paper", wp, "ours", wo, "verdict");
      for (const auto& c : claims_) {
        fmt::print(out, "{:<{}}  {:<{}}  {:<{}}  {}\n", c.id, wid, c.paper, wp, c.ours, wo, verdict_text(c));
        fmt::print(out, "{:<{}}  source: {}\n", "", wid, c.source);
        if (!c.note.empty()) fmt::print(out, "{:<{}}  note: {}\n", "", wid, c.note);
      }
      fmt::print(out, "\n{}\n", summary());
      return;
    }
  }
}

OrderingByLead ordering_by_lead(const std::vector<std::vector<std::pair<double, double>>>& groups, double lead) {
  OrderingByLead out;
  for (const auto& g : groups)
    for (std::size_t i = 0; i < g.size(); ++i)
      for (std::size_t j = i + 1; j < g.size(); ++j) {
        const auto [ours_i, measured_i] = g[i];
        const auto [ours_j, measured_j] = g[j];
        const double faster = std::min(ours_i, ours_j), slower = std::max(ours_i, ours_j);
        PairOrders& bin = slower < faster * (1 + lead) ? out.below : out.at_least;
        ++bin.pairs;
        if ((ours_i < ours_j && measured_i > measured_j) || (ours_i > ours_j && measured_i < measured_j)) ++bin.reordered;
      }
  return out;
}

}  // namespace touchstone::claims
