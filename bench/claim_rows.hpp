// A paper program's claims as a table of rows: each row names a claim, quotes the paper, states
// what the paper says and how the figures the program measured answer it; one loop puts every row
// into the ledger (touchstone/experiment/claims.hpp). The figures are whatever the program
// measured: one scenario, a whole sweep, a section's grid read one way.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "touchstone/experiment/claims.hpp"
#include "touchstone/machines.hpp"

namespace touchstone::bench {

/// How one set of figures answers a claim: for a statement, ours as text and whether it holds;
/// for a number, ours (`value`); and a note (empty: none).
struct Outcome {
  std::string ours = {};
  bool holds = false;
  double value = 0;
  std::string note = {};
};

template <class Figures>
struct ClaimRow {
  std::string id;      ///< the claim's id; add_rows appends a suffix (the scenario) when given one
  std::string source;  ///< where the paper says it, quoted
  std::string paper;   ///< a statement: the paper's value or ordering as text (unused for a number)
  /// The figures' answer; none when these figures cannot test the claim (no case of its kind).
  std::function<std::optional<Outcome>(const Figures&)> measure;
  double tolerance = 0;  ///< > 0: a number, reproduced within [paper / tolerance, paper x tolerance]
  double paper_value = 0;
  std::string unit = {};
};

/// One row's answer into the ledger under `id`.
template <class Figures>
void add_claim(claims::Ledger& L, const ClaimRow<Figures>& row, std::string id, const Outcome& o) {
  if (row.tolerance > 0)
    L.number(std::move(id), row.source, row.paper_value, o.value, row.tolerance, row.unit, o.note);
  else
    L.statement(std::move(id), row.source, row.paper, o.ours, o.holds, o.note);
}

/// Every row of `rows` measured on `figures`, in order, each id followed by `suffix`.
template <class Figures>
void add_rows(claims::Ledger& L, const std::vector<ClaimRow<Figures>>& rows, const Figures& figures,
              const std::string& suffix = "") {
  for (const auto& row : rows)
    if (const auto o = row.measure(figures)) add_claim(L, row, row.id + suffix, *o);
}

/// The claims measured again on one of the preset's open variants (touchstone::open_variants): an
/// end of a range the paper leaves open settles them (a claim it flips is undecided); a stated
/// value the paper's data contradict only annotates them (the preset has chosen the data).
inline void weigh(claims::Ledger& L, const claims::Ledger& on_variant, const OpenVariant& v) {
  if (v.contradicted) L.annotate(on_variant, v.options);
  else L.settle(on_variant, v.options);
}

}  // namespace touchstone::bench
