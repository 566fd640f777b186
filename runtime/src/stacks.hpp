// The fibers' stacks: one reserved region for a run's VPs, each stack with a guard page
// below it that is never silently lost.
//
// Boost's protected_fixedsize_stack maps every stack on its own and protects its guard page with a
// second call whose failure it ignores. Each stack is then two kernel mappings, and past
// vm.max_map_count (65,530 by default, about 32,000 VPs) the kernel refuses the split: the guard
// was silently dropped, and a VP that overflowed its stack wrote into another VP's. Mapping and
// unmapping one stack per VP was also most of the host time of a 16,384-VP run.
//
// Here the run maps one region, [guard 0][stack 0][guard 1][stack 1]..., with MAP_NORESERVE (a
// stack costs memory only where it is touched). Its guards are protected in one of three ways:
//   - installed: kernel guard regions (madvise MADV_GUARD_INSTALL, Linux 6.13 and later): every
//     guard faults from the start and the region stays one mapping, whatever the number of VPs, so
//     neither vm.max_map_count nor a system call per guard or per switch is paid. Used wherever
//     the kernel accepts it.
//   - permanent: every guard is PROT_NONE from the start, 2n+1 mappings. Used, on older kernels,
//     while that leaves vm.max_map_count a margin.
//   - while running: a guard is PROT_NONE only while its fiber runs. The fibers of a run take turns
//     on one host thread, so only the running one can overflow; 3 mappings at most, at the price of
//     two mprotect calls per switch. Used for the largest runs.
// Either way a VP that overflows faults on its own guard page, and report_vp_faults says
// which rank, its stack size, and the option that sets it.
#pragma once
#include <cstddef>
#include <memory>

#include <boost/context/stack_context.hpp>

namespace touchstone::detail {

class StackRegion {
 public:
  enum class Guards { installed, permanent, while_running };

  /// Where the kernel has no guard regions: chooses the guards for `count` stacks, permanent when
  /// the 2 count + 1 mappings they need, with the process's `mappings_now`, stay below
  /// `max_map_count` by a margin (other runs of the process may map their own regions meanwhile).
  static Guards choose(std::size_t count, std::size_t mappings_now, std::size_t max_map_count);
  /// True if this kernel installs guard regions (MADV_GUARD_INSTALL); asked once per process.
  static bool kernel_guards();

  /// Maps `count` stacks of `stack_bytes` each (rounded up to pages), guarded as `guards` says, or
  /// installed where the kernel can, else as choose() says for this process. Throws
  /// std::runtime_error with the reason when the region cannot be mapped or protected, or when
  /// `guards` is installed and the kernel cannot.
  /// `host_threads`: how many host threads may make the stack tops resident (prefault_tops), which
  /// is most of a region's cost on many VPs (RunOptions::host_cores).
  StackRegion(std::size_t count, std::size_t stack_bytes, unsigned host_threads = 1);
  StackRegion(std::size_t count, std::size_t stack_bytes, Guards guards, unsigned host_threads = 1);
  ~StackRegion();
  StackRegion(const StackRegion&) = delete;
  StackRegion& operator=(const StackRegion&) = delete;

  Guards guards() const { return guards_; }
  /// The rank of stack 0, for the report of an overflow (a process of a split run holds the stacks
  /// of its share of the ranks only: RunOptions::partition).
  void set_first_rank(std::size_t rank) { first_rank_ = rank; }
  std::size_t stack_bytes() const { return stack_; }
  std::size_t count() const { return count_; }
  /// Stack i as Boost.Context wants it: sp at its top, size its usable bytes.
  boost::context::stack_context context(std::size_t i) const;
  /// The first byte of stack i's guard page(s) (the bytes just below its lowest usable byte).
  const void* guard(std::size_t i) const;
  /// While running: protects stack i's guard before its fiber runs, and unprotects it after.
  /// No-ops for permanent guards. A refusal of the kernel ends the process with a message: the
  /// fiber must not run unguarded. Inline: they run at every fiber switch, and are nearly always
  /// no-ops (guards the kernel installed, or permanent ones).
  void arm(std::size_t i) {
    if (guards_ == Guards::while_running) protect(i, true);
  }
  void disarm(std::size_t i) {
    if (guards_ == Guards::while_running) protect(i, false);
  }
  /// A region of `count` stacks of `stack_bytes`: the calling thread's last one (recycle) when it
  /// has that shape, as a sweep's runs and a paper program's points do, else a new one. A region
  /// costs a mapping, a system call per guard and one per stack top (prefault_tops): 8,194 calls
  /// for a 4,097-VP run. One taken back has every page its fibers touched zeroed, so a run sees
  /// the same bytes as on a new region (zero everywhere), whatever ran on the thread before.
  static std::unique_ptr<StackRegion> reuse_or_map(std::size_t count, std::size_t stack_bytes,
                                                   unsigned host_threads = 1);
  /// Keeps `r`, whose fibers have all ended, for the calling thread's next run (reuse_or_map); the
  /// region kept before is unmapped. At most one region per thread is kept, until the thread ends.
  static void recycle(std::unique_ptr<StackRegion> r);
  /// The top bytes of every stack made resident when the region is mapped (prefault_tops): the
  /// page every fiber touches when it starts.
  static constexpr std::size_t kPrefaultBytes = 4 * 1024;

 private:
  void prefault_tops(unsigned host_threads);
  void zero_touched(unsigned host_threads);  // reuse_or_map: every resident page of every stack back to zero
  void protect(std::size_t i, bool guarded);  // arm and disarm of while_running guards
  friend struct OverflowReports;
  std::byte* base_ = nullptr;
  std::size_t count_ = 0, stack_ = 0, guard_ = 0, slot_ = 0, bytes_ = 0, first_rank_ = 0;
  Guards guards_ = Guards::permanent;
};

/// Makes a fault in a VP's code say which VP it was before the process dies of it as before: a
/// stack overflow on a guard page of any live StackRegion names the rank (the stack's index), its
/// stack size and how to give it more; any other SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT raised
/// while a VP's code runs on the thread names the rank and the signal (a C program's crash or
/// failed assert under `touchstone mpirun` would otherwise say nothing of which rank). Installs,
/// once, handlers that pass every fault on to the handler they replaced (the default's, or a
/// sanitizer's), and gives the calling thread an alternate signal stack if it has none (the
/// overflowing stack has no room left for the handler). Call it on each thread that runs fibers.
void report_vp_faults();

}  // namespace touchstone::detail
