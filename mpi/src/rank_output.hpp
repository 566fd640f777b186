// What each rank writes to stdout and stderr, kept apart while the ranks run and written out in the
// sequential order (docs/mpi.md, "Output"). Internal to `touchstone mpirun` (launch.cpp).
#pragma once
#include <cstddef>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <streambuf>
#include <string>
#include <vector>

#include "flag_lock.hpp"

#include "touchstone/run.hpp"
#include "touchstone/time.hpp"

namespace touchstone {
struct Packed;
class Unpacker;
}  // namespace touchstone

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
///
/// In a run split over processes (split), what a rank writes out at a pause is held instead, with
/// its place in the sequential order: the time of the rank's turn, then the turn's place among
/// that instant's (RunOptions::on_vp_resume: by rank, docs/model.md 1.3, but a turn that its
/// instant woke comes after the turn that woke it). The others send theirs to process 0 in the
/// window's notes, and process 0 writes every process's out in that order, one window behind.
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
  /// In a split run, what this process holds first.
  void finish();

  /// A split run, this being process `process`: holds the pauses' output from now on.
  void split(int process);
  /// The rank's turn at `now`, at `place` among that instant's, begins (RunOptions::on_vp_resume):
  /// its next pause's place.
  void resumed(int rank, Time now, std::uint64_t place);
  /// Holds what `rank` wrote so far as at a pause, and numbers what it writes from now on as the
  /// rank's next piece, which it returns (a collective call's entry, compared only at the window's end).
  std::uint32_t cut(int rank);
  /// That call failed the run: what `rank` wrote from piece `piece` of its turn at `at` (at `place`
  /// among that instant's) on is dropped.
  void drop_from(int rank, Time at, std::uint64_t place, std::uint32_t piece);
  /// For the window's notes (add_window_notes): what this process held since the last window's
  /// end, which process 0 writes out with the others' at the next.
  std::vector<std::byte> window_notes();
  void take_window_notes(std::span<const std::byte> notes);
  /// The end of a split run, in every process (an all-gather): process 0 writes out what every
  /// process still holds, then every rank's last lines. After a failure (RunError::failed_at and
  /// failed_place), what ranks wrote in turns past it is dropped: one process never ran them; so is
  /// what drop_from names.
  void finish_split(Partition& part, Time failed_at = kNever, std::uint64_t failed_place = 0);

 private:
  struct Sink;
  class Buf;
  static ssize_t write_cookie(void* sink, const char* data, std::size_t n);
  void emit(int fd, std::string_view text) const;
  void emit_stdout(int rank, bool whole);
  std::string take_stdout(int rank, bool whole);
  // What a rank wrote out at one pause, held in a split run.
  struct Held {
    Time at;
    std::uint64_t place;  // the turn's at its instant
    int rank;
    std::string out, err;
    std::uint32_t piece = 0;  // the rank's, since its last cut
  };
  bool reached(const Held& h, Time failed_at, std::uint64_t failed_place) const;
  void emit_in_order(std::vector<Held>& held) const;
  void emit_held(const Held& h) const;
  static void put_held(Packed& p, const Held& h);
  static Held take_held(Unpacker& in);

  bool tag_;
  std::vector<std::string> out_, err_;  // by rank: written since its last pause
  // With tags, the line a rank had not finished at its last pause: it stays in out_, and code that
  // ran ahead and is discarded takes back only what it wrote after it.
  std::vector<std::size_t> unfinished_;
  // By rank, over its out_ and err_: its code appends to them on whichever host thread runs it, a
  // pause takes them on another, and the watchdog's hard stop on its own while the rank still runs.
  std::unique_ptr<FlagLock[]> rank_locks_;
  std::unique_ptr<Sink> out_sink_, err_sink_;
  std::FILE* saved_stdout_ = nullptr;
  std::FILE* saved_stderr_ = nullptr;
  std::FILE* own_stdout_ = nullptr;
  std::FILE* own_stderr_ = nullptr;
  std::unique_ptr<Buf> out_buf_, err_buf_;
  std::streambuf* saved_cout_ = nullptr;
  std::streambuf* saved_cerr_ = nullptr;
  std::streambuf* saved_clog_ = nullptr;
  // A split run's: this process's index (-1: not split), each rank's turn, what this process
  // held since the window's end, and (process 0) every process's of the last window.
  int process_ = -1;
  std::vector<Time> turn_at_;
  std::vector<std::uint64_t> turn_place_;
  std::vector<std::uint32_t> pieces_;
  struct Dropped {
    Time at;
    std::uint64_t place;
    int rank;
    std::uint32_t piece;
  };
  std::optional<Dropped> dropped_;
  // With tags, a rank's unfinished line at a cut, by (rank, the piece the cut began): if that piece
  // is dropped, the line comes out whole at the end, as where one process stops at the call.
  std::map<std::pair<int, std::uint32_t>, std::string> unfinished_at_cut_;
  std::mutex held_lock_;
  std::vector<Held> held_, pending_;
};

}  // namespace touchstone::mpi
