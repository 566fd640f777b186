// A claims ledger: the statements of a paper that an emulator can test, each with the paper's
// value or ordering, ours, and a verdict. It knows no paper; a paper program fills one and prints
// it (as a text table, CSV or Markdown). docs/paper000.md shows one.
#pragma once
#include <cstdio>
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

  const std::vector<Claim>& claims() const { return claims_; }
  int count(Verdict v) const;
  /// "N claims: R reproduced, O off, D ordering differs" (then ", U undecided" when there are any).
  std::string summary() const;
  void print(std::FILE* out, Format format) const;

 private:
  std::vector<Claim> claims_;
};

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
