// libFuzzer harness: traffic specs (--traffic k=K,l=L,t=BYTES) and traffic CSV files.
// The first byte picks which; the rest is the text. Accepted traffic has non-negative entries and
// row and column sums that fit (no overflow: entries are at most 2^40).
#include <cstddef>
#include <cstdint>
#include <string>

#include "algorithms/traffic.hpp"
#include "invariants.hpp"

namespace {
void check_matrix(const touchstone::algorithms::TrafficMatrix& m) {
  const int p = m.p();
  ts_fuzz::check(p >= 1, "an empty traffic matrix");
  for (int i = 0; i < p; ++i) {
    for (const std::int64_t x : m.row(i)) ts_fuzz::check(x >= 0 && x <= (std::int64_t{1} << 40), "entry out of range");
    ts_fuzz::check(m.r_i(i) >= 0 && m.c_j(i) >= 0, "a negative row or column sum");
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace alg = touchstone::algorithms;
  if (data[0] & 1) {
    ts_fuzz::expect_clean([&] { check_matrix(alg::parse_traffic_csv(text, "fuzz.csv")); });
    return 0;
  }
  ts_fuzz::expect_clean([&] {
    const alg::TrafficSpec spec = alg::parse_traffic(text);
    if (!spec.file.empty()) return;  // files are the other half of this harness
    // The generator on a small machine: every row and column sums to t (paper 003 section 7).
    for (const int p : {1, 7, 32}) {
      try {
        const alg::TrafficMatrix m = alg::generate_traffic(p, spec, 1);
        check_matrix(m);
        for (int i = 0; i < p; ++i)
          ts_fuzz::check(m.r_i(i) == spec.t && m.c_j(i) == spec.t, "a generated row or column does not sum to t");
      } catch (const touchstone::Error&) {
        // k larger than p, say: a clean refusal
      }
    }
  });
  return 0;
}
