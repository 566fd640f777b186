// Host cost of source lines (docs/performance.md, "Source lines"): resolves N addresses spread
// evenly over this program's own code with touchstone::source_line, and prints the time of the
// first lookup (it opens the module's debug information) and of all N. With --offsets it prints the
// N addresses as offsets in its file instead, for the same lookups by another tool, and with --print
// each offset and what source_line says of it, to compare.
//
//   source_lines_cost [N] [--offsets | --print]      (N: 1000 unless given)
#include <link.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "touchstone/source_lines.hpp"

namespace {

struct Code {
  std::uintptr_t load_bias = 0, begin = 0, size = 0;  // begin: the link-time address
};

// The executable segment of the program itself (the first object the loader lists).
Code own_code() {
  Code code;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        auto& c = *static_cast<Code*>(out);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
            c = {info->dlpi_addr, ph.p_vaddr, ph.p_memsz};
            return 1;
          }
        }
        return 1;
      },
      &code);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 1000;
  bool offsets = false, print = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--offsets") == 0) {
      offsets = true;
    } else if (std::strcmp(argv[i], "--print") == 0) {
      print = true;
    } else if (char* end = nullptr; (n = static_cast<int>(std::strtol(argv[i], &end, 10))) <= 0 || *end) {
      std::fprintf(stderr, "usage: source_lines_cost [N] [--offsets | --print]  (N: a positive number of lookups)\n");
      return 1;
    }
  }
  const Code code = own_code();
  if (code.size == 0) {
    std::fprintf(stderr, "source_lines_cost: found no code segment of its own\n");
    return 1;
  }
  std::vector<std::uintptr_t> at;
  for (int k = 0; k < n; ++k) at.push_back(code.begin + code.size * static_cast<std::uintptr_t>(k) / static_cast<std::uintptr_t>(n));
  if (offsets) {
    for (auto a : at) std::printf("%#lx\n", static_cast<unsigned long>(a));
    return 0;
  }
  if (print) {
    for (auto a : at) {
      const auto s = touchstone::source_line(reinterpret_cast<const void*>(code.load_bias + a));
      std::printf("%#lx %s %s:%d\n", static_cast<unsigned long>(a), s.function.empty() ? "??" : s.function.c_str(),
                  s.file.empty() ? "??" : s.file.c_str(), s.line);
    }
    return 0;
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int with_line = touchstone::source_line(reinterpret_cast<const void*>(code.load_bias + at[0])).has_line() ? 1 : 0;
  const auto first = Clock::now();
  for (std::size_t k = 1; k < at.size(); ++k)
    with_line += touchstone::source_line(reinterpret_cast<const void*>(code.load_bias + at[k])).has_line() ? 1 : 0;
  const auto all = Clock::now();
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf("%d lookups: %.2f ms in all, the first (opening the module) %.2f ms; %d with a file and line\n", n,
              ms(all - start), ms(first - start), with_line);
  return 0;
}
