// Windows (MPI-3.1 11.2, 11.3.1 attributes, 8.3 error handlers): their creation in the four
// flavors, the exchange that tells every member where the others' memory is, and what a window
// reports about itself (rma.hpp).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "attributes.hpp"
#include "check.hpp"
#include "coll.hpp"
#include "comm.hpp"
#include "info.hpp"
#include "rma.hpp"

namespace touchstone::mpi {

Windows& windows(RankState& rs) {
  if (!rs.windows) rs.windows = std::make_shared<Windows>();
  return *rs.windows;
}

Window& window_of(RankState& rs, MPI_Win w) {
  Windows& ws = windows(rs);
  if (w <= 0 || w >= static_cast<int>(ws.table.size()) || !ws.table[static_cast<std::size_t>(w)])
    throw MpiError{MPI_ERR_WIN, fmt::format("window {} is not valid", w)};
  return *ws.table[static_cast<std::size_t>(w)];
}

int raise_on_window(RankState& rs, MPI_Win w, const char* call, const MpiError& e) {
  Windows& ws = windows(rs);
  const bool valid = w > 0 && w < static_cast<int>(ws.table.size()) && ws.table[static_cast<std::size_t>(w)];
  if (!valid) return raise(rs, MPI_COMM_WORLD, call, e);
  const MPI_Errhandler eh = ws.table[static_cast<std::size_t>(w)]->errhandler;
  return hand_to(rs, eh, w, MPI_COMM_NULL, call, e, [&] { return window_fatal_text(call, rs.proc->rank(), e); });
}

std::string window_fatal_text(const char* call, int rank, const MpiError& e) {
  return fmt::format("{} on rank {}: {} ({}); the window's error handler MPI_ERRORS_ARE_FATAL ends the run", call, rank,
                     e.what, error_text(e.code));
}

bool window_attribute(RankState& rs, MPI_Win w, int keyval, void* out) {
  Window& x = window_of(rs, w);
  switch (keyval) {
    case MPI_WIN_BASE: *static_cast<void**>(out) = x.base; return true;
    case MPI_WIN_SIZE: *static_cast<MPI_Aint**>(out) = &x.size; return true;
    case MPI_WIN_DISP_UNIT: *static_cast<int**>(out) = &x.disp_unit; return true;
    case MPI_WIN_CREATE_FLAVOR: *static_cast<int**>(out) = &x.flavor; return true;
    case MPI_WIN_MODEL: *static_cast<int**>(out) = &x.model; return true;
    default: return false;
  }
}

namespace {

Comm& intracomm_for_window(RankState& rs, MPI_Comm comm) {
  Comm& c = comm_of(rs, comm);
  if (c.inter) throw MpiError{MPI_ERR_COMM, "a window is made on an intracommunicator, not an intercommunicator"};
  return c;
}

void check_shape(MPI_Aint size, int disp_unit) {
  if (size < 0) throw MpiError{MPI_ERR_SIZE, fmt::format("window size {} is negative", size)};
  if (disp_unit <= 0) throw MpiError{MPI_ERR_DISP, fmt::format("displacement unit {} is not positive", disp_unit)};
}

std::vector<int> iota(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Makes the window on a private duplicate of `comm` (so that its synchronization messages never
// meet the program's) and exchanges every member's base, size, displacement unit and handle:
// an allgather, so creation costs what that collective costs. The exchange also makes sure that
// every member has registered its handlers before any operation can reach it.
MPI_Win make_window(RankState& rs, MPI_Comm comm, void* base, MPI_Aint size, int disp_unit, MPI_Info info, int flavor,
                    bool owns) {
  Comm& c = intracomm_for_window(rs, comm);
  const InfoPairs& pairs = info_of(rs, info);
  register_rma_handlers(rs);
  auto w = std::make_unique<Window>();
  Comm quiet;
  quiet.errhandler = MPI_ERRORS_RETURN;
  w->comm = add_intracomm(rs, quiet, rs.proc->subgroup(c.pt2pt, iota(c.size)));
  w->flavor = flavor;
  w->base = base;
  w->size = size;
  w->disp_unit = disp_unit;
  w->owns_memory = owns;
  w->info = pairs;
  w->conflicts_are_errors = w->hash_accesses = session()->leaks_are_errors;
  apply_info(*w);
  w->world = local_members(c);
  w->errhandler = MPI_ERRORS_ARE_FATAL;  // MPI-3.1 8.3: a new window's handler is fatal
  const auto n = static_cast<std::size_t>(c.size);
  w->locked.assign(n, 0);
  w->unflushed.assign(n, 0);
  Windows& ws = windows(rs);
  std::size_t h = 1;
  while (h < ws.table.size() && ws.table[h]) ++h;
  if (h == ws.table.size()) ws.table.emplace_back();
  const WinPeer mine{static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(base)), size, disp_unit,
                     static_cast<std::int64_t>(h)};
  w->peers.resize(n);
  Comm& wc = comm_of(rs, w->comm);
  ws.table[h] = std::move(w);
  allgather(rs, wc, &mine, 4, MPI_LONG, ws.table[h]->peers.data(), 4, MPI_LONG);
  return static_cast<MPI_Win>(h);
}

void* allocate(MPI_Aint size) {
  // At least one byte, so that every window of the flavor has an address of its own.
  void* p = std::calloc(size ? static_cast<std::size_t>(size) : 1, 1);
  if (!p) throw MpiError{MPI_ERR_NO_MEM, fmt::format("cannot allocate {} bytes", size)};
  return p;
}

}  // namespace

void apply_info(Window& w) {
  for (const auto& [k, v] : w.info)
    if (k == "touchstone_conflicts" && (v == "error" || v == "warning")) w.conflicts_are_errors = v == "error";
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return call("MPI_Win_create", comm, [&](RankState& rs) {
    check_out(win, "win");
    check_shape(size, disp_unit);
    if (size > 0 && !base) throw MpiError{MPI_ERR_BASE, fmt::format("base is null for a window of {} bytes", size)};
    *win = make_window(rs, comm, base, size, disp_unit, info, MPI_WIN_FLAVOR_CREATE, false);
  });
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return call("MPI_Win_allocate", comm, [&](RankState& rs) {
    check_out(win, "win");
    check_out(baseptr, "baseptr");
    check_shape(size, disp_unit);
    void* p = allocate(size);
    *static_cast<void**>(baseptr) = p;
    *win = make_window(rs, comm, p, size, disp_unit, info, MPI_WIN_FLAVOR_ALLOCATE, true);
  });
}

// Every VP is a node of its own (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives each rank a
// communicator of itself alone), so memory is shared only within a communicator of one rank.
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return call("MPI_Win_allocate_shared", comm, [&](RankState& rs) {
    check_out(win, "win");
    check_out(baseptr, "baseptr");
    check_shape(size, disp_unit);
    const Comm& c = intracomm_for_window(rs, comm);
    if (c.size != 1)
      throw MpiError{MPI_ERR_RMA_SHARED,
                     fmt::format("a shared window needs ranks of one node, but every rank is a node of its own and "
                                 "the communicator has {} ranks (use MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))",
                                 c.size)};
    void* p = allocate(size);
    *static_cast<void**>(baseptr) = p;
    *win = make_window(rs, comm, p, size, disp_unit, info, MPI_WIN_FLAVOR_SHARED, true);
  });
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  return win_call("MPI_Win_shared_query", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_out(size, "size");
    check_out(disp_unit, "disp_unit");
    check_out(baseptr, "baseptr");
    const int n = static_cast<int>(w.peers.size());
    int r = rank;
    if (rank == MPI_PROC_NULL) {  // the first rank with memory
      r = 0;
      while (r + 1 < n && w.peers[static_cast<std::size_t>(r)].size == 0) ++r;
    } else if (rank < 0 || rank >= n) {
      throw MpiError{MPI_ERR_RANK, fmt::format("rank {} is out of range: the window has {} rank(s)", rank, n)};
    }
    const WinPeer& p = w.peers[static_cast<std::size_t>(r)];
    // MPI-4.0 12.2.3: any flavor may be queried; memory of another node (every other rank, for a
    // window that is not shared) is reported as none.
    const bool reachable = w.flavor == MPI_WIN_FLAVOR_SHARED || w.world[static_cast<std::size_t>(r)] == rs.proc->rank();
    if (!reachable) {
      *size = 0;
      *disp_unit = 1;
      *static_cast<void**>(baseptr) = nullptr;
      return;
    }
    *size = p.size;
    *disp_unit = static_cast<int>(p.disp_unit);
    *static_cast<void**>(baseptr) = reinterpret_cast<void*>(static_cast<std::uintptr_t>(p.base));
  });
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return call_setting("MPI_Win_create_dynamic", comm, win, "win", [&](RankState& rs) {
    const int made = make_window(rs, comm, MPI_BOTTOM, 0, 1, info, MPI_WIN_FLAVOR_DYNAMIC, false);
    note_attached(rs, made, 0, 0, false, true);  // a split run: the handle's regions are this window's now
    return made;
  });
}

int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  return win_call("MPI_Win_attach", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC)
      throw MpiError{MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a window made by MPI_Win_create_dynamic"};
    if (size < 0) throw MpiError{MPI_ERR_SIZE, fmt::format("size {} is negative", size)};
    if (size > 0 && !base) throw MpiError{MPI_ERR_BASE, "base is null"};
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    for (const auto& [at, n] : w.attached)
      if (b < at + n && at < b + static_cast<std::uintptr_t>(size))
        throw MpiError{MPI_ERR_RMA_ATTACH,
                       fmt::format("[{:#x}, +{}) overlaps memory already attached at {:#x}", b, size, at)};
    w.attached.emplace_back(b, static_cast<std::size_t>(size));
    note_attached(rs, win, b, static_cast<std::size_t>(size), true);
  });
}

int MPI_Win_detach(MPI_Win win, const void* base) {
  return win_call("MPI_Win_detach", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC)
      throw MpiError{MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a window made by MPI_Win_create_dynamic"};
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    for (auto it = w.attached.begin(); it != w.attached.end(); ++it)
      if (it->first == b) {
        w.attached.erase(it);
        note_attached(rs, win, b, 0, false);
        return;
      }
    throw MpiError{MPI_ERR_RMA_ATTACH, fmt::format("no memory is attached at {:#x}", b)};
  });
}

// Collective: every operation of this origin completes, then every member waits for all (so that
// no operation reaches a freed window), then the window's attributes are deleted and it goes.
int MPI_Win_free(MPI_Win* win) {
  return win_call("MPI_Win_free", win ? *win : MPI_WIN_NULL, [&](RankState& rs) {
    check_out(win, "win");
    Window& w = window_of(rs, *win);
    if (w.started || w.posted || w.lock_all || std::any_of(w.locked.begin(), w.locked.end(), [](int l) { return l; }))
      throw MpiError{MPI_ERR_RMA_SYNC, "MPI_Win_free with an epoch still open (a lock, a start or a post)"};
    // MPI-3.1 11.2.5: a rank frees a window once its RMA communication on it is complete. RMA
    // calls after the last fence made it begin an access epoch, which only another fence ends.
    if (w.fence_epoch && w.fence_accessed)
      throw MpiError{MPI_ERR_RMA_SYNC,
                     "MPI_Win_free inside the access epoch that the last MPI_Win_fence began: this "
                     "rank made RMA calls since that fence, and no fence completed them"};
    flush_targets(rs, w, all_ranks(w));
    barrier(rs, comm_of(rs, w.comm));
    delete_attributes(rs, AttrKind::win, *win);
    if (w.owns_memory) std::free(w.base);
    free_comm(rs, w.comm);
    windows(rs).table[static_cast<std::size_t>(*win)].reset();
    *win = MPI_WIN_NULL;
  });
}

int MPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  return win_call("MPI_Win_get_group", win, [&](RankState& rs) {
    check_out(group, "group");
    *group = add_group(rs, window_of(rs, win).world);
  });
}

int MPI_Win_set_name(MPI_Win win, const char* win_name) {
  return win_call("MPI_Win_set_name", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_out(win_name, "win_name");
    std::string s(win_name);
    if (s.size() >= MPI_MAX_OBJECT_NAME) s.resize(MPI_MAX_OBJECT_NAME - 1);
    w.name = s;
  });
}

int MPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  return win_call("MPI_Win_get_name", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_out(win_name, "win_name");
    check_out(resultlen, "resultlen");
    const std::string s = w.name.value_or("");
    std::memcpy(win_name, s.c_str(), s.size() + 1);
    *resultlen = static_cast<int>(s.size());
  });
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
  return win_call("MPI_Win_set_info", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    merge_info(w.info, info_of(rs, info));
    apply_info(w);
  });
}

int MPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  return win_call("MPI_Win_get_info", win, [&](RankState& rs) {
    check_out(info_used, "info_used");
    *info_used = new_info(rs, window_of(rs, win).info);
  });
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn, MPI_Errhandler* errhandler) {
  return call("MPI_Win_create_errhandler", MPI_COMM_WORLD, [&](RankState& rs) {
    check_out(errhandler, "errhandler");
    check_out(reinterpret_cast<const void*>(win_errhandler_fn), "win_errhandler_fn");
    // A window's handler takes an MPI_Win*, a communicator's an MPI_Comm*: both are int handles.
    *errhandler = add_errhandler(rs, reinterpret_cast<MPI_Comm_errhandler_function*>(win_errhandler_fn));
  });
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  return win_call("MPI_Win_set_errhandler", win, [&](RankState& rs) {
    Window& w = window_of(rs, win);
    check_errhandler(rs, errhandler);
    w.errhandler = errhandler;
  });
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  return win_call("MPI_Win_get_errhandler", win, [&](RankState& rs) {
    check_out(errhandler, "errhandler");
    *errhandler = window_of(rs, win).errhandler;
  });
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  RankState& rs = state("MPI_Win_call_errhandler");
  try {
    window_of(rs, win);
  } catch (const MpiError& e) {
    return raise_on_window(rs, win, "MPI_Win_call_errhandler", e);
  }
  raise_on_window(rs, win, "MPI_Win_call_errhandler",
                  MpiError{errorcode, fmt::format("the program raised error code {}", errorcode)});
  return MPI_SUCCESS;
}
