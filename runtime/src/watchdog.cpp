#include "watchdog.hpp"

#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <cstdio>

#include <fmt/format.h>

#include "touchstone/time.hpp"

#include "frames.hpp"

namespace touchstone::detail {

std::atomic<int> watchdog_pending_signal{0};

namespace {

// The stack of the VP being sampled: written by the sampling signal's handler on the VP's thread.
constexpr int kMaxFrames = 48;
std::array<void*, kMaxFrames> g_frames{};
std::atomic<int> g_frame_count{-1};
constexpr int kSampleSignal = SIGURG;  // ignored by default, and left alone by programs

void on_stop_signal(int sig) {
  // A second signal while the first is handled: the user insists, the default action ends us.
  if (watchdog_pending_signal.exchange(sig) != 0) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

// Where the VP was when the sampling signal came: the first frame of its own stack. The handler's
// frames above it are the handler's, the kernel's signal return and, under a sanitizer, its
// interceptor: how many depends on the build, so the stack is cut at this address.
std::atomic<std::uintptr_t> g_interrupted_pc{0};

std::uintptr_t interrupted_pc(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;  // unknown: the stack is cut after the kernel's signal return instead
#endif
}

void on_sample_signal(int, siginfo_t*, void* context) {
  const int saved = errno;
  g_interrupted_pc.store(interrupted_pc(context), std::memory_order_relaxed);
  g_frame_count.store(::backtrace(g_frames.data(), kMaxFrames), std::memory_order_release);
  errno = saved;
}

}  // namespace


Watchdog::Watchdog(const RunOptions& options, Progress& progress, Hooks hooks)
    : opts_(options), progress_(progress), hooks_(std::move(hooks)) {
  if (opts_.wall_limit_s <= 0 && !opts_.stop_on_signals && !opts_.progress_line) return;
  watchdog_pending_signal.store(0);
  if (opts_.stop_on_signals) {
    ::signal(SIGINT, on_stop_signal);
    ::signal(SIGTERM, on_stop_signal);
  }
  struct sigaction sa {};
  sa.sa_sigaction = on_sample_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  ::sigaction(kSampleSignal, &sa, nullptr);
  void* warm[1];
  ::backtrace(warm, 1);  // loads the unwinder now: the signal handler must not have to
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (progress_line_shown_) std::fputs("\r\033[K", stderr);
  if (opts_.stop_on_signals) {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    watchdog_pending_signal.store(0);
  }
  ::signal(kSampleSignal, SIG_DFL);
}

void Watchdog::loop() {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last_change = start, last_line = start;
  std::uint64_t last_steps = progress_.steps.load();
  Clock::time_point signal_seen{};
  const bool tty = opts_.progress_line && ::isatty(STDERR_FILENO);
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return done_; })) {
    const auto now = Clock::now();
    const std::uint64_t steps = progress_.steps.load(std::memory_order_relaxed);
    if (steps != last_steps) last_steps = steps, last_change = now;
    const double still = std::chrono::duration<double>(now - last_change).count();
    if (const int sig = pending_signal()) {
      // The engine ends the run at its next step; a VP that never takes one is stopped here.
      if (signal_seen == Clock::time_point{}) signal_seen = now;
      if (now - signal_seen > std::chrono::seconds(2))
        hard_stop(fmt::format("interrupted by {}", sig == SIGINT ? "SIGINT" : "SIGTERM"), 128 + sig);
    }
    if (opts_.wall_limit_s > 0 && still >= opts_.wall_limit_s)
      hard_stop(fmt::format("no progress for {:g} host seconds (--wall-limit {:g})", still, opts_.wall_limit_s), 2);
    if (tty && now - start > std::chrono::seconds(3) && now - last_line >= std::chrono::seconds(1)) {
      last_line = now;
      const double host_s = std::chrono::duration<double>(now - start).count();
      const double t_us = to_us(progress_.now_ps.load(std::memory_order_relaxed));
      std::fprintf(stderr,
                   "\r\033[Ktouchstone: t=%.3f us virtual, %llu messages, %.1f host s (%.3g virtual us per host s)",
                   t_us, static_cast<unsigned long long>(progress_.messages.load(std::memory_order_relaxed)), host_s,
                   t_us / host_s);
      std::fflush(stderr);
      progress_line_shown_ = true;
    }
  }
}

std::string Watchdog::stack_of(int rank) {
  g_frame_count.store(-1);
  if (::pthread_kill(hooks_.thread_of(rank), kSampleSignal) != 0) return "  (its stack could not be taken)\n";
  int n = -1;
  for (int i = 0; i < 100 && (n = g_frame_count.load(std::memory_order_acquire)) < 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (n < 0) return "  (its stack could not be taken)\n";
  // The VP's own frames start at the interrupted address (frame 2 when it is not found: frame 0 is
  // the handler, frame 1 the kernel's signal return). The ones below are return addresses: the call
  // is the byte before.
  int first = 2;
  const std::uintptr_t at = g_interrupted_pc.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (reinterpret_cast<std::uintptr_t>(g_frames[static_cast<std::size_t>(i)]) == at && at != 0) {
      first = i;
      break;
    }
  std::string out;
  for (int i = first; i < n; ++i) {
    const auto* pc = static_cast<const char*>(g_frames[static_cast<std::size_t>(i)]) - (i > first ? 1 : 0);
    bool is_main = false;
    out += frame_text(i - first, pc, &is_main) + "\n";
    if (is_main) break;  // below main: the runtime's own
  }
  return out;
}

void Watchdog::hard_stop(const std::string& why, int exit_status) {
  if (progress_line_shown_) std::fputs("\r\033[K", stderr);
  const int rank = progress_.running.load();
  std::string report = fmt::format("touchstone: the run is ended: {}, at t={} us of virtual time.\n", why,
                                   to_us(progress_.now_ps.load()));
  if (rank >= 0) {
    report += fmt::format(
        "Rank {} was running its own code and made no call to Touchstone since (no MPI or Proc call: a loop that "
        "waits for something no call brings, or a long computation); its stack:\n{}",
        rank, stack_of(rank));
  } else {
    report += "No rank was running: the engine itself was busy.\n";
  }
  report += hooks_.write_evidence();
  if (opts_.before_hard_exit) opts_.before_hard_exit(rank, exit_status);
  std::fflush(stdout);
  std::fputs(report.c_str(), stderr);
  std::fflush(stderr);
  ::_exit(exit_status);
}

}  // namespace touchstone::detail
