#include "cli/distributed.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/pipe_partition.hpp"

namespace touchstone::cli {

std::shared_ptr<Partition> pipe_partition(const std::string& spec) {
  int in = -1, out = -1, index = -1, count = 0, used = 0;
  if (std::sscanf(spec.c_str(), "%d,%d,%d,%d%n", &in, &out, &index, &count, &used) != 4 ||
      used != static_cast<int>(spec.size()) || in < 0 || out < 0 || count < 1 || index < 0 || index >= count)
    throw UsageError(fmt::format("--split-pipe: expected READ_FD,WRITE_FD,PROCESS,PROCESSES, got '{}'", spec));
  return std::make_shared<PipePartition>(in, out, index, count);
}

}  // namespace touchstone::cli
