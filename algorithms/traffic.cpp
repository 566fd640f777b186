// Communication matrices, paper 003 section 2, and the matrix generator of section 7.
#include "algorithms/traffic.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/machines.hpp"
#include "touchstone/number_text.hpp"

namespace touchstone::algorithms {

TrafficMatrix::TrafficMatrix(int p) : p_(p), m_(static_cast<std::size_t>(p) * static_cast<std::size_t>(p), 0) {
  if (p < 1) throw UsageError(fmt::format("traffic matrix: p must be >= 1, got {}", p));
}

TrafficMatrix::TrafficMatrix(int p, std::vector<std::int64_t> row_major) : TrafficMatrix(p) {
  if (row_major.size() != m_.size())
    throw UsageError(fmt::format("traffic matrix: {} entries given for a {}x{} matrix", row_major.size(), p, p));
  for (std::size_t x = 0; x < row_major.size(); ++x)
    if (row_major[x] < 0)
      throw UsageError(fmt::format("traffic matrix: entry ({},{}) is negative", x / static_cast<std::size_t>(p),
                                   x % static_cast<std::size_t>(p)));
  m_ = std::move(row_major);
}

std::size_t TrafficMatrix::idx(int i, int j) const {
  if (i < 0 || i >= p_ || j < 0 || j >= p_)
    throw UsageError(fmt::format("traffic matrix: ({},{}) outside a {}x{} matrix", i, j, p_, p_));
  return static_cast<std::size_t>(i) * static_cast<std::size_t>(p_) + static_cast<std::size_t>(j);
}

void TrafficMatrix::set(int i, int j, std::int64_t bytes) {
  if (bytes < 0) throw UsageError(fmt::format("traffic matrix: entry ({},{}) set negative", i, j));
  m_[idx(i, j)] = bytes;
}

std::span<const std::int64_t> TrafficMatrix::row(int i) const {
  return std::span<const std::int64_t>(m_).subspan(idx(i, 0), static_cast<std::size_t>(p_));
}

std::int64_t TrafficMatrix::r_i(int i) const {
  const auto v = row(i);
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}
std::int64_t TrafficMatrix::c_j(int j) const {
  std::int64_t s = 0;
  for (int i = 0; i < p_; ++i) s += at(i, j);
  return s;
}
int TrafficMatrix::f_i(int i) const {
  const auto v = row(i);
  return static_cast<int>(std::count_if(v.begin(), v.end(), [](std::int64_t x) { return x > 0; }));
}
int TrafficMatrix::g_j(int j) const {
  int n = 0;
  for (int i = 0; i < p_; ++i) n += at(i, j) > 0 ? 1 : 0;
  return n;
}

namespace {
template <class T, class F>
T max_over(int p, F f) {
  T best = 0;
  for (int i = 0; i < p; ++i) best = std::max<T>(best, f(i));
  return best;
}
}  // namespace

std::int64_t TrafficMatrix::r() const { return max_over<std::int64_t>(p_, [&](int i) { return r_i(i); }); }
std::int64_t TrafficMatrix::c() const { return max_over<std::int64_t>(p_, [&](int j) { return c_j(j); }); }
std::int64_t TrafficMatrix::t() const { return std::max(r(), c()); }
int TrafficMatrix::f() const { return max_over<int>(p_, [&](int i) { return f_i(i); }); }
int TrafficMatrix::g() const { return max_over<int>(p_, [&](int j) { return g_j(j); }); }
int TrafficMatrix::h() const { return std::max(f(), g()); }
std::int64_t TrafficMatrix::total() const { return std::accumulate(m_.begin(), m_.end(), std::int64_t{0}); }

namespace {

// splitmix64: a fixed generator, so a seed gives the same matrix with any standard library.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n), n > 0 (the modulo bias is below 2^-40 for the n used here).
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }
};

std::vector<int> iota_vec(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

/// `bytes` split over `n` parts whose sizes differ by at most one.
void split_even(std::int64_t bytes, int n, std::vector<std::int64_t>& out) {
  for (int x = 0; x < n; ++x) out.push_back(bytes / n + (x < bytes % n ? 1 : 0));
}

}  // namespace

// Section 7: "Of the k processors receiving messages from a single processor, the fraction lt of
// the traffic reached (1-l)k processors, while the remaining (1-l)t traffic reached lk processors",
// and "the sum of the messages being sent out and received at each processor was fixed at t".
// Construction: k distinct offsets d_x and k weights w_x (the light and heavy groups, each split
// evenly) give the circulant m[i][(i + d_x) mod p] = w_x, whose every row and column sums to t;
// random row and column permutations then hide the circulant structure without changing any sum.
TrafficMatrix generate_traffic(int p, const TrafficSpec& spec, std::uint64_t seed) {
  if (spec.k < 1 || spec.k > p) throw UsageError(fmt::format("traffic: k must be in 1..{}, got {}", p, spec.k));
  if (!(spec.l >= 0.0 && spec.l <= 1.0)) throw UsageError(fmt::format("traffic: l must be in [0,1], got {}", spec.l));
  if (spec.t == TrafficSpec::kFromSize)
    throw UsageError("traffic: no t given (touchstone run and sweep take it from --size and --sizes)");
  if (spec.t < 0) throw UsageError(fmt::format("traffic: t must be >= 0, got {}", spec.t));
  const int heavy = static_cast<int>(std::llround(spec.l * spec.k));  // lk processors
  const int light = spec.k - heavy;                                   // (1-l)k processors
  std::int64_t light_bytes = static_cast<std::int64_t>(std::llround(spec.l * static_cast<double>(spec.t)));
  if (heavy == 0) light_bytes = spec.t;
  if (light == 0) light_bytes = 0;
  std::vector<std::int64_t> w;
  split_even(light_bytes, light, w);
  split_even(spec.t - light_bytes, heavy, w);

  Rng rng{seed ^ 0x7472616666696333ULL};  // "traffic3"
  std::vector<int> offsets = iota_vec(p);
  rng.shuffle(offsets);
  rng.shuffle(w);
  std::vector<int> rows = iota_vec(p), cols = iota_vec(p);
  rng.shuffle(rows);
  rng.shuffle(cols);
  TrafficMatrix m(p);
  for (int i = 0; i < p; ++i)
    for (int x = 0; x < spec.k; ++x)
      m.set(rows[static_cast<std::size_t>(i)],
            cols[static_cast<std::size_t>((i + offsets[static_cast<std::size_t>(x)]) % p)],
            w[static_cast<std::size_t>(x)]);
  return m;
}

namespace {
// Every number of a traffic spec or file is range-checked, never wrapped. An entry (and t)
// is at most 2^40 bytes, so a row or column of up to 2^20 of them sums below 2^60: no overflow.
constexpr std::int64_t kMaxTrafficBytes = std::int64_t{1} << 40;
constexpr std::int64_t kMaxTrafficK = 1 << 20;
constexpr std::size_t kMaxTrafficFileBytes = std::size_t{64} << 20;

std::int64_t parse_int(const std::string& s, const std::string& what, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const NumberText read = read_number(s, v);
  if (read == NumberText::not_a_number) throw UsageError(fmt::format("{}: '{}' is not an integer", what, s));
  if (read == NumberText::out_of_range || v < lo || v > hi)
    throw UsageError(fmt::format("{}: {} is outside {}..{}", what, s, lo, hi));
  return v;
}

double parse_fraction(const std::string& s) {
  const auto slash = s.find('/');
  if (slash != std::string::npos) {
    const auto num = parse_int(s.substr(0, slash), "--traffic l", 0, kMaxTrafficK);
    const auto den = parse_int(s.substr(slash + 1), "--traffic l", 0, kMaxTrafficK);
    if (den <= 0) throw UsageError(fmt::format("--traffic: l={} has a non-positive denominator", s));
    return static_cast<double>(num) / static_cast<double>(den);
  }
  const auto v = number_from_text<double>(s);
  if (!v) throw UsageError(fmt::format("--traffic: l='{}' is not a number or fraction", s));
  return *v;
}
}  // namespace

TrafficSpec parse_traffic(const std::string& text) {
  TrafficSpec spec;
  spec.t = TrafficSpec::kFromSize;
  bool has_k = false;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos)
      throw UsageError(fmt::format("--traffic: '{}' is not key=value (expected k=K,l=L,t=BYTES or file=M.csv)", part));
    const std::string key = part.substr(0, eq), val = part.substr(eq + 1);
    if (key == "k") spec.k = static_cast<int>(parse_int(val, "--traffic k", 1, kMaxTrafficK)), has_k = true;
    else if (key == "l") spec.l = parse_fraction(val);
    else if (key == "t") spec.t = parse_int(val, "--traffic t", 0, kMaxTrafficBytes);
    else if (key == "file") spec.file = val;
    else throw UsageError(fmt::format("--traffic: unknown key '{}' (known: k, l, t, file)", key));
  }
  if (spec.file.empty() && !has_k)
    throw UsageError(fmt::format("--traffic '{}': give k=K (and optionally l=L and t=BYTES), or file=M.csv", text));
  if (!(spec.l >= 0.0 && spec.l <= 1.0)) throw UsageError(fmt::format("--traffic: l must be in [0,1], got {}", spec.l));
  if (spec.file.empty() && spec.k < 1) throw UsageError(fmt::format("--traffic: k must be >= 1, got {}", spec.k));
  return spec;
}

TrafficMatrix parse_traffic_csv(const std::string& text, const std::string& what) {
  std::vector<std::vector<std::int64_t>> rows;
  std::stringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    std::vector<std::int64_t> row;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) {
      const auto b = cell.find_first_not_of(" \t"), e = cell.find_last_not_of(" \t");
      const std::string trimmed = b == std::string::npos ? std::string{} : cell.substr(b, e - b + 1);
      if (!trimmed.empty() && trimmed[0] == '-')
        throw UsageError(fmt::format("{} line {}: negative entry {}", what, lineno, trimmed));
      const auto v = parse_int(trimmed.empty() ? "0" : trimmed, fmt::format("{} line {}", what, lineno), 0,
                               kMaxTrafficBytes);
      row.push_back(v);
    }
    if (!rows.empty() && row.size() != rows.front().size())
      throw UsageError(fmt::format("{} line {}: {} entries, the first row has {}", what, lineno, row.size(),
                                   rows.front().size()));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw UsageError(fmt::format("{}: no rows", what));
  if (rows.size() != rows.front().size())
    throw UsageError(fmt::format("{}: {} rows of {} entries; a communication matrix is square", what, rows.size(),
                                 rows.front().size()));
  std::vector<std::int64_t> flat;
  for (auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return TrafficMatrix(static_cast<int>(rows.size()), std::move(flat));
}

TrafficMatrix load_traffic_csv(const std::string& path) {
  // A regular file of at most 64 MiB (file=/dev/zero would be read forever).
  return parse_traffic_csv(read_input_file("--traffic: traffic file", path, kMaxTrafficFileBytes), path);
}

TrafficMatrix make_traffic(int p, const TrafficSpec& spec, std::uint64_t seed) {
  if (spec.file.empty()) return generate_traffic(p, spec, seed);
  TrafficMatrix m = load_traffic_csv(spec.file);
  if (m.p() != p)
    throw UsageError(fmt::format("--traffic: '{}' is a {}x{} matrix but the machine has {} processors", spec.file,
                                 m.p(), m.p(), p));
  return m;
}

std::shared_ptr<const TrafficMatrix> shared_traffic(int p, const TrafficSpec& spec, std::uint64_t seed) {
  using Key = std::tuple<int, int, double, std::int64_t, std::string, std::uint64_t>;
  static std::mutex mu;
  static std::map<Key, std::weak_ptr<const TrafficMatrix>> cache;
  std::lock_guard lk(mu);
  std::weak_ptr<const TrafficMatrix>& slot = cache[Key{p, spec.k, spec.l, spec.t, spec.file, seed}];
  if (auto m = slot.lock()) return m;
  auto m = std::make_shared<const TrafficMatrix>(make_traffic(p, spec, seed));
  slot = m;
  std::erase_if(cache, [](const auto& entry) { return entry.second.expired(); });
  return m;
}

}  // namespace touchstone::algorithms
