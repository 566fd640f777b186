// The child runs the MPI program's ranks of this process under `touchstone mpirun`, whose programs
// call Touchstone's MPI: it cannot be an Open MPI process itself. This relay is: it takes each swap
// of the child's split run from one pipe, gathers every process's through Open MPI, and answers on
// the other pipe (the protocol of cli/distributed.cpp). When a child ends before the others reach a
// swap (a failure, a usage error), its relay says so in each gather, and the other relays tell
// their children, which end too; the relays stop when every child has ended.
#include "relay.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mpi_partition.hpp"
#include "touchstone/pipe_partition.hpp"

namespace {

// The touchstone command beside this program.
std::string touchstone_beside() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("touchstone") : (self.parent_path() / "touchstone").string();
}

}  // namespace

int relay_mpirun(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  touchstone::MpiPartition part;
  const int index = part.index(), count = part.count();
  ::signal(SIGPIPE, SIG_IGN);  // a child that has gone is seen as a failed write
  int to_child[2], from_child[2];
  if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) {
    std::perror("touchstone-distributed: pipe");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string touchstone = touchstone_beside();
  const std::string spec = std::to_string(to_child[0]) + "," + std::to_string(from_child[1]) + "," +
                           std::to_string(index) + "," + std::to_string(count);
  std::vector<std::string> args{touchstone, "mpirun", "--split-pipe", spec};
  for (int i = 2; i < argc; ++i) args.emplace_back(argv[i]);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    std::vector<char*> cargv;
    for (auto& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(touchstone.c_str(), cargv.data());
    std::fprintf(stderr, "touchstone-distributed: cannot run %s: %s\n", touchstone.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  bool ended = child < 0;
  if (child < 0) std::perror("touchstone-distributed: fork");
  for (;;) {
    touchstone::RelayPart mine;
    if (!ended) {
      std::optional<touchstone::RelayPart> part_of_child = touchstone::relay_take_part(from_child[0], count);
      ended = !part_of_child;
      if (part_of_child) mine = std::move(*part_of_child);
    }
    // One collective says whether any process's child has ended and, if none has, carries the
    // parts of an all-gather, or their first bytes (every child asks for the same exchange at each
    // swap: their runs agree on every window).
    const bool gather = !ended && !mine.all_to_all;
    const auto blocks = part.gather_blocks(
        gather ? std::span<const std::byte>(mine.bytes) : std::span<const std::byte>(), ended ? 1 : 0);
    const auto ended_children = std::count(blocks.words.begin(), blocks.words.end(), std::uint64_t{1});
    if (ended_children == count) break;
    if (ended_children > 0) {
      if (!ended) ended = !touchstone::relay_answer(to_child[1], nullptr);
      continue;
    }
    std::vector<std::byte> all;
    bool ok = true;
    try {
      all = gather ? part.finish_gather(blocks, mine.bytes) : part.all_to_all(mine.bytes, mine.to, mine.from);
    } catch (const touchstone::RunError& e) {  // in every process alike
      if (index == 0) std::fprintf(stderr, "touchstone-distributed: %s\n", e.what());
      ok = false;
    }
    ended = !touchstone::relay_answer(to_child[1], ok ? &all : nullptr);
  }
  ::close(to_child[1]);
  ::close(from_child[0]);
  int status = 0;
  int rc = 2;
  if (child > 0 && ::waitpid(child, &status, 0) == child)
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  MPI_Finalize();
  return rc;
}
