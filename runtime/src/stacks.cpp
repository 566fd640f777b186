#include "stacks.hpp"

#include "executor.hpp"
#include "frames.hpp"
#include "touchstone/run.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace touchstone::detail {

namespace {
std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Runs fn(first, last) over [0, count) in contiguous ranges on up to `threads` host threads, the
// calling one among them. Each range holds at least kStacksPerThread stacks: a thread costs tens
// of microseconds to start, a stack's page a few. A thread the system refuses (a limit on the
// process's threads) leaves its ranges to the calling one.
template <class Fn>
void over_stacks(std::size_t count, unsigned threads, Fn fn) {
  constexpr std::size_t kStacksPerThread = 4096;
  const std::size_t n = std::clamp<std::size_t>(count / kStacksPerThread, 1, std::max(threads, 1u));
  std::vector<std::thread> helpers;
  helpers.reserve(n - 1);
  std::size_t k = 1;
  try {
    for (; k < n; ++k) helpers.emplace_back(fn, count * k / n, count * (k + 1) / n);
  } catch (const std::system_error&) {
  }
  for (std::size_t r = k; r < n; ++r) fn(count * r / n, count * (r + 1) / n);
  fn(std::size_t{0}, count / n);
  for (auto& h : helpers) h.join();
}

// Linux 6.13's guard regions (include/uapi/asm-generic/mman-common.h); Debian 12's headers predate
// them, and its kernel refuses the advice with EINVAL.
#ifndef MADV_GUARD_INSTALL
constexpr int MADV_GUARD_INSTALL = 102;
#endif
}  // namespace

// ---------------------------------------------------------------- overflow reports

// The live regions, for the fault handler (which may only read them: a fixed table of atomics).
struct OverflowReports {
  static constexpr std::size_t kSlots = 256;
  // The faults a VP's own code can die of: its report names the VP before the process dies.
  static constexpr std::array<int, 5> kSignals{SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  static std::array<std::atomic<const StackRegion*>, kSlots>& live() {
    static std::array<std::atomic<const StackRegion*>, kSlots> regions{};
    return regions;
  }
  // The handler each of kSignals had before ours, in the same order.
  static std::array<struct sigaction, kSignals.size()>& previous() {
    static std::array<struct sigaction, kSignals.size()> prev{};
    return prev;
  }

  static void add(const StackRegion* r) {
    for (auto& slot : live()) {
      const StackRegion* none = nullptr;
      if (slot.compare_exchange_strong(none, r)) return;
    }  // more live regions than slots: that region's overflows die unnamed, still on the guard
  }
  static void remove(const StackRegion* r) {
    for (auto& slot : live()) {
      const StackRegion* mine = r;
      if (slot.compare_exchange_strong(mine, nullptr)) return;
    }
  }

  // Async-signal-safe: write(2) of text formatted by hand.
  static void say(const char* s) {
    const std::size_t n = std::strlen(s);
    if (::write(STDERR_FILENO, s, n) < 0) return;
  }
  static void say(std::size_t v) {
    char buf[24];
    char* p = buf + sizeof buf;
    *--p = '\0';
    do *--p = static_cast<char>('0' + v % 10); while ((v /= 10) != 0);
    say(p);
  }

  // True when addr is on a guard page of a live region: then it names the VP that overflowed.
  static bool said_overflow(const std::byte* addr) {
    for (auto& slot : live()) {
      const StackRegion* r = slot.load(std::memory_order_acquire);
      if (!r || addr < r->base_ || addr >= r->base_ + r->bytes_) continue;
      const auto off = static_cast<std::size_t>(addr - r->base_);
      if (off % r->slot_ >= r->guard_) continue;
      say("touchstone: the VP of rank ");
      say(r->first_rank_ + off / r->slot_);
      say(" overflowed its stack of ");
      say(r->stack_ >> 10);
      say(" KiB (give VPs larger stacks with --stack-kb, or RunOptions::stack_bytes)\n");
      return true;
    }
    return false;
  }

  static const char* describe(int sig) {
    switch (sig) {
      case SIGSEGV: return "SIGSEGV (an invalid memory access)";
      case SIGBUS: return "SIGBUS (a bus error)";
      case SIGFPE: return "SIGFPE (an arithmetic error, such as an integer division by zero)";
      case SIGILL: return "SIGILL (an illegal instruction)";
      default: return "SIGABRT (abort(), for example a failed assert)";
    }
  }

  // Where the VP was: its stack, innermost first, each frame with its function, file and line
  // (frames.hpp) when a child process could look them up, else as module(function+offset)[address]
  // (backtrace_symbols_fd writes without allocating). Frames 0 and 1 are this handler and the
  // kernel's signal return. A stack overflow's recursion shows its innermost frames only.
  static void say_stack() {
    constexpr int kFrames = 18;
    std::array<void*, kFrames> frames{};
    const int n = ::backtrace(frames.data(), kFrames);
    if (n <= 2) return;
    say("touchstone: its stack, innermost first:\n");
    if (!said_with_lines(frames.data() + 2, n - 2)) ::backtrace_symbols_fd(frames.data() + 2, n - 2, STDERR_FILENO);
  }

  // Reading debug information is not async-signal-safe: it allocates, and the fault may have left
  // the allocator's lock held (abort() from a heap check). So a child process, made by the fork
  // system call itself (glibc's fork takes the allocator's locks first), looks the lines up and
  // writes them into a pipe; an alarm ends it should it block on a lock another thread held. Only
  // a child that finished has its text copied. The sanitizers' runtimes do not survive such a child
  // (AddressSanitizer's allocator faults in it): their builds keep the plain frames.
  static bool said_with_lines(void* const* frames, int n) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    (void)frames, (void)n;
    return false;
#else
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return false;
    const long child = ::syscall(SYS_fork);
    if (child == 0) {
      ::close(pipe_fds[0]);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      for (int sig : kSignals) ::sigaction(sig, &dfl, nullptr);  // a fault here just ends the child
      ::sigaction(SIGALRM, &dfl, nullptr);
      sigset_t alarm_only;
      sigemptyset(&alarm_only);
      sigaddset(&alarm_only, SIGALRM);
      ::sigprocmask(SIG_UNBLOCK, &alarm_only, nullptr);
      ::alarm(5);
      std::string text;
      for (int i = 0; i < n; ++i)  // below the interrupted frame, return addresses: the call is the byte before
        text += frame_text(i, static_cast<const char*>(frames[i]) - (i > 0 ? 1 : 0)) + "\n";
      const bool written = ::write(pipe_fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size());
      ::_exit(written ? 0 : 1);
    }
    ::close(pipe_fds[1]);
    int status = 1;
    if (child > 0)
      while (::waitpid(static_cast<pid_t>(child), &status, 0) < 0 && errno == EINTR) {
      }
    const bool ok = child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::array<char, 4096> buf;
    for (ssize_t k; ok && (k = ::read(pipe_fds[0], buf.data(), buf.size())) > 0;)
      if (::write(STDERR_FILENO, buf.data(), static_cast<std::size_t>(k)) < 0) break;
    ::close(pipe_fds[0]);
    return ok;
#endif
  }

  static void handler(int sig, siginfo_t* info, void* ctx) {
    // Programs run at once on several host threads may fault at once: the one reported is the
    // one a single host core would have met first; the others wait here for the process to end.
    if (!Executor::first_fault_in_order())
      for (;;) ::pause();
    const bool memory = sig == SIGSEGV || sig == SIGBUS;
    if (memory && said_overflow(static_cast<const std::byte*>(info->si_addr))) {
      say_stack();
    } else {
      // Not an overflow: if a VP's code was running on this thread, the fault is its program's.
      const int rank = Executor::current_index();
      if (rank != Executor::kMain) {
        say("touchstone: the program of rank ");
        say(static_cast<std::size_t>(rank));
        say(" died of ");
        say(describe(sig));
        say("; the run cannot go on\n");
        say_stack();
      }
    }
    // Whatever the fault, the handler this one replaced deals with it: the default ends the process.
    std::size_t k = 0;
    while (k + 1 < kSignals.size() && kSignals[k] != sig) ++k;
    const struct sigaction& prev = previous()[k];
    if (prev.sa_flags & SA_SIGINFO) {
      if (prev.sa_sigaction) return prev.sa_sigaction(sig, info, ctx);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
      return prev.sa_handler(sig);
    }
    // Returning re-runs the faulting instruction (abort() raises again), which now ends the process.
    ::signal(sig, SIG_DFL);
  }
};

// Other runs of this process (a sweep's parallel jobs) may map their regions between this choice
// and this region's own mappings: permanent guards keep a quarter of the limit free.
StackRegion::Guards StackRegion::choose(std::size_t count, std::size_t mappings_now, std::size_t max_map_count) {
  const std::size_t need = 2 * count + 1;
  return mappings_now + need + max_map_count / 4 <= max_map_count ? Guards::permanent : Guards::while_running;
}

bool StackRegion::kernel_guards() {
  static const bool accepted = [] {
    const std::size_t page = page_size();
    void* p = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    const bool ok = ::madvise(p, page, MADV_GUARD_INSTALL) == 0;
    ::munmap(p, 2 * page);
    return ok;
  }();
  return accepted;
}

StackRegion::StackRegion(std::size_t count, std::size_t stack_bytes, unsigned host_threads)
    : StackRegion(count, stack_bytes,
                  kernel_guards() ? Guards::installed
                                  : choose(count, process_mappings().in_use, process_mappings().limit),
                  host_threads) {}

StackRegion::StackRegion(std::size_t count, std::size_t stack_bytes, Guards guards, unsigned host_threads)
    : count_(count), stack_(round_up(stack_bytes, page_size())), guard_(page_size()), guards_(guards) {
  slot_ = guard_ + stack_;
  bytes_ = std::max<std::size_t>(count_, 1) * slot_;
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error(fmt::format("cannot reserve {} MiB of address space for {} stacks of {} KiB: {}",
                                         bytes_ >> 20, count_, stack_ >> 10, std::strerror(errno)));
  base_ = static_cast<std::byte*>(p);
  OverflowReports::add(this);
  prefault_tops(host_threads);
  if (guards_ == Guards::while_running) return;
  if (guards_ == Guards::installed) {
    // One call per guard, but no mapping is split: the region stays one mapping.
    for (std::size_t i = 0; i < count_; ++i)
      if (::madvise(base_ + i * slot_, guard_, MADV_GUARD_INSTALL) != 0) {
        const int err = errno;
        OverflowReports::remove(this);
        ::munmap(base_, bytes_);
        throw std::runtime_error(fmt::format("cannot install the guard page of a VP stack: {}", std::strerror(err)));
      }
    return;
  }
  for (std::size_t i = 0; i < count_; ++i)
    if (::mprotect(base_ + i * slot_, guard_, PROT_NONE) != 0) {
      const int err = errno;
      // The kernel would not split the region further (vm.max_map_count reached by something else
      // meanwhile): the guards switch to the other scheme rather than go missing.
      for (std::size_t k = 0; k < i; ++k) ::mprotect(base_ + k * slot_, guard_, PROT_READ | PROT_WRITE);
      if (err != ENOMEM) {
        OverflowReports::remove(this);
        ::munmap(base_, bytes_);
        throw std::runtime_error(fmt::format("cannot protect the guard page of a VP stack: {}", std::strerror(err)));
      }
      guards_ = Guards::while_running;
      return;
    }
}

// Every fiber writes the top page of its stack when it starts (Boost.Context puts its first frame
// there). Faulting it in costs a trap per VP, a large part of the host time of a run of many VPs
// on a virtualized host (about 40 us of CPU per trapped fault on the test host, against 3 us per
// page populated by madvise; docs/performance.md). So that page is populated for every stack when
// the region is mapped. Only that page: deeper pages are touched by some programs and not others
// (selftest/ring stays within it), and populating 8 KiB cost 4 KiB of RSS per VP that ring never
// used (617 -> 859 MB on 65,536 VPs). Kernels before 5.14 lack MADV_POPULATE_WRITE and refuse it:
// the page is then faulted in on first use, as before, so the result is ignored. On many VPs this
// is most of a run's start (on 1,048,576 VPs, 4 GiB of stack pages and 2 GiB of page tables to
// clear), and the kernel populates disjoint ranges of one mapping in parallel: so on up to
// RunOptions::host_cores threads.
void StackRegion::prefault_tops([[maybe_unused]] unsigned host_threads) {
#ifdef MADV_POPULATE_WRITE
  const std::size_t top = std::min(stack_, round_up(kPrefaultBytes, page_size()));
  over_stacks(count_, host_threads, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      if (::madvise(base_ + (i + 1) * slot_ - top, top, MADV_POPULATE_WRITE) != 0) return;
  });
#endif
}

namespace {
thread_local std::unique_ptr<StackRegion> t_kept;  // recycle's region, for this thread's next run
}  // namespace

std::unique_ptr<StackRegion> StackRegion::reuse_or_map(std::size_t count, std::size_t stack_bytes,
                                                       unsigned host_threads) {
  std::unique_ptr<StackRegion> kept = std::move(t_kept);
  if (kept && kept->count_ == count && kept->stack_ == round_up(stack_bytes, page_size())) {
    kept->zero_touched(host_threads);
    return kept;
  }
  kept.reset();  // unmapped before the new one is mapped: one region's address space at a time
  return std::make_unique<StackRegion>(count, stack_bytes, host_threads);
}

void StackRegion::recycle(std::unique_ptr<StackRegion> r) { t_kept = std::move(r); }

// mincore says which pages of the region are resident: the pages the last run's fibers touched
// (and the prefaulted tops). Those are cleared; the others read as zero anyway. The guards are
// never touched (installed or protected, they fault; while-running ones are all unprotected
// between runs but were never written).
void StackRegion::zero_touched(unsigned host_threads) {
#if defined(__SANITIZE_ADDRESS__)
  __asan_unpoison_memory_region(base_, bytes_);  // the last run's frames, as in the destructor
#endif
  const std::size_t page = page_size(), pages = bytes_ / page;
  std::vector<unsigned char> resident(pages);
  if (::mincore(base_, bytes_, resident.data()) != 0) {
    // Cannot tell: every page of every stack, as a new region would read them.
    for (std::size_t i = 0; i < count_; ++i) std::memset(base_ + i * slot_ + guard_, 0, stack_);
    return;
  }
  over_stacks(count_, host_threads, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      for (std::size_t p = (i * slot_ + guard_) / page, end = (i + 1) * slot_ / page; p < end; ++p)
        if (resident[p] & 1) std::memset(base_ + p * page, 0, page);
  });
}

StackRegion::~StackRegion() {
  OverflowReports::remove(this);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps the poison of frames still on the stacks (a fiber that never finished,
  // its redzones) after munmap; the next region mapped at these addresses would report its own
  // frames as bad accesses ("unknown-crash"). The shadow is cleared before the memory goes.
  __asan_unpoison_memory_region(base_, bytes_);
#endif
  ::munmap(base_, bytes_);
}

boost::context::stack_context StackRegion::context(std::size_t i) const {
  boost::context::stack_context c;
  c.size = stack_;
  c.sp = base_ + i * slot_ + slot_;  // the top: stacks grow down towards their guard
  return c;
}

const void* StackRegion::guard(std::size_t i) const { return base_ + i * slot_; }

namespace {
[[noreturn]] void unguarded(std::size_t i, int err) {
  // The fiber must not run without its guard, and the scheduler cannot unwind the run from here.
  std::fprintf(stderr,
               "touchstone: cannot protect the guard page of VP stack %zu (%s): the kernel's limit on memory "
               "mappings (vm.max_map_count) is exhausted; raise it or run fewer VPs at once\n",
               i, std::strerror(err));
  std::abort();
}
}  // namespace

void StackRegion::protect(std::size_t i, bool guarded) {
  if (::mprotect(base_ + i * slot_, guard_, guarded ? PROT_NONE : PROT_READ | PROT_WRITE) != 0) unguarded(i, errno);
}

void report_vp_faults() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &OverflowReports::handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (std::size_t k = 0; k < OverflowReports::kSignals.size(); ++k)
      ::sigaction(OverflowReports::kSignals[k], &sa, &OverflowReports::previous()[k]);
    void* warm[1];
    ::backtrace(warm, 1);  // loads the unwinder now: a fault (inside malloc, say) must not have to
  });
  // The alternate stack of this thread, unless it has one (a sanitizer's, or an earlier call's).
  struct AltStack {
    std::unique_ptr<std::byte[]> mem;
    ~AltStack() {
      if (!mem) return;
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      ::sigaltstack(&off, nullptr);
    }
  };
  thread_local AltStack alt;
  stack_t cur{};
  if (::sigaltstack(nullptr, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)) return;
  constexpr std::size_t kAltBytes = 64 * 1024;
  alt.mem = std::make_unique<std::byte[]>(kAltBytes);
  stack_t st{};
  st.ss_sp = alt.mem.get();
  st.ss_size = kAltBytes;
  ::sigaltstack(&st, nullptr);
}

}  // namespace touchstone::detail
