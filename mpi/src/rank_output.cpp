// Each rank's stdout and stderr apart, written out at its pauses (rank_output.hpp).
#include "rank_output.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "touchstone/error.hpp"
#include "touchstone/packed.hpp"
#include "touchstone/proc.hpp"

namespace touchstone::mpi {

// One of the two streams: where a write of a rank's code goes, by the rank that the calling thread
// runs (Proc::current), or straight to the file descriptor from any other thread.
struct RankOutput::Sink {
  RankOutput* owner;
  std::vector<std::string>* by_rank;
  int fd;

  void write(std::string_view data) const {
    const Proc* p = Proc::current();
    const int rank = p ? p->rank() : -1;
    if (rank >= 0 && rank < static_cast<int>(by_rank->size())) {
      const std::lock_guard lock(owner->rank_locks_[static_cast<std::size_t>(rank)]);
      (*by_rank)[static_cast<std::size_t>(rank)] += data;
    } else {
      owner->emit(fd, data);
    }
  }
};

// C++'s streams onto the same sinks. Unbuffered: a rank's text reaches its sink in the call that
// wrote it, whichever host thread made the call.
class RankOutput::Buf : public std::streambuf {
 public:
  explicit Buf(const Sink& sink) : sink_(sink) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    sink_.write(std::string_view(&ch, 1));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    sink_.write(std::string_view(s, static_cast<std::size_t>(n)));
    return n;
  }

 private:
  const Sink& sink_;
};

ssize_t RankOutput::write_cookie(void* sink, const char* data, std::size_t n) {
  static_cast<const Sink*>(sink)->write(std::string_view(data, n));
  return static_cast<ssize_t>(n);
}

RankOutput::RankOutput(int ranks, bool tag)
    : tag_(tag),
      out_(static_cast<std::size_t>(ranks)),
      err_(static_cast<std::size_t>(ranks)),
      unfinished_(static_cast<std::size_t>(ranks), 0),
      rank_locks_(std::make_unique<FlagLock[]>(static_cast<std::size_t>(ranks))) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  out_sink_ = std::make_unique<Sink>(Sink{this, &out_, STDOUT_FILENO});
  err_sink_ = std::make_unique<Sink>(Sink{this, &err_, STDERR_FILENO});
  const cookie_io_functions_t io{nullptr, &RankOutput::write_cookie, nullptr, nullptr};
  own_stdout_ = fopencookie(out_sink_.get(), "w", io);
  own_stderr_ = fopencookie(err_sink_.get(), "w", io);
  if (!own_stdout_ || !own_stderr_) {
    if (own_stdout_) std::fclose(own_stdout_);
    if (own_stderr_) std::fclose(own_stderr_);
    throw UsageError("mpirun: cannot set up the ranks' stdout and stderr");
  }
  // Unbuffered: each C call (printf, puts, fwrite) hands its whole text to the sink under the
  // stream's lock, on the thread of the rank that made it; a shared buffer would mix ranks.
  std::setvbuf(own_stdout_, nullptr, _IONBF, 0);
  std::setvbuf(own_stderr_, nullptr, _IONBF, 0);
  saved_stdout_ = stdout;
  saved_stderr_ = stderr;
  stdout = own_stdout_;  // glibc's stdout and stderr are variables a program may set
  stderr = own_stderr_;
  out_buf_ = std::make_unique<Buf>(*out_sink_);
  err_buf_ = std::make_unique<Buf>(*err_sink_);
  saved_cout_ = std::cout.rdbuf(out_buf_.get());
  saved_cerr_ = std::cerr.rdbuf(err_buf_.get());
  saved_clog_ = std::clog.rdbuf(err_buf_.get());
}

RankOutput::~RankOutput() {
  finish();
  std::cout.rdbuf(saved_cout_);
  std::cerr.rdbuf(saved_cerr_);
  std::clog.rdbuf(saved_clog_);
  stdout = saved_stdout_;
  stderr = saved_stderr_;
  std::fclose(own_stdout_);
  std::fclose(own_stderr_);
}

void RankOutput::emit(int fd, std::string_view text) const {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;  // a closed pipe: the output is lost, as a process's would be
    done += static_cast<std::size_t>(n);
  }
}

// A rank's stdout: as written, or with tags its whole lines (and with `whole` the rest as a line).
std::string RankOutput::take_stdout(int rank, bool whole) {
  std::string& part = out_[static_cast<std::size_t>(rank)];
  if (!tag_) return std::exchange(part, {});
  std::string lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = part.find('\n', start)) != std::string::npos; start = nl + 1)
    lines += fmt::format("[{}] {}", rank, std::string_view(part).substr(start, nl + 1 - start));
  part.erase(0, start);
  if (whole && !part.empty()) {
    lines += fmt::format("[{}] {}\n", rank, part);
    part.clear();
  }
  return lines;
}

void RankOutput::emit_stdout(int rank, bool whole) {
  if (const std::string text = take_stdout(rank, whole); !text.empty()) emit(STDOUT_FILENO, text);
}

void RankOutput::pause(int rank) {
  if (rank < 0 || rank >= static_cast<int>(out_.size())) return;
  // A program that set a buffer on stdout anyway (a library's setvbuf the module does not route
  // to libtouchstone_mpi_rank.a): what the buffer holds is the pausing rank's when ranks take turns.
  std::fflush(own_stdout_);
  std::fflush(own_stderr_);
  std::unique_lock lock(rank_locks_[static_cast<std::size_t>(rank)]);
  std::string& err = err_[static_cast<std::size_t>(rank)];
  const auto at_pause = [&](std::string lines) {
    unfinished_[static_cast<std::size_t>(rank)] = out_[static_cast<std::size_t>(rank)].size();
    // A line finished since: those unfinished at the rank's cuts are in it (a split run's; one runs
    // a rank at a time).
    if (process_ >= 0 && !lines.empty())
      std::erase_if(unfinished_at_cut_, [&](const auto& u) { return u.first.first == rank; });
    return lines;
  };
  if (process_ >= 0) {
    const auto r = static_cast<std::size_t>(rank);
    Held h{turn_at_[r], turn_place_[r], rank, at_pause(take_stdout(rank, false)), std::exchange(err, {}), pieces_[r]};
    lock.unlock();
    if (h.out.empty() && h.err.empty()) return;
    const std::lock_guard held(held_lock_);
    held_.push_back(std::move(h));
    return;
  }
  if (const std::string text = at_pause(take_stdout(rank, false)); !text.empty()) emit(STDOUT_FILENO, text);
  if (!err.empty()) emit(STDERR_FILENO, err), err.clear();
}

void RankOutput::discard(int rank) {
  if (rank < 0 || rank >= static_cast<int>(out_.size())) return;
  const std::lock_guard lock(rank_locks_[static_cast<std::size_t>(rank)]);
  std::string& out = out_[static_cast<std::size_t>(rank)];
  out.resize(std::min(out.size(), unfinished_[static_cast<std::size_t>(rank)]));  // written before its pause
  err_[static_cast<std::size_t>(rank)].clear();
}

void RankOutput::finish() {
  if (process_ >= 0) {
    pending_.insert(pending_.end(), std::make_move_iterator(held_.begin()), std::make_move_iterator(held_.end()));
    held_.clear();
    emit_in_order(pending_);
  }
  for (std::size_t r = 0; r < out_.size(); ++r) {
    const std::lock_guard lock(rank_locks_[r]);
    emit_stdout(static_cast<int>(r), true);
    if (!err_[r].empty()) emit(STDERR_FILENO, err_[r]), err_[r].clear();
  }
}

// ------------------------------------------------------------------ split runs

void RankOutput::split(int process) {
  process_ = process;
  turn_at_.assign(out_.size(), 0);
  turn_place_.assign(out_.size(), 0);
  pieces_.assign(out_.size(), 0);
}

std::uint32_t RankOutput::cut(int rank) {
  if (process_ < 0 || rank < 0 || rank >= static_cast<int>(out_.size())) return 0;
  pause(rank);
  const std::uint32_t piece = ++pieces_[static_cast<std::size_t>(rank)];
  const std::lock_guard lock(rank_locks_[static_cast<std::size_t>(rank)]);
  if (const std::string& line = out_[static_cast<std::size_t>(rank)]; tag_ && !line.empty())
    unfinished_at_cut_[{rank, piece}] = line;
  return piece;
}

void RankOutput::drop_from(int rank, Time at, std::uint64_t place, std::uint32_t piece) {
  dropped_ = Dropped{at, place, rank, piece};
}

bool RankOutput::reached(const Held& h, Time failed_at, std::uint64_t failed_place) const {
  if (dropped_ && h.rank == dropped_->rank && h.at == dropped_->at && h.piece >= dropped_->piece) return false;
  return h.at < failed_at || (h.at == failed_at && h.place <= failed_place);
}

void RankOutput::resumed(int rank, Time now, std::uint64_t place) {
  if (rank < 0 || rank >= static_cast<int>(turn_at_.size())) return;
  turn_at_[static_cast<std::size_t>(rank)] = now;
  turn_place_[static_cast<std::size_t>(rank)] = place;
}

// In the sequential order: by the time of the turn, then by its place at its instant; the pauses
// of one process's turns at one place as it made them, hence the stable sort (process 0 appends
// each process's as that process held them).
void RankOutput::emit_in_order(std::vector<Held>& held) const {
  std::stable_sort(held.begin(), held.end(),
                   [](const Held& a, const Held& b) { return a.at != b.at ? a.at < b.at : a.place < b.place; });
  for (const Held& h : held) emit_held(h);
  held.clear();
}

void RankOutput::emit_held(const Held& h) const {
  if (!h.out.empty()) emit(STDOUT_FILENO, h.out);
  if (!h.err.empty()) emit(STDERR_FILENO, h.err);
}

void RankOutput::put_held(Packed& p, const Held& h) {
  p.put(h.at);
  p.put(h.place);
  p.put(h.rank);
  p.put(h.piece);
  p.put_text(h.out);
  p.put_text(h.err);
}

RankOutput::Held RankOutput::take_held(Unpacker& in) {
  const auto at = in.take<Time>();
  const auto place = in.take<std::uint64_t>();
  const auto rank = in.take<int>();
  const auto piece = in.take<std::uint32_t>();
  std::string out = in.take_text();
  return Held{at, place, rank, std::move(out), in.take_text(), piece};
}

// Every turn of a window comes before every turn of the next, so what process 0 has of the last
// window when this one ends is all of it: it goes out in order, and this window's waits for the others'.
std::vector<std::byte> RankOutput::window_notes() {
  std::vector<Held> mine;
  {
    const std::lock_guard lock(held_lock_);
    mine.swap(held_);
  }
  if (process_ == 0) {
    emit_in_order(pending_);
    pending_ = std::move(mine);
    return {};
  }
  Packed p;
  for (const Held& h : mine) put_held(p, h);
  return std::move(p.bytes);
}

void RankOutput::take_window_notes(std::span<const std::byte> notes) {
  if (process_ != 0) return;
  for (Unpacker in(notes); !in.empty();) pending_.push_back(take_held(in));
}

// What the last window's swap did not carry (after a failure: what the ranks wrote in its window),
// then each rank's last lines (stdout with tags, the rest of stderr), from every process to process 0.
void RankOutput::finish_split(Partition& part, Time failed_at, std::uint64_t failed_place) {
  const auto reached = [&](const Held& h) { return this->reached(h, failed_at, failed_place); };
  std::vector<Held> last;  // each at its rank's last turn
  for (std::size_t r = 0; r < out_.size(); ++r) {
    std::unique_lock lock(rank_locks_[r]);
    Held h{turn_at_[r],
           turn_place_[r],
           static_cast<int>(r),
           take_stdout(static_cast<int>(r), true),
           std::exchange(err_[r], {}),
           pieces_[r]};
    lock.unlock();
    // The call that failed: what the rank had not finished of its line there is its last line (here,
    // in its own process), as in one process, which stops at the call.
    if (const auto u = dropped_ ? unfinished_at_cut_.find({dropped_->rank, dropped_->piece}) : unfinished_at_cut_.end();
        u != unfinished_at_cut_.end() && u->first.first == static_cast<int>(r))
      h = Held{dropped_->at, dropped_->place, h.rank, fmt::format("[{}] {}\n", r, u->second), {}, dropped_->piece - 1};
    if ((!h.out.empty() || !h.err.empty()) && reached(h)) last.push_back(std::move(h));
  }
  Packed mine;
  {
    const std::lock_guard lock(held_lock_);
    std::erase_if(held_, [&](const Held& h) { return !reached(h); });
    for (const std::vector<Held>* list : {&held_, &last}) {
      mine.put(list->size());
      for (const Held& h : *list) put_held(mine, h);
    }
    held_.clear();
  }
  const std::vector<std::byte> all = part.all_gather(mine.bytes);
  if (process_ != 0) return;
  last.clear();
  Unpacker in(all);
  for (int k = 0; k < part.count(); ++k) {
    for (auto n = in.take<std::size_t>(); n > 0; --n) pending_.push_back(take_held(in));
    for (auto n = in.take<std::size_t>(); n > 0; --n) last.push_back(take_held(in));
  }
  std::erase_if(pending_, [&](const Held& h) { return !reached(h); });  // others' of the failure's window
  emit_in_order(pending_);
  for (const Held& h : last) emit_held(h);  // by process, so by rank
}

}  // namespace touchstone::mpi
