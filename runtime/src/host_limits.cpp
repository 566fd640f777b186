// What the host lets this process use: its cores (RunOptions::host_cores, the CLI's --host-cores
// default) and its memory mappings (the VPs' stack guards, the copies of a privatized MPI program).
#include <sched.h>

#include <fstream>
#include <string>
#include <thread>

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

}  // namespace touchstone
