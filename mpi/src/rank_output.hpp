// What each rank writes to stdout and stderr, kept apart while the ranks run and written out in the
// sequential order (docs/mpi.md, "Output"). Internal to `touchstone mpirun` (launch.cpp).
#pragma once
#include <cstdio>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

namespace touchstone::mpi {

/// While it lives, the process's stdout and stderr (the C streams, and C++'s cout, cerr and clog)
/// are streams of its own: what a rank's code writes to them is kept in that rank's buffers, and
/// what any other thread writes (the runtime, the watchdog) goes straight out. Each time a rank
/// gives up the host CPU (RunOptions::on_vp_pause, which the runtime calls in the sequential order)
/// its buffers are written out. So the output is the same whether the ranks' code runs one at a
/// time or on several host cores at once (RunOptions::hooks_are_per_vp), and what a rank printed
/// before it blocked has reached the terminal or file.
/// With `tag`, every line of a rank's stdout is written whole, prefixed "[rank] " (mpirun
/// --tag-output). Output written with write(2) on file descriptor 1 or 2 is not seen.
class RankOutput {
 public:
  RankOutput(int ranks, bool tag);
  ~RankOutput();
  RankOutput(const RankOutput&) = delete;
  RankOutput& operator=(const RankOutput&) = delete;

  /// Writes out what `rank` wrote since its last pause (lines only, with tags).
  void pause(int rank);
  /// Forgets what `rank` wrote since its last pause: code that ran ahead of the sequential order in
  /// a run that failed before that code's turn (RunOptions::on_vp_discard).
  void discard(int rank);
  /// Every rank's in rank order, the tagged ones' last lines too (a run ended, or the watchdog).
  void finish();

 private:
  struct Sink;
  class Buf;
  static ssize_t write_cookie(void* sink, const char* data, std::size_t n);
  void emit(int fd, std::string_view text) const;
  void emit_stdout(int rank, bool whole);

  bool tag_;
  std::vector<std::string> out_, err_;  // by rank: written since its last pause
  std::unique_ptr<Sink> out_sink_, err_sink_;
  std::FILE* saved_stdout_ = nullptr;
  std::FILE* saved_stderr_ = nullptr;
  std::FILE* own_stdout_ = nullptr;
  std::FILE* own_stderr_ = nullptr;
  std::unique_ptr<Buf> out_buf_, err_buf_;
  std::streambuf* saved_cout_ = nullptr;
  std::streambuf* saved_cerr_ = nullptr;
  std::streambuf* saved_clog_ = nullptr;
};

}  // namespace touchstone::mpi
