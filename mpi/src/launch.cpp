// `touchstone mpirun` (docs/mpi.md, "Running"): loads the program module, once per rank when its
// globals are privatized, and runs every rank's main as a VP's program.
#include <dlfcn.h>
#include <elf.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#pragma GCC visibility push(default)
#include "touchstone/mpirun.hpp"
#pragma GCC visibility pop

#include "algorithms/scratch.hpp"
#include "call.hpp"
#include "check.hpp"
#include "coll.hpp"
#include "coll_select.hpp"
#include "measure.hpp"
#include "rank_output.hpp"
#include "state.hpp"
#include "touchstone/error.hpp"
#include "touchstone/machine.hpp"
#include "touchstone/machines.hpp"
#include "touchstone/number_text.hpp"
#include "touchstone/packed.hpp"
#include "window_notes.hpp"

namespace touchstone::mpi {

namespace {

using MainFn = int (*)(int, char**);

// Each copy of a module costs the process at least one memory mapping per loadable segment, and
// Linux caps a process's mappings at vm.max_map_count (65,530 by default). A module linked with
// the toolchain's defaults has four segments, one of them split again by RELRO, so about 13,000
// copies fit; touchstone-mpicc and touchstone_add_mpi_program link two, unsplit (docs/mpi.md,
// "Global variables").

// The loadable segments of a 64-bit ELF file; 0 if it is not one (dlopen will say what it is).
int loadable_segments(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
    return 0;
  int loads = 0;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + static_cast<std::uint64_t>(i) * sizeof ph));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return 0;
    loads += ph.p_type == PT_LOAD;
  }
  return loads;
}

// Mappings the run needs beside the copies (the runtime's heap, stacks and threads).
constexpr std::size_t kMappingsBeside = 1024;

// What to say when the copies need more mappings than the process may have.
std::string mappings_advice(int copies, int segments, const ProcessMappings& m) {
  // One more per copy than its segments: RELRO splits one of them, a large .bss takes another.
  const auto per_copy = static_cast<std::size_t>(std::max(segments, 2) + 1);
  const std::size_t wanted = m.in_use + kMappingsBeside + static_cast<std::size_t>(copies) * per_copy;
  std::string out = "; run the program with --no-privatize if its ranks need no globals of their own";
  if (segments > 2) out += ", or rebuild it with touchstone-mpicc (or touchstone_add_mpi_program): 2 per copy";
  const std::size_t rounded = (wanted + 4095) / 4096 * 4096;
  return out + fmt::format(", or raise the limit (as root: sysctl -w vm.max_map_count={})", rounded);
}

// The program's module, loaded `copies` times. Each dlopen of a distinct file is a separate
// object with its own writable data (SMPI's "dlopen" privatization): rank r's globals live in
// copy r. Copies are files in a private temporary folder, removed when the module is unloaded.
// One copy is the program's file itself, unless `own_files` (a spawn's: a second dlopen of a file
// already loaded, the parents' own, would share its globals).
class Module {
 public:
  Module(const std::string& path, int copies, bool unload_at_end, bool own_files = false)
      : unload_at_end_(unload_at_end), copied_(copies > 1 || own_files) {
    namespace fs = std::filesystem;
    const fs::path prog = fs::absolute(path);
    std::error_code ec;
    if (!fs::is_regular_file(prog, ec)) throw UsageError(fmt::format("mpirun: no program file '{}'", path));
    const int segments = copied_ ? loadable_segments(prog) : 0;
    const ProcessMappings before = process_mappings();
    const std::size_t needed = static_cast<std::size_t>(copies) * static_cast<std::size_t>(segments);
    if (segments > 0 && before.in_use + kMappingsBeside + needed > before.limit)
      throw UsageError(fmt::format(
          "mpirun: {} ranks need {} copies of {} (one per rank, each with its own globals) and {} memory mappings "
          "for them ({} per copy), more than the process may have: vm.max_map_count is {} and {} are in use{}",
          copies, copies, path, needed, segments, before.limit, before.in_use,
          mappings_advice(copies, segments, before)));
    if (copied_) {
      remove_copies_of_ended_processes(host_temporary_folder());
      dir_ = make_temporary_folder(fmt::format("{}{}-", kCopiesPrefix, ::getpid()));
    }
    try {
      load(prog, path, copies, segments, before);
    } catch (...) {  // what was loaded goes: the process may call launch again
      unload();
      throw;
    }
  }
  ~Module() {
    if (unload_at_end_)
      unload();
    else
      remove_copies();  // the copies stay loaded until the process exits, their files go now
  }
  /// The copies stay on disk while the program runs, so that a stack taken by the watchdog names
  /// their lines (touchstone::source_line reads them); they go with the module, or here before a hard exit.
  void remove_copies() const {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  MainFn main_of(int rank) const { return mains_[mains_.size() == 1 ? 0 : static_cast<std::size_t>(rank)]; }

 private:
  void load(const std::filesystem::path& prog, const std::string& path, int copies, int segments,
            const ProcessMappings& before) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (int r = 0; r < copies; ++r) {
      fs::path file = prog;
      if (copied_) {
        file = dir_ / fmt::format("{}.{}", prog.filename().string(), r);
        fs::copy_file(prog, file, ec);
        if (ec) throw UsageError(fmt::format("mpirun: cannot copy {} to {}: {}", prog.string(), file.string(), ec.message()));
      }
      void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const std::string why = dlerror();
        if (r > 0) {  // the module loads: what ran out is the process's
          const ProcessMappings now = process_mappings();
          throw UsageError(fmt::format(
              "mpirun: cannot load copy {} of {} of {} (one per rank, each with its own globals): {}; the process "
              "holds {} memory mappings (vm.max_map_count is {}){}",
              r + 1, copies, path, why, now.in_use, now.limit, mappings_advice(copies, segments, before)));
        }
        throw UsageError(fmt::format(
            "mpirun: cannot load {}: {}\n(an MPI program for Touchstone is a loadable module: build it with "
            "touchstone-mpicc/touchstone-mpicxx or touchstone_add_mpi_program; an MPI function Touchstone does not "
            "provide shows here as an undefined symbol)",
            path, why));
      }
      handles_.push_back(h);
      auto* m = reinterpret_cast<MainFn>(dlsym(h, "main"));
      if (!m) throw UsageError(fmt::format("mpirun: {} has no function main", path));
      mains_.push_back(m);
    }
  }
  void unload() {
    for (void* h : handles_) dlclose(h);
    handles_.clear();
    remove_copies();
  }

  // The copies' folder: "touchstone-mpirun-PID-XXXXXX" in the temporary directory.
  static constexpr std::string_view kCopiesPrefix = "touchstone-mpirun-";

  // A process that died of a signal (a rank's SIGSEGV or abort(), which end the process: docs/mpi.md,
  // "Endings") leaves its copies behind, one file per rank; the next run removes the folders of
  // this user's processes that no longer exist.
  static void remove_copies_of_ended_processes(const std::filesystem::path& tmp) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(tmp, ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.starts_with(kCopiesPrefix)) continue;
      const std::string_view rest = std::string_view(name).substr(kCopiesPrefix.size());
      const std::size_t dash = rest.find('-');
      const auto pid = dash == std::string_view::npos ? std::nullopt : number_from_text<pid_t>(rest.substr(0, dash));
      struct stat st {};
      if (!pid || *pid <= 0 || ::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
          st.st_uid != ::geteuid())
        continue;
      if (::kill(*pid, 0) != 0 && errno == ESRCH) std::filesystem::remove_all(entry.path(), ec);
    }
  }

  bool unload_at_end_;
  bool copied_;  // each copy a file of its own in dir_
  std::vector<void*> handles_;
  std::vector<MainFn> mains_;
  std::filesystem::path dir_;  // the copies' folder (empty: the program itself is loaded)
};

/// exit(n) in a rank's code (libtouchstone_mpi_rank.a routes the module's exit here): that rank's
/// main ends with status n, unwound like a return from main, and the other ranks go on.
struct RankExit {
  int status;
};

// What the ranks share because they share a process (docs/mpi.md, "What each rank has of its own"),
// as far as it can be seen: the current directory and the environment. A change made during the
// run was seen by every rank, where each process of a real job would have kept its own: said after
// the run, so that the user knows the other ranks' view changed too.
class SharedStateWatch {
 public:
  SharedStateWatch() : cwd_(current_directory()), env_(environment()) {}
  std::string changes() const {
    std::string out;
    if (const std::string now = current_directory(); now != cwd_)
      out += fmt::format("touchstone mpirun: note: the program changed the current directory from {} to {}; every "
                         "rank saw the change (the ranks share one process: docs/mpi.md)\n", cwd_, now);
    const auto now = environment();
    std::vector<std::string> changed;
    for (const auto& [name, value] : now)
      if (auto it = env_.find(name); it == env_.end() || it->second != value) changed.push_back(name);
    for (const auto& [name, value] : env_)
      if (!now.contains(name)) changed.push_back(name);
    if (!changed.empty())
      out += fmt::format("touchstone mpirun: note: the program changed the environment variable(s) {}; every rank "
                         "saw the change (the ranks share one process: docs/mpi.md)\n", fmt::join(changed, ", "));
    return out;
  }

 private:
  static std::string current_directory() {
    std::error_code ec;
    return std::filesystem::current_path(ec).string();
  }
  static std::map<std::string, std::string> environment() {
    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
      const std::string_view entry(*e);
      const auto eq = entry.find('=');
      env.emplace(entry.substr(0, eq), eq == std::string_view::npos ? "" : entry.substr(eq + 1));
    }
    return env;
  }
  std::string cwd_;
  std::map<std::string, std::string> env_;
};

struct SessionGuard {
  explicit SessionGuard(Session* s) {
    if (session()) throw UsageError("mpirun: another MPI run is in progress in this process");
    set_session(s);
  }
  ~SessionGuard() { set_session(nullptr); }
};

}  // namespace

// What ended a rank that returned or called exit before MPI_Finalize, and the job with it.
std::string early_end_report(int rank, const RankState& rs, int status, bool by_exit) {
  const std::string how =
      by_exit ? fmt::format("called exit({})", status) : fmt::format("returned {} from main", status);
  return fmt::format(
      "rank {} {} at t={} us without calling MPI_Finalize{}: a rank that ends before MPI_Finalize ends the job, as "
      "mpirun ends it when a process exits early (call MPI_Finalize before exit or return, or MPI_Abort to end the "
      "job on purpose)",
      rank, how, to_us(rs.proc->now()), rs.last_call ? fmt::format(" (its last MPI call was {})", rs.last_call) : "");
}

// The ends of a split run's ranks, so that every process decides the job's exit status and
// measured regions as one process would: each rank's exit status and MPI_Pcontrol regions.
void share_rank_ends(Partition& part, Session& s, std::vector<int>& exit_status, int nodes) {
  Packed mine;
  const auto [first, end] = part.ranks_here(nodes);
  for (int r = first; r < std::min(end, s.np); ++r) {
    const RankState& rs = s.ranks[static_cast<std::size_t>(r)];
    mine.put(exit_status[static_cast<std::size_t>(r)]);
    mine.put(rs.region_open.value_or(-1));
    mine.put(rs.regions.size());
    for (const auto& [b, e] : rs.regions) mine.put(b), mine.put(e);
  }
  const std::vector<std::byte> all = part.all_gather(mine.bytes);
  Unpacker in(all);
  for (int k = 0; k < part.count(); ++k) {
    const auto [kf, ke] = Partition::ranks_of(k, part.count(), nodes);
    for (int r = kf; r < std::min(ke, s.np); ++r) {
      RankState& rs = s.ranks[static_cast<std::size_t>(r)];
      exit_status[static_cast<std::size_t>(r)] = in.take<int>();
      if (const auto open = in.take<Time>(); open >= 0) rs.region_open = open;
      rs.regions.resize(in.take<std::size_t>());
      for (auto& [b, e] : rs.regions) b = in.take<Time>(), e = in.take<Time>();
    }
  }
}

// A split run failed in every process: the report of the process that failed first in the
// sequential order, and its rank's MPI_Abort (or early end), taken into `s`; or, in a deadlock,
// every process's own report.
std::string split_run_failure(Partition& part, Session& s, const std::string& what) {
  Packed mine;
  mine.put(s.abort_code.value_or(0)), mine.put(s.abort_code.has_value());
  mine.put_text(s.abort_report);
  mine.put_text(what);
  const std::vector<std::byte> all = part.all_gather(mine.bytes);
  Unpacker in(all);
  std::string reports;
  // The run's failure is the process's that failed first (the others say "process k of the split
  // run failed"), with its rank's abort, if one: a rank of this process that failed later in the
  // same window would not have run in one process. A deadlock is every process's.
  s.abort_code.reset();
  s.abort_report.clear();
  for (int k = 0; k < part.count(); ++k) {
    const int code = in.take<int>();
    const bool aborted = in.take<bool>();
    std::string report = in.take_text(), theirs = in.take_text();
    if (theirs.find("of the split run failed") != std::string::npos) continue;
    if (aborted && !s.abort_code) s.abort_code = code, s.abort_report = report;
    reports += (reports.empty() || reports.ends_with('\n') ? "" : "\n") + theirs;
  }
  return reports.empty() ? what : reports;
}

int launch(const LaunchOptions& o) {
  std::string machine_name = o.machine.text();
  int np = o.np;
  int loaded = 0;
  double load_s = 0;
  // A split run (docs/parallel.md, "Several processes"): this process runs the ranks of its share
  // of the machine's VPs only, and the first process speaks for the job.
  Partition* const part = o.run.partition.get();
  const bool speaks = !part || part->index() == 0;
  // --summary prints on every ending: what the run reached, then how it ended.
  auto summary = [&](const std::string& what, std::optional<std::uint64_t> hash) {
    if (o.summary && speaks)
      std::fprintf(stderr, "touchstone mpirun: %s, %d ranks: %s%s, program loaded %d time(s) in %.3f host s%s\n",
                   machine_name.c_str(), np, what.c_str(),
                   hash ? fmt::format(", trace_hash {:016x}", *hash).c_str() : "", loaded, load_s,
                   part ? fmt::format(" (process 0 of {})", part->count()).c_str() : "");
  };
  // --result FILE: how the run ended, as JSON, whatever the ending (touchstone sweep --program reads it).
  auto record = [&](int status, std::optional<std::uint64_t> hash, const RunResult* r, const MeasuredRegions* measured,
                    const std::string& error) {
    if (o.result_file.empty() || !speaks) return;
    nlohmann::json j{{"exit_status", status}};
    if (hash) j["trace_hash"] = fmt::format("{:016x}", *hash);
    if (r) {
      j["makespan_ps"] = r->makespan;
      j["messages"] = r->stats.messages;
      j["host_seconds"] = r->host_seconds;
      j["instants_at_once"] = r->instants_at_once;  // host-dependent, as host_seconds
      j["continued_ahead"] = r->continued_ahead;    // so too
      j["delivered_early"] = r->delivered_early;    // decided in the sequential order: the same on any host
      if (part) j["windows"] = r->windows;          // a split run's meetings of its processes
      // How much of the ranks' code could run at once (RunStats::batches, docs/parallel.md): virtual
      // counts, the same on any host.
      const BatchStats& b = r->stats.batches;
      nlohmann::json rounds;
      for (std::size_t i = 0; i < BatchStats::kCoreCounts; ++i)
        rounds[std::to_string(BatchStats::kCores[i])] = b.rounds[i];
      j["batches"] = {{"segments", b.segments}, {"instants", b.instants}, {"widest", b.widest}, {"rounds", rounds}};
    }
    if (measured) {
      j["measured_regions"] = measured->count;
      j["measured_ps"] = measured->total;
    }
    if (!error.empty()) j["error"] = error;
    std::ofstream out(o.result_file);
    out << j.dump() << '\n';
    if (!out) std::fprintf(stderr, "touchstone mpirun: cannot write --result %s\n", o.result_file.c_str());
  };
  try {
    const Machine m = build_machine(o.machine);
    machine_name = m.name;
    np = o.np ? o.np : m.nodes();
    if (np < 1 || np > m.nodes())
      throw UsageError(fmt::format("mpirun: -np {} is out of range: {} has {} processors", np, m.name, m.nodes()));
    check_selection(o.coll);
    if (!known_selector(o.coll_selector))
      throw UsageError(fmt::format("--coll-selector: expected default, mpich or ompi, got '{}'", o.coll_selector));
    auto [first, end] = part ? part->ranks_here(m.nodes()) : std::pair{0, np};
    first = std::min(first, np), end = std::min(end, np);  // the VPs beyond -np take no part
    const auto t0 = std::chrono::steady_clock::now();
    loaded = o.privatize ? end - first : 1;
    const Module program(o.program, loaded, o.unload_program);
    load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::list<Module> spawned_programs;  // MPI_Comm_spawn's, loaded during the run and kept to its end

    Session s;
    s.np = np;
    s.ranks.resize(static_cast<std::size_t>(np));
    for (int r = 0; r < np; ++r)
      s.ranks[static_cast<std::size_t>(r)].world_rank = r, s.ranks[static_cast<std::size_t>(r)].world_size = np;
    s.nodes = m.nodes();
    s.next_free = np;
    // The VPs beyond -np wait for spawns (Proc::await_start), in one process only.
    if (!part) s.spawned_ranks.resize(static_cast<std::size_t>(m.nodes() - np));
    s.load_program = [&](const std::string& command, int copies) {
      const auto t = std::chrono::steady_clock::now();
      try {
        const Module& made =
            spawned_programs.emplace_back(command, o.privatize ? copies : 1, o.unload_program, o.privatize);
        loaded += o.privatize ? copies : 1;
        load_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
        std::vector<MainFn> mains;
        for (int k = 0; k < copies; ++k) mains.push_back(made.main_of(k));  // one copy: the same main for all
        return mains;
      } catch (const UsageError& e) {
        std::string why = e.what();
        if (why.starts_with("mpirun: ")) why.erase(0, 8);
        throw MpiError{MPI_ERR_SPAWN, why};
      }
    };
    s.coll = o.coll;
    s.coll_selector = o.coll_selector == "default" ? "" : o.coll_selector;
    s.compute_factor = o.compute_factor;
    s.check_consistency = o.check_consistency;
    s.split = part != nullptr;
    s.leaks_are_errors = o.leaks_are_errors;
    s.owned_receive_buffers = o.leaks_are_errors;
    s.synchronizing_collectives = o.synchronizing_collectives;
    s.races = o.run.races != RaceCheck::off;
    const SessionGuard guard(&s);
    std::vector<int> exit_status(static_cast<std::size_t>(np), 0);
    RunOptions ro = o.run;
    if (part) split_checks(s, ro, first, end);
    ro.programs_read_no_arrival = true;  // an MPI_Status has no arrival time: ranks may go on past receives
    // Each rank's output apart, written out whenever the rank gives up the CPU: in the same order
    // however many host cores run the ranks' code, and kept by a run that is killed.
    std::optional<RankOutput> output(std::in_place, part ? np : m.nodes(), o.tag_output);
    ro.on_vp_pause = [&output](int rank) { output->pause(rank); };
    ro.on_vp_discard = [&output](int rank) { output->discard(rank); };
    // Split, process 0 writes out every process's ranks' output, in the order of the turns that
    // wrote it (RankOutput::split).
    if (part) {
      output->split(part->index());
      s.cut_output = [&output](int rank) { return output->cut(rank); };
      s.drop_output_from = [&output](int rank, Time at, std::uint64_t place, std::uint32_t piece) {
        output->drop_from(rank, at, place, piece);
      };
      add_window_notes(
          ro, [&output] { return output->window_notes(); },
          [&output](int, std::span<const std::byte> notes) { output->take_window_notes(notes); });
    }
    // The ranks' code may run on several host cores at once (the programs of an instant,
    // docs/parallel.md) when each rank has its own globals and no host time is measured: the MPI
    // layer takes its turn before it touches what the ranks share (session(), Proc::await_turn).
    ro.hooks_are_per_vp = o.privatize && o.compute_factor == 0;
    if (o.compute_factor > 0 || part)
      ro.on_vp_resume = [&s, &output, np, bursts = o.compute_factor > 0, split = part != nullptr](int rank, Time now,
                                                                                                  std::uint64_t place) {
        if (split && rank < np) {
          output->resumed(rank, now, place);
          RankState& rs = s.ranks[static_cast<std::size_t>(rank)];
          rs.turn_at = now, rs.turn_place = place;
        }
        if (RankState* rs = bursts ? s.find_rank(rank) : nullptr) begin_burst(*rs);
      };
    ro.stop_on_signals = true;
    // Deadlock reports count the ranks, not the VPs beyond -np, and name each blocked rank's MPI call.
    ro.ranks = np;
    ro.blocked_in = [&s](int rank) {
      const RankState* rs = s.find_rank(rank);
      return rs && rs->last_call ? std::string(rs->last_call) : std::string();
    };
    // ... in MPI's terms throughout: the call with its communicator, peer, tag and line, and the
    // unreceived messages in their communicators' ranks (collectives' own messages left out).
    ro.describe_blocked = [&s](int rank, const std::vector<RunOptions::PendingOp>& ops) {
      RankState* rs = s.find_rank(rank);
      return rs ? blocked_text(*rs, ops) : std::string();
    };
    ro.describe_message = [&s](const RunOptions::UnreceivedMessage& m) { return message_text(s, m); };
    ro.describe_finished = [&s](int rank) {
      RankState* rs = s.find_rank(rank);
      return rs ? finished_text(*rs) : std::string();
    };
    ro.describe_race = [&s](const Race& r) { return race_text(s, r); };
    ro.progress_line = true;
    ro.before_hard_exit = [&output, &program, &summary, &record](int running, int exit_status) {
      summary("ended by the watchdog (the report follows)", std::nullopt);
      record(exit_status, std::nullopt, nullptr, nullptr, fmt::format("ended by the watchdog while rank {} was running", running));
      if (output) {
        output->pause(running);  // what the running rank wrote since it last blocked is its own
        output->finish();
      }
      program.remove_copies();
    };
    RunResult r;
    const SharedStateWatch shared_state;
    // The collectives' scratch (a Bruck all-to-all's staging buffers, ...) taken over by the next
    // call, already faulted in, as the heap's blocks were (algorithms/scratch.hpp).
    const algorithms::PayloadMemoryReuse payload_reuse;
    // A process's program on its VP: main with its arguments, then, in the rank's turn, its end
    // checked (an MPI process must have called MPI_Finalize). Returns its exit status.
    auto run_process = [&](Proc& p, MainFn main, std::vector<std::string> args) {
      const int me = p.rank();
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      int rc = 0;
      bool by_exit = false;
      try {
        rc = main(static_cast<int>(args.size()), argv.data());
      } catch (const RankExit& e) {
        rc = e.status;
        by_exit = true;
      }
      p.await_turn();  // the session is the ranks'
      const RankState& rs = s.rank(me);
      if (rs.initialized && !rs.finalized) {
        if (!s.abort_code) {
          s.abort_code = rc != 0 ? rc : 2;
          s.abort_report = early_end_report(me, rs, rc, by_exit);
        }
        throw AbortRequested(s.abort_report);
      }
      return rc;
    };
    try {
      r = run(
          m,
          [&](Proc& p) {
            const int me = p.rank();
            if (me < np) {
              std::vector<std::string> args{o.program};
              args.insert(args.end(), o.args.begin(), o.args.end());
              exit_status[static_cast<std::size_t>(me)] =
                  run_process(p, program.main_of(o.privatize ? me - first : me), std::move(args));
              return;
            }
            // A VP beyond -np: spawns may start processes on it, one after another.
            while (!part && p.await_start()) {
              const std::shared_ptr<const Spawned> spawned = s.rank(me).spawned;
              const auto k = static_cast<std::size_t>(s.rank(me).world_rank);
              const auto& args = spawned->args[static_cast<std::size_t>(spawned->apps[k])];
              if (const int rc = run_process(p, spawned->mains[k], args); rc != 0 && !s.spawned_failure)
                s.spawned_failure.emplace(rc, fmt::format("spawned process {} (rank {} of its MPI_COMM_WORLD, {}) "
                                                          "exited with status {}",
                                                          me, k, args.front(), rc));
              s.released.insert(me);
            }
          },
          ro);
      if (part) output->finish_split(*part);
      output.reset();
    } catch (const RunError& e) {
      if (part) output->finish_split(*part, e.failed_at, e.failed_place);
      output.reset();
      std::string what = e.what();
      if (part) what = split_run_failure(*part, s, what);
      if (!speaks) return s.abort_code ? *s.abort_code : 2;
      if (s.abort_code) {
        std::fprintf(stderr, "touchstone mpirun: %s; the run is ended\ntrace_hash %016llx (of %s)\n",
                     s.abort_report.c_str(), static_cast<unsigned long long>(e.trace_hash),
                     e.hash_of_shares ? "the processes' shares of the run, each up to where it stopped"
                                      : "the run up to the failure");
        summary(fmt::format("ended with exit status {}", *s.abort_code), e.trace_hash);
        record(*s.abort_code, e.trace_hash, nullptr, nullptr, s.abort_report);
        return *s.abort_code;
      }
      std::fprintf(stderr, "error: the run failed:\n%s\n", what.c_str());
      // Interrupted, the run exits as a process killed by the signal would report it: 128 + signal.
      const int status = what.starts_with("interrupted by SIGINT")    ? 130
                         : what.starts_with("interrupted by SIGTERM") ? 143
                                                                      : 2;
      summary(fmt::format("the run failed (exit status {})", status), e.trace_hash);
      record(status, e.trace_hash, nullptr, nullptr, what);
      return status;
    }
    if (part) share_rank_ends(*part, s, exit_status, m.nodes());
    std::fflush(stdout);
    std::fputs(shared_state.changes().c_str(), stderr);
    if (o.on_result && speaks) o.on_result(m, r, ro);
    int status = 0;
    for (int i = 0; i < np && status == 0; ++i)
      if (exit_status[static_cast<std::size_t>(i)] != 0) {
        status = exit_status[static_cast<std::size_t>(i)];
        if (speaks) std::fprintf(stderr, "touchstone mpirun: rank %d exited with status %d\n", i, status);
      }
    if (status == 0 && s.spawned_failure) {
      status = s.spawned_failure->first;
      if (speaks) std::fprintf(stderr, "touchstone mpirun: %s\n", s.spawned_failure->second.c_str());
    }
    std::string measure_problem;
    const MeasuredRegions measured = measured_regions(s, measure_problem);
    if (!measure_problem.empty()) {
      if (speaks) std::fprintf(stderr, "touchstone mpirun: no measured region: %s\n", measure_problem.c_str());
      if (status == 0) status = 1;
    }
    summary(fmt::format("makespan {:.3f} us{}, {} messages, run {:.3f} host s{}", to_us(r.makespan),
                        measured.count ? fmt::format(", measured {:.3f} us over {} region(s)", to_us(measured.total),
                                                     measured.count)
                                       : "",
                        r.stats.messages, r.host_seconds, status ? fmt::format(", exit status {}", status) : ""),
            r.trace_hash);
    record(status, r.trace_hash, &r, measure_problem.empty() ? &measured : nullptr, measure_problem);
    return status;
  } catch (const Error& e) {
    std::fflush(stdout);
    // A usage error is every process's alike (the options, the machine, the program, a schedule's
    // entries no rank used): the first process says it for the job.
    if (speaks || !dynamic_cast<const UsageError*>(&e)) std::fprintf(stderr, "error: %s\n", e.what());
    summary("not run (exit status 1)", std::nullopt);
    record(1, std::nullopt, nullptr, nullptr, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    summary("not run (exit status 1)", std::nullopt);
    record(1, std::nullopt, nullptr, nullptr, e.what());
    return 1;
  }
}

}  // namespace touchstone::mpi

// exit(n) in a program module (libtouchstone_mpi_rank.a): on a rank, that rank's main ends with n;
// anywhere else (a module's constructor), the process exits.
extern "C" __attribute__((visibility("default"), noreturn)) void touchstone_mpi_exit(int status) {
  if (touchstone::Proc::current() && touchstone::mpi::session()) throw touchstone::mpi::RankExit{status};
  std::exit(status);
}
