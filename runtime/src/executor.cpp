#include "executor.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <system_error>
#include <utility>

#include <cxxabi.h>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include "cpu_relax.hpp"
#include "stacks.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TOUCHSTONE_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define TOUCHSTONE_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif

namespace touchstone::detail {

namespace {
// The context whose code runs on this host thread: fixed for a thread context, switched with
// every fiber. One thread-local object for both: in a shared library each thread-local's address
// costs a __tls_get_addr call, and a fiber switch sets both twice.
struct CurrentContext {
  void* user = nullptr;
  int index = Executor::kMain;
};
// Initial-exec, as FiberExecutor::t_running_ below: Proc::current() reads it in every runtime and
// MPI call (525,825 __tls_get_addr calls in a 64-byte MPI all-to-all on 256 VPs otherwise).
[[gnu::tls_model("initial-exec")]] thread_local CurrentContext t_current;
// Executor::run_ahead's threads, while a context runs.
[[gnu::tls_model("initial-exec")]] thread_local bool t_running_ahead = false;

std::size_t usable_stack(std::size_t bytes) { return std::max<std::size_t>(bytes, 64 * 1024); }

// The turns of one parallel batch (on_threads) in the order one host thread runs them: which have
// finished, and the earliest that faulted. A thread runs turn `t_turn` of `t_batch` meanwhile.
struct TurnOrder {
  explicit TurnOrder(std::size_t n) : finished(new std::atomic<bool>[n]) {
    for (std::size_t k = 0; k < n; ++k) finished[k].store(false, std::memory_order_relaxed);
  }
  std::unique_ptr<std::atomic<bool>[]> finished;
  std::atomic<std::size_t> first_fault{static_cast<std::size_t>(-1)};
};
[[gnu::tls_model("initial-exec")]] thread_local TurnOrder* t_batch = nullptr;
[[gnu::tls_model("initial-exec")]] thread_local std::size_t t_turn = 0;
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<std::size_t>::is_always_lock_free,
              "read by the fault handler");
}  // namespace

void* Executor::current_user() { return t_current.user; }
bool Executor::running_ahead() { return t_running_ahead; }
int Executor::current_index() { return t_current.index; }

// Turns are handed out in their order (HelperPool), so every earlier one has started; each either
// finishes (its flag) or faults (first_fault falls below ours). A turn that never finishes, a
// program that loops or a lock the faulting code held, must not keep the report back for good.
bool Executor::first_fault_in_order() noexcept {
  TurnOrder* const b = t_batch;
  if (!b) return true;
  const std::size_t me = t_turn;
  std::size_t first = b->first_fault.load(std::memory_order_acquire);
  while (me < first && !b->first_fault.compare_exchange_weak(first, me, std::memory_order_acq_rel)) {
  }
  timespec start{}, now{};
  ::clock_gettime(CLOCK_MONOTONIC, &start);
  for (std::size_t earlier = 0;;) {
    if (b->first_fault.load(std::memory_order_acquire) < me) return false;
    while (earlier < me && b->finished[earlier].load(std::memory_order_acquire)) ++earlier;
    if (earlier == me) return true;
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec >= 5) return true;
    const timespec pause{0, 200'000};
    ::nanosleep(&pause, nullptr);
  }
}
void Executor::set_current_user(void* user, int index) {
  CurrentContext& c = t_current;
  c.user = user;
  c.index = index;
}

// ---------------------------------------------------------------- fibers

namespace {

// Up to `n` host threads running serve(), fewer if the system gives no more (the caller then does
// their share). A VP's fault on one names the VP too: the fault handler needs the thread's own
// alternate stack (a stack overflow leaves none to run on).
template <class Serve>
std::vector<std::thread> helper_threads(int n, Serve serve) {
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) {
    try {
      threads.emplace_back([serve] {
        report_vp_faults();
        serve();
      });
    } catch (const std::system_error&) {
      break;
    }
  }
  return threads;
}

// Host threads kept for a run's parallel turns (Executor::run_ahead, run_rests): the VPs of one
// instant may be handed out thousands of times a run, far too often to start threads each time.
// run(n, job) calls job(0 .. n-1), each once, on the calling thread and on every helper that joins
// in time, and returns when all have returned. A helper spins briefly for the next batch before it
// sleeps: batches of one instant follow each other within microseconds, and a sleeping helper
// wakes later than the caller takes the whole batch itself.
class HelperPool {
 public:
  explicit HelperPool(int helpers) : threads_(helper_threads(helpers, [this] { serve(); })) {}
  ~HelperPool() {
    {
      std::lock_guard lock(m_);
      stop_ = true;
      published_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  HelperPool(const HelperPool&) = delete;
  HelperPool& operator=(const HelperPool&) = delete;

  template <class Job>
  void run(std::size_t n, Job& job) {
    Batch b{n, [](void* j, std::size_t k) { (*static_cast<Job*>(j))(k); }, &job};
    {
      std::lock_guard lock(m_);
      batch_ = &b;
      published_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    b.work();
    std::unique_lock lock(m_);
    batch_ = nullptr;  // a helper that wakes from now on finds nothing to join
    done_.wait(lock, [&] { return b.joined == 0; });
  }

 private:
  struct Batch {
    std::size_t n;
    void (*call)(void*, std::size_t);
    void* job;
    std::atomic<std::size_t> next{0};
    int joined = 0;  // helpers working on it (under m_)
    void work() {
      for (std::size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < n;) call(job, k);
    }
  };

  void serve() {
    std::uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return published_.load(std::memory_order_acquire) != seen; }, kHelperSpin);
      Batch* b = nullptr;
      {
        std::unique_lock lock(m_);
        wake_.wait(lock, [&] { return published_.load(std::memory_order_relaxed) != seen; });
        seen = published_.load(std::memory_order_relaxed);
        if (stop_) return;
        if ((b = batch_)) ++b->joined;
      }
      if (!b) continue;
      b->work();
      std::lock_guard lock(m_);
      if (--b->joined == 0) done_.notify_one();
    }
  }

  std::mutex m_;
  std::condition_variable wake_, done_;
  std::atomic<std::uint64_t> published_{0};  // batches published so far (and the stop)
  Batch* batch_ = nullptr;                     // the batch helpers may join, under m_
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// Host threads for contexts launched one at a time (Executor::launch) while the scheduler goes on:
// each takes the newest launched context and runs it until it passes. The scheduler may take a
// launched context back before any helper has (Executor::settle), so a helper claims each one
// (`claim`) before it runs it, and skips it if the scheduler was first. The newest, because the
// scheduler needs them back about in the order they were launched: a helper that took the oldest
// would run the very one the scheduler waits for next while the scheduler spins, and a run whose
// programs all go on past their waits (a halo exchange's ranks) would run one program at a time.
// A helper spins briefly before it sleeps, as HelperPool's do.
class LaunchPool {
 public:
  using Claim = bool (*)(void* context);
  using Run = void (*)(void* owner, void* context, int index);
  // With fewer host threads than asked, the scheduler runs what none takes (settle).
  LaunchPool(int helpers, void* owner, Claim claim, Run run)
      : owner_(owner), claim_(claim), run_(run), threads_(helper_threads(helpers, [this] { serve(); })) {}
  ~LaunchPool() {
    {
      std::lock_guard lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  LaunchPool(const LaunchPool&) = delete;
  LaunchPool& operator=(const LaunchPool&) = delete;

  bool has_helpers() const { return !threads_.empty(); }


  void push(void* context, int index) {
    {
      std::lock_guard lock(m_);
      queue_.push_back({context, index});
      queued_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_one();
  }

 private:
  struct Job {
    void* context;
    int index;
  };
  void serve() {
    for (;;) {
      spin_until([&] { return queued_.load(std::memory_order_acquire) != 0; }, kHelperSpin);
      Job job{};
      {
        std::unique_lock lock(m_);
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        job = queue_.back();
        queue_.pop_back();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      if (claim_(job.context)) run_(owner_, job.context, job.index);
    }
  }

  void* owner_;
  Claim claim_;
  Run run_;
  std::mutex m_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::atomic<std::size_t> queued_{0};
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// ThreadSanitizer keeps a shadow call stack per fiber: instrumented functions push a frame on
// entry and pop it on return, on whichever fiber TSan holds current at that moment. A Boost fiber
// is entered once when it is constructed (fiber_entry runs up to its first switch back) and never
// returns from that frame. Constructed while the scheduler's fiber was current, every VP fiber left
// one frame on the scheduler's stack: the host thread's shadow stack grew by one frame per VP per
// run, every stack TSan then recorded on that thread (allocations, locks) was a new and longer one
// in its never-freed stack depot -- 10 GB in 70 s of paper001's claims grid, OOM-killed
// test binaries -- and after 65,536 fibers the shadow stack would overrun its mapping. So each VP
// fiber's TSan fiber is current while its Boost fiber is constructed (the frame lands on its own
// stack, dropped with it), and the switch back from a fiber that has ended is made on the
// scheduler's side, after the jump has returned there, so that no frame pushed on one fiber is
// popped on another at any optimisation level. Every TSan fiber is thereby made current before
// it is destroyed, even one whose VP never ran.
// The C++ runtime keeps, per host thread, the exceptions being handled (the catch blocks entered
// and not left) and the count of those being thrown. A fiber's are its own: it may block inside a
// catch block while others run theirs, and go on on another host thread (the parallel turns). So
// each switch into a fiber gives the thread the fiber's, and takes them back when it suspends.
// (libstdc++'s __cxa_eh_globals: the list of caught exceptions, then the uncaught count.)
struct ExceptionsInFlight {
  void* caught = nullptr;
  unsigned int uncaught = 0;
  static ExceptionsInFlight& of_this_thread() {
    return *reinterpret_cast<ExceptionsInFlight*>(abi::__cxa_get_globals());
  }
};

class FiberExecutor final : public Executor {
 public:
  FiberExecutor(std::size_t stack_bytes, int host_cores, Scheduler& s)
      : Executor(s), stack_bytes_(usable_stack(stack_bytes)), host_cores_(host_cores) {}
  // The fibers go first; their region stays mapped for the thread's next run (StackRegion::recycle).
  ~FiberExecutor() override {
    launched_.reset();  // its helpers run no context from here on
    ctx_.clear();
    if (stacks_) StackRegion::recycle(std::move(stacks_));
  }

  std::size_t start(std::vector<void*> users, Body body) override {
    body_ = std::move(body);
    threads_.assign(users.size(), std::this_thread::get_id());  // every fiber runs on this thread
    // Contexts without a user (the ranks another process of a split run runs, RunOptions::
    // partition) get no fiber, and the region holds stacks only from the first user to the last.
    const auto used = [](void* u) { return u != nullptr; };
    const auto first = static_cast<std::size_t>(std::find_if(users.begin(), users.end(), used) - users.begin());
    const auto end =
        users.size() - static_cast<std::size_t>(std::find_if(users.rbegin(), users.rend(), used) - users.rbegin());
    region_first_ = first;
    stacks_ = StackRegion::reuse_or_map(end > first ? end - first : 0, stack_bytes_,
                                        static_cast<unsigned>(std::max(host_cores_, 1)));
    stacks_->set_first_rank(first);
    report_vp_faults();
    ctx_.reserve(users.size());
    for (std::size_t i = 0; i < users.size(); ++i) {
      if (users[i])
        create(users[i], RegionStack{stacks_.get(), i - first, nullptr});
      else
        ctx_.push_back(std::make_unique<Context>());
    }
    return users.size();
  }

  // A task's fiber has a stack of its own, outside the run's region, with Boost's guard page.
  int add(void* user) override {
    threads_.push_back(std::this_thread::get_id());
    create(user, OwnStack{boost::context::protected_fixedsize_stack(stack_bytes_), nullptr});
    return static_cast<int>(ctx_.size()) - 1;
  }

  // A fiber that blocks only switches back to the scheduler loop, which runs on the main thread
  // and does all the dispatching.
  // A context passes on whichever thread runs it, a launched one on a helper while the scheduler
  // may add contexts (and so move ctx_'s entries): it finds itself where that thread switched to it.
  void pass(int self) override {
    if (self != kMain) return suspend(*t_running_, false);
    for (int next = scheduler_.next(); next != kMain; next = scheduler_.next()) resume(next);
  }

  void finish() override {
#if TOUCHSTONE_TSAN
    for (auto& c : ctx_)
      if (c->tsan_fiber) __tsan_destroy_fiber(c->tsan_fiber);
#endif
    current_ = kMain;
  }

 private:
  struct Context {
    boost::context::fiber fiber;   // the context, while suspended
    boost::context::fiber caller;  // the scheduler, while the context runs
    boost::context::stack_context stack;
    void* user = nullptr;
    void* fake_stack = nullptr;  // AddressSanitizer bookkeeping
    void* tsan_fiber = nullptr;  // ThreadSanitizer bookkeeping
    // The side that resumed the context last (the scheduler, or a thread of run_ahead): where a
    // suspend returns to, for the sanitizers.
    void* caller_tsan_fiber = nullptr;
    const void* caller_stack_bottom = nullptr;
    std::size_t caller_stack_size = 0;
    const char* parked = nullptr;  // a frame address near the stack pointer at the last suspend
    ExceptionsInFlight exceptions;  // its caught and uncaught exceptions while it is suspended
    std::atomic<std::uint8_t> launched{kIdle};  // launch: queued, running on a helper, parked again
  };
  static constexpr std::uint8_t kIdle = 0, kQueued = 1, kRunning = 2, kParked = 3;
  // A launched context is run by whoever claims it first: a helper of launched_, or settle.
  static bool claim(void* context) {
    std::uint8_t queued = kQueued;
    auto& state = static_cast<Context*>(context)->launched;
    return state.compare_exchange_strong(queued, kRunning, std::memory_order_acq_rel);
  }
  static void run_launched(void* self, void* context, int i) {
    auto& c = *static_cast<Context*>(context);
    static_cast<FiberExecutor*>(self)->switch_to(c, i);
    c.launched.store(kParked, std::memory_order_release);
  }
  // Stack i of the run's region (stacks.hpp), whose bounds the sanitizers are told about at every
  // switch. The region outlives the fibers; the executor then gives it back to its thread
  // (StackRegion::recycle).
  struct RegionStack {
    StackRegion* region;
    std::size_t index;
    boost::context::stack_context* out;
    boost::context::stack_context allocate() { return *out = region->context(index); }
    void deallocate(boost::context::stack_context&) noexcept {}
  };

  // A stack of its own for a context created after start (add).
  struct OwnStack {
    boost::context::protected_fixedsize_stack alloc;
    boost::context::stack_context* out;
    boost::context::stack_context allocate() { return *out = alloc.allocate(); }
    void deallocate(boost::context::stack_context& sc) noexcept {
#if TOUCHSTONE_ASAN
      // AddressSanitizer keeps the poison of the frames left on the stack (a task context ended
      // while suspended) after munmap: a stack mapped there later, a fiber region of the next run,
      // would report its own frames as used after their scope. As StackRegion's destructor does.
      __asan_unpoison_memory_region(static_cast<char*>(sc.sp) - sc.size, sc.size);
#endif
      alloc.deallocate(sc);
    }
  };

  // Context number ctx_.size(), on `stack` (whose `out` it fills in).
  template <class Stack>
  void create(void* user, Stack stack) {
    auto c = std::make_unique<Context>();
    c->user = user;
    Context* self = c.get();
    const int index = static_cast<int>(ctx_.size());
    stack.out = &c->stack;
#if TOUCHSTONE_TSAN
    // Back to whoever creates it afterwards: the scheduler at the start, but a task context is
    // added by the VP that spawns it (Proc::spawn, nonblocking collectives), on that VP's fiber.
    // Switching to the scheduler's TSan fiber there left TSan on the wrong shadow stack while
    // the VP's code went on, and its allocator faulted.
    void* const creator_tsan_fiber = __tsan_get_current_fiber();
    c->tsan_fiber = __tsan_create_fiber(0);
    __tsan_switch_to_fiber(c->tsan_fiber, 0);  // see the comment above the class
#endif
    c->fiber = boost::context::fiber(std::allocator_arg, std::move(stack),
                                     [this, self, index](boost::context::fiber&& caller) {
#if TOUCHSTONE_ASAN
                                       __sanitizer_finish_switch_fiber(nullptr, &self->caller_stack_bottom,
                                                                       &self->caller_stack_size);
#endif
                                       self->caller = std::move(caller);
                                       body_(index);
                                       suspend(*self, true);
                                       return std::move(self->caller);
                                     });
#if TOUCHSTONE_TSAN
    __tsan_switch_to_fiber(creator_tsan_fiber, 0);
#endif
    ctx_.push_back(std::move(c));
  }

  // Scheduler -> context i: runs it until it blocks or ends.
  void resume(int i) {
    current_ = i;
    switch_to(i);
    current_ = kMain;
  }

  bool run_ahead(std::span<const int> contexts, int threads) override {
    on_threads(contexts, threads, true);
    return true;
  }

  bool run_rests(std::span<const int> contexts, int threads) override {
    on_threads(contexts, threads, false);
    return true;
  }

  bool launch(int i, int threads) override {
    if (!launched_) launched_ = std::make_unique<LaunchPool>(std::max(threads - 1, 0), this, &claim, &run_launched);
    Context& c = *ctx_[static_cast<std::size_t>(i)];
    c.launched.store(kQueued, std::memory_order_release);
    if (launched_->has_helpers()) launched_->push(&c, i);
    return true;
  }

  void settle(int i) override {
    Context& c = *ctx_[static_cast<std::size_t>(i)];
    if (claim(&c)) {  // no helper has taken it: it runs here
      switch_to(c, i);
    } else {
      // A helper runs it: the scheduler has nothing to do before it has passed. (Running another
      // launched context meanwhile measured no gain, and would hide which one a stuck run waits
      // for from the watchdog.)
      spin_then_yield([&] { return c.launched.load(std::memory_order_acquire) == kParked; }, kHelperSpin);
    }
    c.launched.store(kIdle, std::memory_order_relaxed);
  }

  // One turn of each of `contexts`, on up to `threads` host threads (the calling one among them): a
  // Boost fiber can be resumed on any thread, and returns to the one that resumed it. Contexts are
  // handed out one at a time, so one with much to do does not hold up the others.
  void on_threads(std::span<const int> contexts, int threads, bool ahead) {
    const bool at_once = threads > 1 && contexts.size() > 1;
    // At once, a fault is reported as in this order (first_fault_in_order).
    std::optional<TurnOrder> order;
    if (at_once) order.emplace(contexts.size());
    auto turn = [&](std::size_t k) {
      t_running_ahead = ahead;
      t_batch = order ? &*order : nullptr;
      t_turn = k;
      switch_to(contexts[k]);
      t_batch = nullptr;
      if (order) order->finished[k].store(true, std::memory_order_release);
      t_running_ahead = false;
    };
    if (!at_once) {
      for (std::size_t k = 0; k < contexts.size(); ++k) turn(k);
      return;
    }
    if (!helpers_) helpers_ = std::make_unique<HelperPool>(threads - 1);
    helpers_->run(contexts.size(), turn);
  }

  void prefetch(int i) override {
    if (static_cast<std::size_t>(i) >= ctx_.size()) return;
    const Context& c = *ctx_[static_cast<std::size_t>(i)];
    // A launched context that a helper may be running parks where and when it will: its frames
    // are not known yet. Parked again (or never launched), its frames are where it left them.
    const std::uint8_t launch = c.launched.load(std::memory_order_acquire);
    if (launch == kQueued || launch == kRunning) return;
    prefetch_parked_frames(c);
  }

  // Runs context i on the calling host thread until it blocks or ends.
  void switch_to(int i) { switch_to(*ctx_[static_cast<std::size_t>(i)], i); }
  // The same with the context at hand: a launched one runs on a helper while the scheduler may
  // add contexts (and so move ctx_'s entries).
  void switch_to(Context& c, int i) {
    set_current_user(c.user, i);
#if TOUCHSTONE_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, static_cast<char*>(c.stack.sp) - c.stack.size, c.stack.size);
#endif
#if TOUCHSTONE_TSAN
    c.caller_tsan_fiber = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(c.tsan_fiber, 0);
#endif
    const auto slot = static_cast<std::size_t>(i) - region_first_;  // wraps below the region's first
    const bool in_region = slot < stacks_->count();
    if (in_region) stacks_->arm(slot);
    prefetch_parked_frames(c);
    ExceptionsInFlight& here = ExceptionsInFlight::of_this_thread();
    const ExceptionsInFlight own = here;
    here = c.exceptions;
    Context* const was_running = std::exchange(t_running_, &c);
    c.fiber = std::move(c.fiber).resume();
    t_running_ = was_running;
    c.exceptions = here;
    here = own;
#if TOUCHSTONE_TSAN
    if (!c.fiber) __tsan_switch_to_fiber(c.caller_tsan_fiber, 0);  // it ended (see above the class)
#endif
    if (in_region) stacks_->disarm(slot);
#if TOUCHSTONE_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
    set_current_user(nullptr, kMain);
  }

  // A context resumes into the frames it suspended from (the switch's saved registers, then the
  // return path through the engine's wait into the program), which 255 other fibers have usually
  // evicted from the cache since: one cache miss after another, a large part of the host time of
  // a many-VP run (docs/performance.md). Asking for those lines at once, before the
  // switch, overlaps the misses. A prefetch never faults (not even on a guard page); the range ends
  // at the stack's top.
  // With the whole range below the top (nearly always) the count is fixed and the loop unrolled:
  // the prefetches alone, without a bound check each.
  static void prefetch_parked_frames(const Context& c) {
    if (!c.parked) return;
    constexpr std::ptrdiff_t kBelow = 256, kAbove = 1024, kLine = 64;
    const char* top = static_cast<const char*>(c.stack.sp);
    if (top - c.parked >= kAbove) {
#pragma GCC unroll 20
      for (std::ptrdiff_t off = -kBelow; off < kAbove; off += kLine) __builtin_prefetch(c.parked + off);
      return;
    }
    for (const char* p = c.parked - kBelow; p < top; p += kLine) __builtin_prefetch(p);
  }

  // Context -> scheduler. A finished context only announces the switch: its fiber function then
  // returns (and resume() tells TSan once it is back on the scheduler's side).
  void suspend(Context& c, bool finished) {
    c.parked = static_cast<const char*>(__builtin_frame_address(0));
#if TOUCHSTONE_ASAN
    __sanitizer_start_switch_fiber(finished ? nullptr : &c.fake_stack, c.caller_stack_bottom, c.caller_stack_size);
#endif
#if TOUCHSTONE_TSAN
    if (!finished) __tsan_switch_to_fiber(c.caller_tsan_fiber, 0);
#endif
    if (finished) return;
    c.caller = std::move(c.caller).resume();
#if TOUCHSTONE_ASAN
    __sanitizer_finish_switch_fiber(c.fake_stack, &c.caller_stack_bottom, &c.caller_stack_size);
#endif
  }

  std::size_t stack_bytes_;
  int host_cores_;  // threads that may make the stacks resident (StackRegion::prefault_tops)
  Body body_;
  std::unique_ptr<StackRegion> stacks_;  // the destructor ends the fibers (ctx_) first
  std::size_t region_first_ = 0;         // the context whose stack is the region's first
  std::vector<std::unique_ptr<Context>> ctx_;
  // The context this host thread runs. Initial-exec: read at every pass and written at every
  // switch, it would cost a __tls_get_addr call each in this shared library (0.4% of the
  // instructions of a 64-byte all-to-all on 256 VPs); the library is loaded with the program.
  [[gnu::tls_model("initial-exec")]] static inline thread_local Context* t_running_ = nullptr;
  std::unique_ptr<HelperPool> helpers_;  // made at the first parallel turns, kept for the run
  std::unique_ptr<LaunchPool> launched_;  // made at the first launch, kept for the run
};

// ---------------------------------------------------------------- host threads

// Whoever gives up the baton runs the scheduler until someone else can go on, then wakes that
// one's semaphore and sleeps on its own.
class ThreadExecutor final : public Executor {
 public:
  ThreadExecutor(std::size_t stack_bytes, int host_cores, Scheduler& s)
      : Executor(s), stack_bytes_(usable_stack(stack_bytes)), host_cores_(host_cores) {}

  std::size_t start(std::vector<void*> users, Body body) override {
    body_ = std::move(body);
    report_vp_faults();  // the handlers are the process's: every VP thread's faults are named too
    threads_.resize(users.size());
    ctx_.reserve(users.size());
    for (std::size_t i = 0; i < users.size(); ++i) {
      auto c = std::make_unique<Context>();
      c->owner = this;
      c->index = static_cast<int>(i);
      c->user = users[i];
      ctx_.push_back(std::move(c));
    }
    pthread_attr_t attr;
    attributes(attr);
    for (auto& c : ctx_) {
      if (pthread_create(&c->thread, &attr, &ThreadExecutor::entry, c.get()) != 0) break;
      c->joinable = true;
      ++started_;
    }
    pthread_attr_destroy(&attr);
    // Every thread has recorded its id before a VP can run (and add() grow threads_).
    for (std::size_t i = 0; i < started_; ++i) ctx_[i]->started.acquire();
    return started_;
  }

  // The new thread records its id before add returns: threads_ never grows while a thread writes
  // into it.
  int add(void* user) override {
    auto c = std::make_unique<Context>();
    c->owner = this;
    c->index = static_cast<int>(ctx_.size());
    c->user = user;
    threads_.emplace_back();
    pthread_attr_t attr;
    attributes(attr);
    const int rc = pthread_create(&c->thread, &attr, &ThreadExecutor::entry, c.get());
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      threads_.pop_back();
      throw std::runtime_error("could not start a host thread for a task; try --execution fibers");
    }
    c->joinable = true;
    c->started.acquire();
    ctx_.push_back(std::move(c));
    return static_cast<int>(ctx_.size()) - 1;
  }

  void pass(int self) override { hand_off(self, false); }

  // A context's code stays on its own host thread: it cannot be resumed by another one.
  bool run_ahead(std::span<const int>, int) override { return false; }
  bool run_rests(std::span<const int>, int) override { return false; }
  bool launch(int, int) override { return false; }
  void settle(int) override {}

  void finish() override {
    for (auto& c : ctx_)
      if (c->joinable) pthread_join(c->thread, nullptr), c->joinable = false;
    started_ = 0;
    current_ = kMain;
  }

 private:
  struct Context {
    ThreadExecutor* owner = nullptr;
    int index = 0;
    void* user = nullptr;
    std::binary_semaphore sem{0};
    pthread_t thread{};
    bool joinable = false;
    std::binary_semaphore started{0};  // released once the thread has recorded its id in threads_
  };

  void attributes(pthread_attr_t& attr) const {
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack_bytes_);
    // The first host_cores of the cores this process may use; all of them (the CLI's default) pin
    // nothing.
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (host_cores_ > 0 && sched_getaffinity(0, sizeof allowed, &allowed) == 0 && host_cores_ < CPU_COUNT(&allowed)) {
      cpu_set_t set;
      CPU_ZERO(&set);
      int taken = 0;
      for (int c = 0; c < CPU_SETSIZE && taken < host_cores_; ++c)
        if (CPU_ISSET(c, &allowed)) CPU_SET(c, &set), ++taken;
      pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
  }

  static void* entry(void* arg) {
    auto* c = static_cast<Context*>(arg);
    ThreadExecutor& ex = *c->owner;
    set_current_user(c->user, c->index);
    ex.threads_[static_cast<std::size_t>(c->index)] = std::this_thread::get_id();
    c->started.release();
    c->sem.acquire();  // the first baton
    ex.body_(c->index);
    ex.hand_off(c->index, true);
    return nullptr;
  }

  void hand_off(int self, bool finished) {
    const int next = scheduler_.next();
    if (next == self) return;
    // Afterwards the baton belongs to `next`: this thread may only wait for its own semaphore (or
    // end, touching nothing).
    std::binary_semaphore& mine = self == kMain ? main_sem_ : ctx_[static_cast<std::size_t>(self)]->sem;
    current_ = next;
    (next == kMain ? main_sem_ : ctx_[static_cast<std::size_t>(next)]->sem).release();
    if (!finished) mine.acquire();
  }

  std::size_t stack_bytes_;
  int host_cores_;
  Body body_;
  std::vector<std::unique_ptr<Context>> ctx_;
  std::size_t started_ = 0;
  std::binary_semaphore main_sem_{0};
};

}  // namespace

std::unique_ptr<Executor> make_executor(Execution how, std::size_t stack_bytes, int host_cores, Scheduler& s) {
  if (how == Execution::fibers) return std::make_unique<FiberExecutor>(stack_bytes, host_cores, s);
  return std::make_unique<ThreadExecutor>(stack_bytes, host_cores, s);
}

}  // namespace touchstone::detail
