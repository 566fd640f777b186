// A claims ledger: the statements of a paper that an emulator can test, each with the paper's
// value or ordering, ours, and a verdict. It knows no paper; a paper program fills one and prints
// it (as a text table, CSV or Markdown). docs/paper000.md shows one.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace touchstone::claims {

enum class Verdict {
  reproduced,        ///< the number within its tolerance, or the ordering holds
  off,               ///< a number outside its tolerance: "off by X" (X = ours / paper)
  ordering_differs,  ///< an ordering or comparison statement that does not hold here
};

struct Claim {
  std::string id;      ///< short and stable, e.g. "fig9.1-lev-xor.4096"
  std::string source;  ///< where the paper says it: section, figure, table, quoted sentence
  std::string paper;   ///< the paper's value or ordering, as text
  std::string ours;    ///< ours, as text
  Verdict verdict = Verdict::reproduced;
  double factor = 0;   ///< numbers: ours / paper; orderings: 0
  std::string note;    ///< why it misses, or what the test assumes (a threshold the paper leaves open)
};

enum class Format { text, csv, markdown };
/// "text", "csv" or "markdown"; throws std::invalid_argument otherwise.
Format parse_format(const std::string& name);

/// "reproduced", "off by 1.23x" (ours larger) or "off by 0.81x", "ordering differs".
std::string verdict_text(const Claim& c);

class Ledger {
 public:
  /// A number: reproduced when ours / paper lies in [1 / tolerance, tolerance] (tolerance >= 1).
  const Claim& number(std::string id, std::string source, double paper, double ours, double tolerance,
                      const std::string& unit = "", std::string note = "");
  /// A statement (an ordering, a winner, a comparison): reproduced when `holds`.
  const Claim& statement(std::string id, std::string source, std::string paper, std::string ours, bool holds,
                         std::string note = "");

  const std::vector<Claim>& claims() const { return claims_; }
  int count(Verdict v) const;
  /// "N claims: R reproduced, O off, D ordering differs".
  std::string summary() const;
  void print(std::FILE* out, Format format) const;

 private:
  std::vector<Claim> claims_;
};

}  // namespace touchstone::claims
