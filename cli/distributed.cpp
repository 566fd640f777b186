#include "cli/distributed.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/pipe_partition.hpp"

namespace touchstone::cli {

std::shared_ptr<Partition> pipe_partition(const std::string& spec) {
  const auto bad = [&] {
    return UsageError(fmt::format("--split-pipe: expected READ_FD,WRITE_FD,PROCESS,PROCESSES, got '{}'", spec));
  };
  std::array<int, 4> v{};  // read end, write end, this process, processes
  std::string_view rest = spec;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::size_t comma = i + 1 < v.size() ? rest.find(',') : rest.size();
    if (comma == std::string_view::npos || read_number(rest.substr(0, comma), v[i]) != NumberText::fits) throw bad();
    rest.remove_prefix(std::min(comma + 1, rest.size()));
  }
  const auto [in, out, index, count] = v;
  if (in < 0 || out < 0 || count < 1 || index < 0 || index >= count) throw bad();
  return std::make_shared<PipePartition>(in, out, index, count);
}

}  // namespace touchstone::cli
