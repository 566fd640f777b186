// A claims ledger: the statements of a paper that an emulator can test, each with the paper's
// value or ordering, ours, and a verdict. It knows no paper; a paper program fills one and prints
// it (as a text table, CSV or Markdown). docs/paper000.md shows one.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace touchstone::claims {

enum class Verdict {
  reproduced,        ///< the number within its tolerance, or the ordering holds
  off,               ///< a number outside its tolerance: "off by X" (X = ours / paper)
  ordering_differs,  ///< an ordering or comparison statement that does not hold here
  /// reproduced on the preset and not on a variant the paper leaves open, or the other way round:
  /// the paper's stated machine does not decide it (Ledger::settle)
  undecided,
};

struct Claim {
  std::string id;      ///< short and stable, e.g. "fig9.1-lev-xor.4096"
  std::string source;  ///< where the paper says it: section, figure, table, quoted sentence
  std::string paper;   ///< the paper's value or ordering, as text
  std::string ours;    ///< ours, as text
  Verdict verdict = Verdict::reproduced;
  double factor = 0;   ///< numbers: ours / paper; orderings: 0
  std::string note;    ///< why it misses, or what the test assumes (a threshold the paper leaves open)
  std::string at_preset;  ///< undecided: the preset's own verdict, as verdict_text gave it
};

enum class Format { text, csv, markdown };
/// "text", "csv" or "markdown"; throws std::invalid_argument otherwise.
Format parse_format(const std::string& name);

/// "reproduced", "off by 1.23x" (ours larger) or "off by 0.81x", "ordering differs",
/// "undecided (preset: reproduced)".
std::string verdict_text(const Claim& c);

class Ledger {
 public:
  /// A number: reproduced when ours / paper lies in [1 / tolerance, tolerance] (tolerance >= 1).
  const Claim& number(std::string id, std::string source, double paper, double ours, double tolerance,
                      const std::string& unit = "", std::string note = "");
  /// A statement (an ordering, a winner, a comparison): reproduced when `holds`.
  const Claim& statement(std::string id, std::string source, std::string paper, std::string ours, bool holds,
                         std::string note = "");

  /// This ledger is the preset's; `variant` holds the same claims measured with `options` added to
  /// the machine spec, one end of a range the paper leaves open (touchstone::open_variants). A claim
  /// reproduced on one and not on the other flips inside that range: it becomes undecided, its
  /// note naming the variant. Claims of one ledger only are left as they are.
  void settle(const Ledger& variant, const std::string& options);
  /// As settle, for a variant that does not decide: a value the paper states where its own data
  /// contradict it, so the preset follows the data (touchstone::OpenVariant::contradicted). A claim
  /// it flips keeps its verdict; its note says what the variant gives ("fails at the stated send_us=5
  /// (310.1 us)").
  void annotate(const Ledger& variant, const std::string& options);

  const std::vector<Claim>& claims() const { return claims_; }
  int count(Verdict v) const;
  /// "N claims: R reproduced, O off, D ordering differs" (then ", U undecided" when there are any).
  std::string summary() const;
  void print(std::FILE* out, Format format) const;

 private:
  void compare(const Ledger& variant, const std::string& options, bool decides);
  std::vector<Claim> claims_;
};

/// What a number claim reads off the measured tables at one point: ours beside the paper's value,
/// judged by its row's tolerance.
struct Number {
  Number(double paper, double ours, std::string note = "") : paper(paper), ours(ours), note(std::move(note)) {}
  double paper;      ///< the paper's value at this point
  double ours;
  std::string note;  ///< what this point adds to its row's note ("worst at 512 B")
};
/// What a statement claim reads at one point: ours as text, and whether the paper's ordering holds.
struct Statement {
  Statement(std::string ours, bool holds, std::string note = "", std::string paper = "")
      : ours(std::move(ours)), holds(holds), note(std::move(note)), paper(std::move(paper)) {}
  std::string ours;
  bool holds;
  std::string note;   ///< what this point adds to its row's note
  std::string paper;  ///< the paper's ordering here when it depends on the point; empty: the row's
};

/// A claim as a row of a table: where the paper says it, the paper's value or ordering, and how to
/// measure it at a point. A family of claims (one per message size, machine, ...) is one row
/// applied over its points; a single claim is a row applied at one point.
template <class Point>
struct Row {
  /// A statement (an ordering, a winner, a comparison) with the paper's ordering as text.
  static Row statement(std::string id, std::string source, std::string paper,
                       std::function<Statement(const Point&)> measure, std::string note = "") {
    return Row{std::move(id), std::move(source), std::move(paper), std::move(measure), {}, 1, "", std::move(note)};
  }
  /// A number, reproduced when ours / paper lies in [1 / tolerance, tolerance].
  static Row number(std::string id, std::string source, std::function<Number(const Point&)> measure,
                    double tolerance, std::string unit = "", std::string note = "") {
    return Row{std::move(id), std::move(source), "", {}, std::move(measure), tolerance, std::move(unit),
               std::move(note)};
  }

  std::string id;      ///< the point's key, when it has one, follows after a '.'
  std::string source;  ///< where the paper says it
  std::string paper;   ///< statements: the paper's ordering
  std::function<Statement(const Point&)> statement_at;  ///< set for a statement
  std::function<Number(const Point&)> number_at;        ///< set for a number
  double tolerance;
  std::string unit;
  std::string note;  ///< what the test assumes (a threshold the paper leaves open)
};

/// Every row of `rows` at every point into L, point by point and at each point in table order
/// (a reader finds one point's claims together). A claim's id is `prefix` + the row's id, then
/// "." + key(point) unless that is empty.
template <class Point, class Key>
void add_rows(Ledger& L, const std::vector<Row<Point>>& rows, const std::vector<Point>& points, Key key,
              const std::string& prefix = "") {
  const auto join = [](const std::string& a, const std::string& b) {
    return a.empty() || b.empty() ? a + b : a + "; " + b;
  };
  for (const Point& p : points)
    for (const Row<Point>& row : rows) {
      const std::string k = key(p);
      std::string id = prefix + row.id + (k.empty() ? "" : "." + k);
      if (row.number_at) {
        const Number n = row.number_at(p);
        L.number(std::move(id), row.source, n.paper, n.ours, row.tolerance, row.unit, join(row.note, n.note));
      } else {
        const Statement s = row.statement_at(p);
        L.statement(std::move(id), row.source, s.paper.empty() ? row.paper : s.paper, s.ours, s.holds,
                    join(row.note, s.note));
      }
    }
}

/// How often an emulator orders a pair of algorithms as the real machine did, split by how far
/// apart the emulator puts them. A calibrated preset's rankings are only as good as this: a lead
/// the emulator prints is worth something when pairs it separates by that much were rarely
/// ordered the other way on the machine it models.
struct PairOrders {
  int pairs = 0;      ///< pairs of algorithms measured at the same setting
  int reordered = 0;  ///< of them, those the machine ran in the other order
};
struct OrderingByLead {
  PairOrders below;     ///< pairs our times separate by less than the lead
  PairOrders at_least;  ///< the others
};

/// `groups`: per setting (a message size, say), the (ours, measured) times of the algorithms
/// measured there. Every pair within a group counts once. Its lead is ours slower / ours faster - 1;
/// it is reordered when the measured times order it the other way (a tie in either counts as
/// not reordered).
OrderingByLead ordering_by_lead(const std::vector<std::vector<std::pair<double, double>>>& groups, double lead);

}  // namespace touchstone::claims
