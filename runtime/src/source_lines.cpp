// Source lines with libdw (touchstone/source_lines.hpp). One Dwfl per module file, kept: opening
// one parses the ELF and, at the first lookup, the DWARF line tables, which a lookup then only
// searches. A file is known by its path and identity (device, inode, modification time), so that a
// path reused for another file (an MPI program's copies of a later run) is read anew.
#include "touchstone/source_lines.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "frames.hpp"

namespace touchstone {

namespace {

// No separate debug files: a report must never wait on the network (libdw asks debuginfod servers
// when DEBUGINFOD_URLS is set), and the lines it wants are the program's, built into its module
// with -g. Symbol names still come from the module's own symbol tables.
int no_separate_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*, GElf_Word,
                          char**) {
  return -1;
}

// Never asked in practice: each module is reported with its file already open.
int no_other_elf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) { return -1; }

const Dwfl_Callbacks kCallbacks = {
    .find_elf = no_other_elf,
    .find_debuginfo = no_separate_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

struct ModuleLines {
  std::string path;
  dev_t device = 0;
  ino_t inode = 0;
  struct timespec modified {};
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;  // null: the file is no ELF libdw can read
  std::uint64_t last_use = 0;

  ModuleLines() = default;
  ModuleLines(const ModuleLines&) = delete;
  ModuleLines& operator=(const ModuleLines&) = delete;
  ~ModuleLines() {
    if (dwfl) dwfl_end(dwfl);
  }
  bool same_file(const struct stat& st) const {
    return st.st_dev == device && st.st_ino == inode && st.st_mtim.tv_sec == modified.tv_sec &&
           st.st_mtim.tv_nsec == modified.tv_nsec;
  }
};

// A run has a handful of modules (the program's copies, the libraries); a process that runs many
// programs one after another (a sweep, a test suite) drops the least recently used.
constexpr std::size_t kMaxModules = 64;

std::mutex g_lock;
std::vector<std::unique_ptr<ModuleLines>> g_modules;
std::uint64_t g_uses = 0;

ModuleLines& module_lines(const std::string& path, const struct stat& st) {
  ++g_uses;
  for (auto& m : g_modules)
    if (m->path == path && m->same_file(st)) {
      m->last_use = g_uses;
      return *m;
    }
  std::erase_if(g_modules, [&](const auto& m) { return m->path == path; });  // a changed file
  if (g_modules.size() >= kMaxModules) {
    auto oldest = g_modules.begin();
    for (auto it = g_modules.begin(); it != g_modules.end(); ++it)
      if ((*it)->last_use < (*oldest)->last_use) oldest = it;
    g_modules.erase(oldest);
  }
  auto m = std::make_unique<ModuleLines>();
  m->path = path;
  m->device = st.st_dev;
  m->inode = st.st_ino;
  m->modified = st.st_mtim;
  m->last_use = g_uses;
  m->dwfl = dwfl_begin(&kCallbacks);
  if (m->dwfl) {
    dwfl_report_begin(m->dwfl);
    // Placed at its link-time addresses (base 0 plus its segments' p_vaddr), the module answers
    // for an address of this process less the load bias the dynamic loader gave it.
    m->module = dwfl_report_elf(m->dwfl, path.c_str(), path.c_str(), -1, 0, true);
    dwfl_report_end(m->dwfl, nullptr, nullptr);
  }
  g_modules.push_back(std::move(m));
  return *g_modules.back();
}

std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

std::string own_executable() {
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string("/proc/self/exe");
}

}  // namespace

SourceLine source_line(const void* address) {
  SourceLine out;
  Dl_info info{};
  struct link_map* map = nullptr;
  if (!::dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) || !map) return out;
  // The executable's entry in the loader's list has no name.
  out.module = map->l_name && map->l_name[0] ? std::string(map->l_name) : own_executable();
  struct stat st {};
  if (::stat(out.module.c_str(), &st) != 0) return out;  // the vDSO, a deleted file
  const Dwarf_Addr at = reinterpret_cast<std::uintptr_t>(address) - map->l_addr;

  const std::lock_guard hold(g_lock);  // a Dwfl serves one thread at a time
  const ModuleLines& m = module_lines(out.module, st);
  if (!m.module) return out;
  if (const char* name = dwfl_module_addrname(m.module, at)) out.function = demangled(name);
  if (Dwfl_Line* line = dwfl_module_getsrc(m.module, at)) {
    int lineno = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr); file && lineno > 0) {
      // A file the compiler was given relative to its working directory: made absolute from the
      // unit's DW_AT_comp_dir, so that it names the file wherever the report is read.
      std::filesystem::path path(file);
      if (const char* dir = dwfl_line_comp_dir(line); path.is_relative() && dir && dir[0])
        path = (std::filesystem::path(dir) / path).lexically_normal();
      out.file = path.string();
      out.line = lineno;
    }
  }
  return out;
}

namespace detail {

std::string frame_text(int index, const void* pc, bool* is_main) {
  Dl_info info{};
  const bool known = ::dladdr(pc, &info) && info.dli_fname;
  if (is_main) *is_main = known && info.dli_sname && std::strcmp(info.dli_sname, "main") == 0;
  if (!known) return fmt::format("  #{} {:#x} (?)", index, reinterpret_cast<std::uintptr_t>(pc));
  const auto at = reinterpret_cast<std::uintptr_t>(pc);
  std::string what;
  if (const SourceLine where = source_line(pc); !where.function.empty())
    what = where.has_line() ? fmt::format("{} at {}:{}", where.function, where.file, where.line) : where.function;
  else if (info.dli_sname)
    what = fmt::format("{}+{:#x}", info.dli_sname, at - reinterpret_cast<std::uintptr_t>(info.dli_saddr));
  else
    what = fmt::format("{:#x}", at - reinterpret_cast<std::uintptr_t>(info.dli_fbase));
  return fmt::format("  #{} {} ({})", index, what, info.dli_fname);
}

}  // namespace detail

}  // namespace touchstone
