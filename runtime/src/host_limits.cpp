// What the host lets this process use: its cores (RunOptions::host_cores, the CLI's --host-cores
// default), its memory mappings (the VPs' stack guards, the copies of a privatized MPI program) and
// its folder for temporary files.
#include <sched.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/run.hpp"

namespace touchstone {

namespace {
// cgroup v2's CPU quota, "QUOTA PERIOD" or "max PERIOD": a container limited to 2.5 CPUs has the
// quota of 3 cores at most. 0: no quota (or no cgroup v2).
int cgroup_quota_cores() {
  std::ifstream in("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  try {
    const long long q = std::stoll(quota);
    return q > 0 ? static_cast<int>((q + period - 1) / period) : 0;
  } catch (const std::exception&) {
    return 0;
  }
}
}  // namespace

int available_host_cores() {
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) cores = CPU_COUNT(&allowed);
  if (const int quota = cgroup_quota_cores(); quota > 0 && quota < cores) cores = quota;
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
