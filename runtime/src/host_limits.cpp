// What the host lets this process use: its cores (RunOptions::host_cores, the CLI's --host-cores
// default), its memory mappings (the VPs' stack guards, the copies of a privatized MPI program) and
// its folder for temporary files.
#include <sched.h>
#include <stdlib.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/run.hpp"

namespace touchstone {

namespace {
// The first line of a small file, or "" when it cannot be read.
std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// A whole non-negative number, or nullopt (v2's "max", v1's -1, an absent or unreadable file).
std::optional<unsigned long long> number(const std::string& text) { return number_from_text<unsigned long long>(text); }

// Bytes of a memory limit file; 0 for none, v1's "no limit" being a huge number rounded to a page.
std::size_t memory_limit(const std::string& file) {
  const auto v = number(first_line(file));
  return v && *v < (1ULL << 62) ? static_cast<std::size_t>(*v) : 0;
}

// CPUs of a v2 cpu.max ("QUOTA PERIOD", or "max PERIOD" for none).
double cpu_max(const std::string& file) {
  std::istringstream in(first_line(file));
  std::string quota, period;
  in >> quota >> period;
  const auto q = number(quota), p = number(period);
  return q && p && *p > 0 ? static_cast<double>(*q) / static_cast<double>(*p) : 0;
}

// CPUs of a v1 cpu controller's folder: cpu.cfs_quota_us over cpu.cfs_period_us (-1: none).
double cfs_quota(const std::string& folder) {
  const auto q = number(first_line(folder + "cpu.cfs_quota_us")), p = number(first_line(folder + "cpu.cfs_period_us"));
  return q && p && *p > 0 ? static_cast<double>(*q) / static_cast<double>(*p) : 0;
}

// Whether a /proc/self/cgroup line's comma-separated controllers name `controller`.
bool names(std::string_view controllers, std::string_view controller) {
  while (true) {
    const std::size_t comma = controllers.find(',');
    if (controllers.substr(0, comma) == controller) return true;
    if (comma == std::string_view::npos) return false;
    controllers.remove_prefix(comma + 1);
  }
}

// Keeps the least of the positive limits seen (0: none yet).
template <class T>
void keep_least(T& kept, T v) {
  if (v > 0 && (kept == 0 || v < kept)) kept = v;
}

// The smallest positive limit(folder) over the cgroup `dir` (a path of /proc/self/cgroup) and its
// ancestors under `root`, each folder ending in '/'; 0 where none has one.
template <class Limit>
auto smallest_up_to_root(const std::string& root, std::string dir, Limit limit) {
  decltype(limit(root)) best = 0;
  while (true) {
    keep_least(best, limit(root + dir + (dir.empty() || dir.back() != '/' ? "/" : "")));
    if (dir.empty() || dir == "/") return best;
    dir = dir.substr(0, dir.rfind('/'));
  }
}
}  // namespace

CgroupLimits cgroup_limits(const std::string& proc_self_cgroup, const std::string& cgroup_root) {
  CgroupLimits l;
  // "0::/path" (v2) or "N:memory:/path", "N:cpu,cpuacct:/path" (v1, controllers mounted by name).
  std::ifstream f(proc_self_cgroup);
  for (std::string line; std::getline(f, line);) {
    const auto c1 = line.find(':'), c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    const std::string_view controllers = std::string_view(line).substr(c1 + 1, c2 - c1 - 1);
    const std::string path = line.substr(c2 + 1);
    if (controllers.empty()) {
      keep_least(l.memory_bytes, smallest_up_to_root(cgroup_root, path, [](const std::string& d) {
                   return memory_limit(d + "memory.max");
                 }));
      keep_least(l.cpus,
                 smallest_up_to_root(cgroup_root, path, [](const std::string& d) { return cpu_max(d + "cpu.max"); }));
    }
    if (names(controllers, "memory"))
      keep_least(l.memory_bytes, smallest_up_to_root(cgroup_root + "/memory", path, [](const std::string& d) {
                   return memory_limit(d + "memory.limit_in_bytes");
                 }));
    if (names(controllers, "cpu")) keep_least(l.cpus, smallest_up_to_root(cgroup_root + "/cpu", path, cfs_quota));
  }
  return l;
}

int available_host_cores() {
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) cores = CPU_COUNT(&allowed);
  // Read once: every run without --host-cores asks, and reading the cgroups costs about 80 us,
  // while a process seldom moves to another cgroup (its affinity, cheap to read, is read each time).
  static const double quota = cgroup_limits().cpus;
  if (quota > 0 && std::ceil(quota) < cores) cores = static_cast<int>(std::ceil(quota));
  return cores > 0 ? cores : 1;
}

ProcessMappings process_mappings() {
  ProcessMappings m;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) ++m.in_use;
  std::ifstream limit("/proc/sys/vm/max_map_count");
  if (std::size_t n = 0; limit >> n && n > 0) m.limit = n;
  return m;
}

std::string host_temporary_folder() {
  const char* env = std::getenv("TMPDIR");
  const bool from_env = env && *env;
  const std::string folder = from_env ? env : "/tmp";
  std::error_code ec;
  const auto status = std::filesystem::status(folder, ec);
  if (status.type() != std::filesystem::file_type::directory)
    throw UsageError(fmt::format("the folder for temporary files, {}{}, {}", folder, from_env ? " ($TMPDIR)" : "",
                                 status.type() == std::filesystem::file_type::not_found ? "does not exist"
                                 : ec                                                   ? ec.message()
                                                                                        : "is not a folder"));
  return folder;
}

std::string make_temporary_folder(const std::string& prefix) {
  std::string path = (std::filesystem::path(host_temporary_folder()) / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(path.data()))
    throw UsageError(fmt::format("cannot make a temporary folder {}: {}", path, std::strerror(errno)));
  return path;
}

}  // namespace touchstone
