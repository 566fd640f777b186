// The touchstone command line (docs/cli.md): the table of subcommands, one file each in cli/.
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/command.hpp"
#include "cli/debug_options.hpp"
#include "cli/parse_command_line.hpp"

namespace {

// In the order --help lists them.
constexpr std::array kCommands{&touchstone::cli::add_list,   &touchstone::cli::add_run,
                               &touchstone::cli::add_sweep,  &touchstone::cli::add_table,
                               &touchstone::cli::add_plot,   &touchstone::cli::add_loads,
                               &touchstone::cli::add_mpirun, &touchstone::cli::add_diff};

// Emulations allocate and free large payload buffers run after run: keep freed memory in the
// process for the next run instead of returning it to the kernel and faulting it in again.
// Buffers up to 32 MiB come from the heap, and the heap is never trimmed (-1): with a threshold
// (it was 1 GiB) glibc gives the heap's free top back whenever that much lies free above the last
// block in use, which in a sweep depends on what the other thread's job holds at that moment, and
// the next job faults it all in again, a trap per 4 KiB page (docs/performance.md, "Memory": not
// seen in the measured sweeps, but the one way their heap could go back). The process keeps its
// largest heap until it exits: the peak is unchanged, it is only not given back early.
// Fastbins are off (M_MXFAST 0; small chunks still come from each thread's tcache): with them,
// every request of a larger chunk first walks and merges all the small ones freed since the last
// (malloc_consolidate), and runs of many VPs that each make and drop small objects spent a tenth
// of their time there (docs/performance.md, "Many VPs").
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, -1);
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MXFAST, 0);
}

// The heap in huge pages. Where a first touch of a page is dear (on the development host's VM, 10
// to 25 us for each 4 KiB page), a run of many VPs spent much of its time faulting in its heap: the
// VPs' state, the engine's queues, the algorithms' schedules (60,000 faults for 65,536 VPs,
// docs/performance.md). glibc grows its heap by the request and M_TOP_PAD more; the first growth,
// made here, is advised MADV_HUGEPAGE (Debian's transparent-huge-page mode, "madvise", honours it),
// so the heap's first GiB comes 2 MiB at a time. A later growth is a mapping of its own, without
// the advice (glibc has no hook to give it), and where brk fails glibc maps its heap elsewhere, which
// is left as it is. Only touched pages take memory: the rest of the GiB is address space.
void heap_in_huge_pages() {
  constexpr std::size_t kTopPad = std::size_t{1} << 30, kHugePage = std::size_t{2} << 20;
  mallopt(M_TOP_PAD, kTopPad);
  const auto before = reinterpret_cast<std::uintptr_t>(sbrk(0));
  void* volatile grown = std::malloc(256 << 10);  // more than the heap's top holds: it grows now
  std::free(grown);
  const auto after = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t from = (before + kHugePage - 1) / kHugePage * kHugePage;
  if (after > from) ::madvise(reinterpret_cast<void*>(from), after - from, MADV_HUGEPAGE);  // advice: may fail, harmlessly
}

}  // namespace

int main(int argc, char** argv) {
  using namespace touchstone::cli;
  keep_freed_memory();
  heap_in_huge_pages();
  CLI::App app{"Touchstone: emulates distributed-memory parallel machines on one workstation, in exact virtual time"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "touchstone 0.1.0");
  std::vector<Subcommand> commands;
  for (const auto add : kCommands) commands.push_back(add(app));
  // CLI11 only says "A subcommand is required" for a misspelled command: name it and the known ones.
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const Subcommand& c : commands) {
      found |= c.app->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + c.app->get_name();
    }
    if (!found) {
      fmt::print(stderr, "error: unknown command '{}' (known: {}; see --help)\n", argv[1], known);
      return 1;
    }
  }
  normalize_mpirun_args(argc, argv);
  normalize_sweep_args(argc, argv);
  if (const auto code = parse_command_line(app, argc, argv)) return *code;
  try {
    for (const Subcommand& c : commands)
      if (*c.app) return c.run();
  } catch (const std::exception& e) {
    return report_failure(e);
  }
  return 0;
}
