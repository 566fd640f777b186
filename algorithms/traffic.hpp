// Communication matrices (paper 003, Ranka, Shankar and Alsabti, section 2): the p x p matrix M
// whose entry m_ij is the size in bytes of the message P_i sends P_j, with the paper's traffic
// figures (r_i, c_j, r, c, t) and fan figures (f_i, g_j, f, g, h); the generator of section 7
// (fan-out k, traffic t, non-uniformity l); and loading a matrix from CSV.
//
//   auto m = algorithms::generate_traffic(32, {.k = 32, .l = 1.0 / 32, .t = 65536}, seed);
//   m.t();      // 65536: every processor sends and receives exactly t bytes
#pragma once
#include <cstdint>
#include <span>
#include <memory>
#include <string>
#include <vector>

namespace touchstone::algorithms {

/// A p x p communication matrix of byte counts (paper 003, section 2).
class TrafficMatrix {
 public:
  TrafficMatrix() = default;
  /// An all-zero p x p matrix.
  explicit TrafficMatrix(int p);
  /// A matrix from p*p row-major entries (each >= 0); UsageError otherwise.
  TrafficMatrix(int p, std::vector<std::int64_t> row_major);

  int p() const { return p_; }
  std::int64_t at(int i, int j) const { return m_[idx(i, j)]; }
  void set(int i, int j, std::int64_t bytes);
  /// Send vector of P_i (row i).
  std::span<const std::int64_t> row(int i) const;

  // Section 2's figures, exactly as defined there.
  std::int64_t r_i(int i) const;  ///< outgoing traffic: sum_j m_ij
  std::int64_t c_j(int j) const;  ///< incoming traffic: sum_i m_ij
  std::int64_t r() const;         ///< max_i r_i
  std::int64_t c() const;         ///< max_j c_j
  std::int64_t t() const;         ///< max(r, c)
  int f_i(int i) const;           ///< fan-out: number of non-zero entries of row i
  int g_j(int j) const;           ///< fan-in: number of non-zero entries of column j
  int f() const;                  ///< max_i f_i
  int g() const;                  ///< max_j g_j
  int h() const;                  ///< max(f, g)
  /// Sum of all entries.
  std::int64_t total() const;

  friend bool operator==(const TrafficMatrix&, const TrafficMatrix&) = default;

 private:
  std::size_t idx(int i, int j) const;
  int p_ = 0;
  std::vector<std::int64_t> m_;
};

/// Parameters of section 7's generator. Of the k processors receiving from one processor,
/// (1-l)k of them share l*t bytes and the other l*k share (1-l)*t bytes.
struct TrafficSpec {
  /// `t` of a spec that leaves it out: the run's message size gives it (touchstone run --size,
  /// sweep --sizes), so a sweep over sizes is a sweep over the traffic per processor.
  static constexpr std::int64_t kFromSize = -1;
  int k = 0;          ///< fan-out, 1 <= k <= p
  double l = 1.0;     ///< non-uniformity, 0 <= l <= 1
  std::int64_t t = 0; ///< traffic per processor in bytes, or kFromSize
  std::string file;   ///< when set: load the matrix from this CSV instead
  /// True when the spec fixes the matrix whatever the run's size: t given, or a file.
  bool fixed() const { return !file.empty() || t != kFromSize; }
};

/// Section 7's generator: an equal-traffic matrix (every r_i = c_j = t, every f_i = g_j = k) with
/// message sizes drawn from the spec. Deterministic in (p, spec, seed).
TrafficMatrix generate_traffic(int p, const TrafficSpec& spec, std::uint64_t seed);

/// Parses "k=K,l=L,t=BYTES" (l may be a fraction "1/32"; t may be left out, then t is
/// TrafficSpec::kFromSize) or "file=M.csv"; UsageError naming the bad part.
TrafficSpec parse_traffic(const std::string& text);

/// Reads a p x p matrix of non-negative integers, one row per line, comma-separated (blank lines
/// and lines starting with '#' are skipped); UsageError with the line number if malformed.
TrafficMatrix load_traffic_csv(const std::string& path);
/// The same from text already in memory (`what` names it in errors).
TrafficMatrix parse_traffic_csv(const std::string& text, const std::string& what);

/// The matrix a spec describes on p processors: the CSV file if given (its size must be p),
/// otherwise generate_traffic(p, spec, seed).
TrafficMatrix make_traffic(int p, const TrafficSpec& spec, std::uint64_t seed);

/// make_traffic built once for all the processors of a run that ask for the same (p, spec, seed)
/// while any of them still holds it: p private copies of a p x p matrix would take p^3 memory
/// (8 GiB on cm5:1024).
std::shared_ptr<const TrafficMatrix> shared_traffic(int p, const TrafficSpec& spec, std::uint64_t seed);

}  // namespace touchstone::algorithms
