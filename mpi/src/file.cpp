// I/O (MPI-3.1 chapter 13; docs/mpi.md, "I/O"): files of the host's file system, opened collectively
// by the ranks of a communicator and accessed through views. Every access is made in the rank's turn
// (call.hpp), so the file's contents follow the sequential order of the calls, the same on any number
// of host cores; an access takes no virtual time, since no machine here models an I/O system. The
// members of one MPI_File_open on a process share one descriptor and the shared file pointer
// (OpenFile); each rank keeps its view and its individual file pointer (File).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "check.hpp"
#include "coll.hpp"
#include "comm.hpp"
#include "info.hpp"
#include "request.hpp"
#include "types.hpp"

namespace touchstone::mpi {

/// What the members of one MPI_File_open on this process share: the descriptor, and the shared
/// file pointer in etypes of the view (every member has the same view when it is used).
struct OpenFile {
  int fd = -1;
  std::string name;
  std::uint64_t key = 0;  ///< its entry in Session::open_files
  MPI_Offset shared_pointer = 0;
  /// Collective calls that set the shared pointer, counted: the first member to finish the n-th
  /// sets it, so that a later independent access of a faster member is not undone.
  std::uint64_t updates_applied = 0;
  OpenFile() = default;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

/// A file view (MPI-3.1 13.3): the data the process sees is the filetype's data, tiled from `disp`
/// one extent after the other, in etypes.
struct View {
  MPI_Offset disp = 0;
  std::shared_ptr<const Type> etype, filetype;
  MPI_Datatype etype_handle = MPI_BYTE, filetype_handle = MPI_BYTE;  ///< as set, for MPI_File_get_view
  std::vector<TypeBlock> runs;      ///< the filetype's data runs in one copy, in type-map order
  std::vector<std::size_t> before;  ///< data bytes of the runs before each
  std::string datarep = "native";
};

struct File {
  std::shared_ptr<OpenFile> open;
  MPI_Comm comm = MPI_COMM_NULL;  ///< a private duplicate of the opening communicator
  int amode = 0;
  InfoPairs info;
  MPI_Errhandler errhandler = MPI_ERRORS_RETURN;  ///< MPI-3.1 13.7: MPI_FILE_NULL's when opened
  View view;
  MPI_Offset pointer = 0;  ///< the individual file pointer, in etypes
  bool atomic = false;
  std::uint64_t updates = 0;  ///< collective calls that set the shared pointer, on this rank
  /// A split collective begun and not ended: its status (MPI-3.1 13.4.5 allows one per file).
  std::optional<MPI_Status> split;
  const char* split_call = nullptr;
};

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

namespace {

std::string handle_text(MPI_File fh) {
  return fh == MPI_FILE_NULL ? "the file is MPI_FILE_NULL" : fmt::format("file handle {} is not valid", fh);
}

File* find_file(RankState& rs, MPI_File fh) {
  const auto i = static_cast<std::size_t>(fh) - 1;
  if (fh <= 0 || i >= rs.files.size() || !rs.files[i]) return nullptr;
  return rs.files[i].get();
}

File& file_of(RankState& rs, MPI_File fh) {
  File* f = find_file(rs, fh);
  if (!f) throw MpiError{MPI_ERR_FILE, handle_text(fh)};
  return *f;
}

// An error of a call on file fh goes to the file's error handler; one of MPI_File_open or
// MPI_File_delete, or naming no valid file, to MPI_FILE_NULL's (MPI-3.1 13.7).
int raise_on_file(RankState& rs, MPI_File fh, const char* call, const MpiError& e) {
  rs.proc->await_turn();
  const File* f = find_file(rs, fh);
  const MPI_Errhandler eh = f ? f->errhandler : rs.file_null_errhandler;
  return hand_to(rs, eh, f ? fh : MPI_FILE_NULL, MPI_COMM_NULL, call, e, [&] {
    return fmt::format("{} on rank {}: {} ({}); the file's error handler MPI_ERRORS_ARE_FATAL ends the run", call,
                       rs.proc->rank(), e.what, error_kind(rs, e.code));
  });
}

template <class Body>
[[gnu::always_inline]] inline int file_call(const char* name, MPI_File fh, Body&& body) {
  return object_call(
      name, true, [&](RankState& rs, const MpiError& e) { return raise_on_file(rs, fh, name, e); },
      std::forward<Body>(body));
}

// The error class of a failed system call on file `name`, with the system's words.
MpiError system_error(int err, const std::string& what) {
  int cls = MPI_ERR_IO;
  switch (err) {
    case ENOENT: cls = MPI_ERR_NO_SUCH_FILE; break;
    case EEXIST: cls = MPI_ERR_FILE_EXISTS; break;
    case EACCES:
    case EPERM: cls = MPI_ERR_ACCESS; break;
    case EROFS: cls = MPI_ERR_READ_ONLY; break;
    case ENOSPC: cls = MPI_ERR_NO_SPACE; break;
    case EDQUOT: cls = MPI_ERR_QUOTA; break;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP: cls = MPI_ERR_BAD_FILE; break;
    case ETXTBSY: cls = MPI_ERR_FILE_IN_USE; break;
    default: break;
  }
  return MpiError{cls, fmt::format("{}: {}", what, std::strerror(err))};
}

// What is wrong with an access mode (MPI-3.1 13.2.1), or "".
std::string amode_problem(int amode) {
  const int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL |
                    MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
  if (amode & ~known) return fmt::format("amode {:#x} has bits no MPI_MODE_ constant has", amode);
  const int access =
      (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0);
  if (access != 1) return "amode needs exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and MPI_MODE_WRONLY";
  if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
    return "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
  if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL)) return "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
  return "";
}

int open_flags(int amode) {
  if (amode & MPI_MODE_RDONLY) return O_RDONLY;
  return amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
}

std::vector<int> first_ranks(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// --- the members' agreement, on the file's private communicator -------------------------------
//
// A member may go on past an agreement's wait on another host core (docs/parallel.md, "Programs
// that go on past their receives"); what follows it touches what the members share (the open
// file, its shared pointer, the run's table of open files), so each agreement ends in the member's
// turn in the sequential order (Proc::await_turn).

// The largest of the members' values.
long long max_of(RankState& rs, Comm& pc, long long v) {
  long long out = 0;
  reduction(rs, pc, Reduction::allreduce, &v, &out, 1, MPI_LONG_LONG, MPI_MAX, 0);
  rs.proc->await_turn();
  return out;
}

// MPI_ERR_NOT_SAME unless every member passed the same value.
void check_same(RankState& rs, Comm& pc, long long v, const char* what) {
  const long long both[2] = {v, -v};
  long long out[2] = {0, 0};
  reduction(rs, pc, Reduction::allreduce, both, out, 2, MPI_LONG_LONG, MPI_MAX, 0);
  rs.proc->await_turn();
  if (out[0] != -out[1])
    throw MpiError{MPI_ERR_NOT_SAME, fmt::format("the members passed different {} (this rank {}, from {} to {})", what,
                                                 v, -out[1], out[0])};
}

// Every member's `n` values, in rank order.
std::vector<long long> all_of(RankState& rs, Comm& pc, const long long* mine, int n) {
  std::vector<long long> out(static_cast<std::size_t>(n) * static_cast<std::size_t>(pc.size));
  allgather(rs, pc, mine, n, MPI_LONG_LONG, out.data(), n, MPI_LONG_LONG);
  rs.proc->await_turn();
  return out;
}

// --- views --------------------------------------------------------------------------------------

// The filetype's runs, adjacent ones joined, and the data bytes before each.
void set_runs(View& v) {
  v.runs.clear();
  for_each_run(*v.filetype, 1, [&](MPI_Aint off, std::size_t len) {
    if (len == 0) return;
    if (!v.runs.empty() && v.runs.back().offset + static_cast<MPI_Aint>(v.runs.back().length) == off)
      v.runs.back().length += len;
    else
      v.runs.push_back(TypeBlock{off, len});
  });
  v.before.assign(v.runs.size(), 0);
  for (std::size_t i = 1; i < v.runs.size(); ++i) v.before[i] = v.before[i - 1] + v.runs[i - 1].length;
}

View byte_view() {
  View v;
  v.etype = shared_copy(*predefined_type(MPI_BYTE));
  v.filetype = v.etype;
  set_runs(v);
  return v;
}

// Calls run(file offset, bytes, offset in the data) for the file's pieces of the view's data
// bytes [pos, pos + len), in order, adjacent pieces joined.
template <class Run>
void for_each_piece(const View& v, std::size_t pos, std::size_t len, Run run) {
  const std::size_t size = v.filetype->size;
  if (len == 0 || size == 0) return;
  const MPI_Offset extent = v.filetype->extent;
  std::size_t tile = pos / size, r = pos % size;
  auto i = static_cast<std::size_t>(std::upper_bound(v.before.begin(), v.before.end(), r) - v.before.begin()) - 1;
  MPI_Offset start = -1;
  std::size_t length = 0, data = 0, done = 0;
  while (done < len) {
    const std::size_t into = r - v.before[i];
    const std::size_t n = std::min(len - done, v.runs[i].length - into);
    const MPI_Offset at =
        v.disp + static_cast<MPI_Offset>(tile) * extent + v.runs[i].offset + static_cast<MPI_Offset>(into);
    if (length > 0 && start + static_cast<MPI_Offset>(length) == at) {
      length += n;
    } else {
      if (length > 0) run(start, length, data);
      start = at;
      length = n;
      data = done;
    }
    done += n;
    r += n;
    if (into + n == v.runs[i].length && ++i == v.runs.size()) {
      i = 0;
      r = 0;
      ++tile;
    }
  }
  run(start, length, data);
}

// The view's data bytes that lie below file offset `end` (the view's position of the end of file).
std::size_t data_below(const View& v, MPI_Offset end) {
  if (end <= v.disp || v.filetype->size == 0) return 0;
  const MPI_Offset extent = std::max<MPI_Offset>(v.filetype->extent, 1);
  const auto tiles = static_cast<std::size_t>((end - v.disp) / extent);
  const MPI_Offset within = (end - v.disp) % extent;
  std::size_t n = tiles * v.filetype->size;
  for (const TypeBlock& b : v.runs)
    if (b.offset < within)
      n += static_cast<std::size_t>(std::min<MPI_Offset>(static_cast<MPI_Offset>(b.length), within - b.offset));
  return n;
}

MPI_Offset file_size(const File& f) {
  struct stat st {};
  if (::fstat(f.open->fd, &st) != 0) throw system_error(errno, "cannot read the size of \"" + f.open->name + "\"");
  return st.st_size;
}

// The view's position, in etypes, of the end of the file.
MPI_Offset end_position(const File& f) {
  return static_cast<MPI_Offset>(data_below(f.view, file_size(f)) / std::max<std::size_t>(f.view.etype->size, 1));
}

// A file in external32 holds the same layout as in memory, big-endian (MPI-3.1 13.5.2), for the
// types whose external32 size is their size here; a type with MPI_LONG (8 bytes here, 4 there),
// MPI_LONG_DOUBLE (10 of 16 here, 16 there) or their pairs would lay the file out otherwise.
void check_external(const Type& t, const char* which) {
  if (external_size(t, 1) != t.size)
    throw MpiError{MPI_ERR_UNSUPPORTED_DATAREP,
                   fmt::format("the {} takes {} bytes in external32 and {} here: external32 files are provided for "
                               "types of the same size in both (not MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_DOUBLE and "
                               "the types made of them)",
                               which, external_size(t, 1), t.size)};
}

// MPI-3.1 13.3: a view's etype and filetype have their data at displacements that are not negative
// and never decrease, and, in a file opened for writing, do not overlap. MPI_ERR_IO, as ROMIO
// reports it, since the standard names no class.
void check_layout(const Type& t, const char* which, bool writable) {
  MPI_Aint last = 0, end = 0;
  for_each_run(t, 1, [&](MPI_Aint off, std::size_t len) {
    if (len == 0) return;
    if (off < 0) throw MpiError{MPI_ERR_IO, fmt::format("the {} has data at displacement {}, below 0", which, off)};
    if (off < last)
      throw MpiError{MPI_ERR_IO, fmt::format("the {}'s displacements decrease (from {} to {})", which, last, off)};
    if (writable && off < end)
      throw MpiError{MPI_ERR_IO, fmt::format("the {}'s data overlaps itself at displacement {} in a file opened for "
                                             "writing",
                                             which, off)};
    last = off;
    end = std::max(end, off + static_cast<MPI_Aint>(len));
  });
}

// --- data access --------------------------------------------------------------------------------

enum class Pointer { explicit_offset, individual, shared };

// Reads or writes `count` elements of `dt` at buf from view position `at` (etypes); returns the
// bytes moved, fewer than asked when a read meets the end of the file.
std::size_t transfer(RankState& rs, File& f, MPI_Offset at, void* buf, int count, MPI_Datatype dt, bool write) {
  check_count(count);
  const Type& t = committed(rs, dt);
  check_buffer(buf, count, t);
  const std::size_t esize = f.view.etype->size;
  const std::size_t bytes = static_cast<std::size_t>(count) * t.size;
  if (esize > 0 && t.size % esize != 0)
    throw MpiError{MPI_ERR_TYPE,
                   fmt::format("the datatype's {} bytes are not a whole number of etypes of {} bytes", t.size, esize)};
  if (at < 0) throw MpiError{MPI_ERR_ARG, fmt::format("offset {} is negative", at)};
  if (write && (f.amode & MPI_MODE_RDONLY))
    throw MpiError{MPI_ERR_READ_ONLY, "a write to \"" + f.open->name + "\", opened MPI_MODE_RDONLY"};
  if (!write && (f.amode & MPI_MODE_WRONLY))
    throw MpiError{MPI_ERR_ACCESS, "a read of \"" + f.open->name + "\", opened MPI_MODE_WRONLY"};
  const std::size_t pos = static_cast<std::size_t>(at) * esize;
  const int fd = f.open->fd;
  const bool external = f.view.datarep == "external32";
  if (external) check_external(t, "datatype");
  if (write) {
    std::vector<std::byte> scratch, converted;
    std::span<const std::byte> data = send_bytes(buf, count, t, scratch);
    if (external) {
      converted.resize(bytes);
      convert_external(t, static_cast<std::size_t>(count), const_cast<std::byte*>(data.data()), converted.data(), true);
      data = converted;
    }
    for_each_piece(f.view, pos, bytes, [&](MPI_Offset off, std::size_t n, std::size_t from) {
      for (std::size_t w = 0; w < n;) {
        const ssize_t k = ::pwrite(fd, data.data() + from + w, n - w, off + static_cast<MPI_Offset>(w));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) throw system_error(k < 0 ? errno : ENOSPC, "cannot write \"" + f.open->name + "\"");
        w += static_cast<std::size_t>(k);
      }
    });
    return bytes;
  }
  std::vector<std::byte> data(bytes);
  std::size_t got = 0;
  bool at_end = false;
  for_each_piece(f.view, pos, bytes, [&](MPI_Offset off, std::size_t n, std::size_t from) {
    if (at_end) return;
    for (std::size_t r = 0; r < n;) {
      const ssize_t k = ::pread(fd, data.data() + from + r, n - r, off + static_cast<MPI_Offset>(r));
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) throw system_error(errno, "cannot read \"" + f.open->name + "\"");
      if (k == 0) {
        at_end = true;
        return;
      }
      r += static_cast<std::size_t>(k);
      got = from + r;
    }
  });
  if (external) {  // whole elements only: the bytes of a partial one are left as read
    std::vector<std::byte> native(data.size());
    const std::size_t whole = t.size ? got / t.size : 0;
    convert_external(t, whole, native.data(), data.data(), false);
    std::copy(native.begin(), native.begin() + static_cast<std::ptrdiff_t>(whole * t.size), data.begin());
  }
  unpack(std::span<const std::byte>(data.data(), got), buf, static_cast<std::size_t>(count), t);
  return got;
}

MPI_Status status_of(std::size_t bytes) {
  MPI_Status s = empty_status();
  s.touchstone_bytes = bytes;
  return s;
}

void sets_shared_pointer(File& f, MPI_Offset value) {
  if (f.open->updates_applied < ++f.updates) {
    f.open->shared_pointer = value;
    f.open->updates_applied = f.updates;
  }
}

void check_pointer_mode(const File& f, Pointer p) {
  if (p != Pointer::shared && (f.amode & MPI_MODE_SEQUENTIAL))
    throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION, "\"" + f.open->name +
                                                      "\" was opened MPI_MODE_SEQUENTIAL: only the shared file "
                                                      "pointer may be used"};
}

// An independent access through pointer p (`offset` for explicit offsets); the status's bytes.
MPI_Status access(RankState& rs, File& f, Pointer p, MPI_Offset offset, void* buf, int count, MPI_Datatype dt,
                  bool write) {
  check_pointer_mode(f, p);
  const std::size_t esize = std::max<std::size_t>(f.view.etype->size, 1);
  MPI_Offset at = offset;
  if (p == Pointer::individual) at = f.pointer;
  if (p == Pointer::shared) {
    if (settings().split)
      throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                     "independent accesses through the shared file pointer are not provided in a run split over "
                     "processes (the ordered accesses are)"};
    at = f.open->shared_pointer;
  }
  const std::size_t moved = transfer(rs, f, at, buf, count, dt, write);
  // An access is whole in its rank's turn, so no member moves the shared pointer meanwhile; one
  // refused (a bad argument, a read-only file) moves neither pointer.
  if (p == Pointer::individual) f.pointer += static_cast<MPI_Offset>(moved / esize);
  if (p == Pointer::shared)  // by what was asked, as the ordered accesses move it
    f.open->shared_pointer =
        at + static_cast<MPI_Offset>(static_cast<std::size_t>(count) * committed(rs, dt).size / esize);
  return status_of(moved);
}

// MPI_File_read_ordered, MPI_File_write_ordered: the members' accesses one after the other in rank
// order from the shared file pointer, which then points past all of them.
MPI_Status ordered(RankState& rs, File& f, void* buf, int count, MPI_Datatype dt, bool write) {
  check_count(count);
  const Type& t = committed(rs, dt);
  const std::size_t esize = std::max<std::size_t>(f.view.etype->size, 1);
  const long long mine[2] = {f.open->shared_pointer,
                             static_cast<long long>(static_cast<std::size_t>(count) * t.size / esize)};
  Comm& pc = comm_of(rs, f.comm);
  const std::vector<long long> all = all_of(rs, pc, mine, 2);
  long long base = 0, before = 0, total = 0;
  for (int r = 0; r < pc.size; ++r) {
    base = std::max(base, all[2 * static_cast<std::size_t>(r)]);
    if (r < pc.rank) before += all[2 * static_cast<std::size_t>(r) + 1];
    total += all[2 * static_cast<std::size_t>(r) + 1];
  }
  const std::size_t moved = transfer(rs, f, base + before, buf, count, dt, write);
  sets_shared_pointer(f, base + total);
  return status_of(moved);
}

MPI_Offset seek_target(const File& f, MPI_Offset from, MPI_Offset offset, int whence) {
  MPI_Offset to = 0;
  switch (whence) {
    case MPI_SEEK_SET: to = offset; break;
    case MPI_SEEK_CUR: to = from + offset; break;
    case MPI_SEEK_END: to = end_position(f) + offset; break;
    default: throw MpiError{MPI_ERR_ARG, fmt::format("whence {} is not MPI_SEEK_SET, _CUR or _END", whence)};
  }
  if (to < 0)
    throw MpiError{MPI_ERR_ARG, fmt::format("the seek would move the file pointer to {}, before the view's start", to)};
  return to;
}

MPI_File add_file(RankState& rs, std::shared_ptr<File> f) {
  std::size_t i = 0;
  while (i < rs.files.size() && rs.files[i]) ++i;
  if (i == rs.files.size()) rs.files.emplace_back();
  rs.files[i] = std::move(f);
  return static_cast<MPI_File>(i + 1);
}

// MPI_File_open's body: every member checks its arguments, the members agree, the first creates
// the file when asked and the others open it after, sharing its descriptor within a process.
MPI_File open_file(RankState& rs, MPI_Comm comm, const char* filename, int amode, MPI_Info info) {
  Comm& c = comm_of(rs, comm);
  if (c.inter) throw MpiError{MPI_ERR_COMM, "a file is opened on an intracommunicator, not an intercommunicator"};
  const InfoPairs& hints = info_of(rs, info);
  std::string problem = filename ? amode_problem(amode) : "filename is a null pointer";
  int code = problem.empty() ? MPI_SUCCESS : filename ? MPI_ERR_AMODE : MPI_ERR_ARG;
  Comm quiet;
  quiet.errhandler = MPI_ERRORS_RETURN;
  const MPI_Comm private_comm = add_intracomm(rs, quiet, rs.proc->subgroup(c.pt2pt, first_ranks(c.size)));
  Comm& pc = comm_of(rs, private_comm);
  auto fail = [&](int cls, std::string what) {
    free_comm(rs, private_comm);
    throw MpiError{cls, std::move(what)};
  };
  // Arguments first: a member's bad ones fail the call on every member, with no file touched.
  const long long worst = max_of(rs, pc, code);
  if (worst != MPI_SUCCESS)
    fail(static_cast<int>(worst), code != MPI_SUCCESS ? problem : "another member's arguments are not valid");
  const std::string name = filename;
  try {
    check_same(rs, pc, amode, "access modes");
  } catch (const MpiError& e) {
    fail(e.code, e.what);
  }
  const std::uint64_t key = pc.pt2pt.context();
  auto& registry = session()->open_files;
  std::shared_ptr<OpenFile> open;
  auto open_here = [&](int extra) -> MpiError {
    if (auto known = registry[key].lock()) {
      open = std::move(known);
      return MpiError{MPI_SUCCESS, ""};
    }
    const int fd = ::open(name.c_str(), open_flags(amode) | extra | O_CLOEXEC, 0666);
    if (fd < 0) return system_error(errno, "cannot open \"" + name + "\"");
    open = std::make_shared<OpenFile>();
    open->fd = fd;
    open->name = name;
    open->key = key;
    registry[key] = open;
    return MpiError{MPI_SUCCESS, ""};
  };
  // The first member creates the file (exclusively when asked), then the others open it.
  MpiError first{MPI_SUCCESS, ""};
  if (pc.rank == 0) first = open_here((amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0));
  const long long first_code = max_of(rs, pc, first.code);
  if (first_code != MPI_SUCCESS)
    fail(static_cast<int>(first_code), pc.rank == 0 ? first.what : "the first member could not open \"" + name + "\"");
  MpiError mine{MPI_SUCCESS, ""};
  if (pc.rank != 0) mine = open_here(0);
  const long long any = max_of(rs, pc, mine.code);
  if (any != MPI_SUCCESS)
    fail(static_cast<int>(any),
         mine.code != MPI_SUCCESS ? mine.what : "another member could not open \"" + name + "\"");
  auto f = std::make_shared<File>();
  f->open = std::move(open);
  f->comm = private_comm;
  f->amode = amode;
  f->info = hints;
  f->errhandler = rs.file_null_errhandler;
  f->view = byte_view();
  if (amode & MPI_MODE_APPEND) {
    f->pointer = end_position(*f);
    sets_shared_pointer(*f, f->pointer);
  }
  return add_file(rs, std::move(f));
}

// The split collectives (MPI-3.1 13.4.5): the access is made at the begin call, its status kept
// for the end call; one may be active on a file at a time.
void check_no_split(const File& f, const char* call) {
  if (f.split)
    throw MpiError{MPI_ERR_OTHER, fmt::format("{} while {} is active on the file (one split collective at a time)",
                                              call, f.split_call)};
}

void end_split(File& f, const char* call, const char* begin, MPI_Status* status) {
  if (!f.split || std::strcmp(f.split_call, begin) != 0)
    throw MpiError{MPI_ERR_OTHER, fmt::format("{} without {} before it", call, begin)};
  set_result_status(status, *f.split);
  f.split.reset();
}

MPI_Request done_request(RankState& rs, const MPI_Status& s) {
  auto q = std::make_unique<Req>();
  q->done = true;
  q->status = s;
  return new_req(rs, std::move(q));
}

// The body of a blocking data access call (*status set) and of a nonblocking one (*request a
// completed request with the status: the access is made at the call).
template <class Access>
[[gnu::always_inline]] inline int data_call(const char* name, MPI_File fh, MPI_Status* status, Access how) {
  return file_call(name, fh, [&](RankState& rs) { set_result_status(status, how(rs, file_of(rs, fh))); });
}
template <class Access>
[[gnu::always_inline]] inline int request_call(const char* name, MPI_File fh, MPI_Request* request, Access how) {
  return file_call(name, fh, [&](RankState& rs) {
    check_out(request, "request");
    *request = done_request(rs, how(rs, file_of(rs, fh)));
  });
}
// A split collective's begin call.
template <class Access>
[[gnu::always_inline]] inline int begin_call(const char* name, MPI_File fh, Access how) {
  return file_call(name, fh, [&](RankState& rs) {
    File& f = file_of(rs, fh);
    check_no_split(f, name);
    f.split = how(rs, f);
    f.split_call = name;
  });
}
[[gnu::always_inline]] inline int end_call(const char* name, const char* begin, MPI_File fh, MPI_Status* status) {
  return file_call(name, fh, [&](RankState& rs) { end_split(file_of(rs, fh), name, begin, status); });
}

// The access of a data access call, as data_call, request_call and begin_call take it.
auto through(Pointer p, MPI_Offset offset, const void* buf, int count, MPI_Datatype dt, bool write) {
  return [=](RankState& rs, File& f) { return access(rs, f, p, offset, const_cast<void*>(buf), count, dt, write); };
}
auto in_order(const void* buf, int count, MPI_Datatype dt, bool write) {
  return [=](RankState& rs, File& f) { return ordered(rs, f, const_cast<void*>(buf), count, dt, write); };
}
constexpr Pointer kAt = Pointer::explicit_offset;
constexpr Pointer kOwn = Pointer::individual;
constexpr Pointer kShared = Pointer::shared;

}  // namespace

// --- opening, closing, the file's size, group, mode and hints (MPI-3.1 13.2) ---------------------

std::vector<FileLeft> touchstone::mpi::files_left_open(const RankState& rs) {
  std::vector<FileLeft> left;
  for (std::size_t i = 0; i < rs.files.size(); ++i)
    if (rs.files[i]) left.push_back(FileLeft{static_cast<MPI_File>(i + 1), rs.files[i]->open->name, rs.files[i]->comm});
  return left;
}

int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  return file_call("MPI_File_open", MPI_FILE_NULL, [&](RankState& rs) {
    check_out(fh, "fh");
    *fh = open_file(rs, comm, filename, amode, info);
    made(rs, 'f', *fh);
  });
}

int MPI_File_close(MPI_File* fh) {
  return file_call("MPI_File_close", fh ? *fh : MPI_FILE_NULL, [&](RankState& rs) {
    check_out(fh, "fh");
    File& f = file_of(rs, *fh);
    Comm& pc = comm_of(rs, f.comm);
    check_no_split(f, "MPI_File_close");
    // Every member has finished with the file before the first deletes it.
    barrier(rs, pc);
    rs.proc->await_turn();
    if ((f.amode & MPI_MODE_DELETE_ON_CLOSE) && pc.rank == 0 && ::unlink(f.open->name.c_str()) != 0 && errno != ENOENT)
      throw system_error(errno, "cannot delete \"" + f.open->name + "\"");
    free_comm(rs, f.comm);
    unmade(rs, 'f', *fh);
    const std::uint64_t key = f.open->key;
    rs.files[static_cast<std::size_t>(*fh) - 1].reset();  // the last member here closes the descriptor
    auto& registry = session()->open_files;
    if (const auto it = registry.find(key); it != registry.end() && it->second.expired()) registry.erase(it);
    *fh = MPI_FILE_NULL;
  });
}

int MPI_File_delete(const char* filename, MPI_Info info) {
  return file_call("MPI_File_delete", MPI_FILE_NULL, [&](RankState& rs) {
    check_out(filename, "filename");
    info_of(rs, info);
    if (::unlink(filename) != 0) throw system_error(errno, fmt::format("cannot delete \"{}\"", filename));
  });
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  return file_call("MPI_File_set_size", fh, [&](RankState& rs) {
    File& f = file_of(rs, fh);
    if (size < 0) throw MpiError{MPI_ERR_ARG, fmt::format("size {} is negative", size)};
    check_same(rs, comm_of(rs, f.comm), size, "sizes");
    if (f.amode & MPI_MODE_RDONLY)
      throw MpiError{MPI_ERR_READ_ONLY, "\"" + f.open->name + "\" was opened MPI_MODE_RDONLY"};
    if (::ftruncate(f.open->fd, size) != 0) throw system_error(errno, "cannot resize \"" + f.open->name + "\"");
  });
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  return file_call("MPI_File_preallocate", fh, [&](RankState& rs) {
    File& f = file_of(rs, fh);
    if (size < 0) throw MpiError{MPI_ERR_ARG, fmt::format("size {} is negative", size)};
    check_same(rs, comm_of(rs, f.comm), size, "sizes");
    if (f.amode & MPI_MODE_RDONLY)
      throw MpiError{MPI_ERR_READ_ONLY, "\"" + f.open->name + "\" was opened MPI_MODE_RDONLY"};
    // Never shrinks the file (MPI-3.1 13.2.6).
    if (file_size(f) < size && ::ftruncate(f.open->fd, size) != 0)
      throw system_error(errno, "cannot grow \"" + f.open->name + "\"");
  });
}

int MPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  return file_call("MPI_File_get_size", fh, [&](RankState& rs) {
    check_out(size, "size");
    *size = file_size(file_of(rs, fh));
  });
}

int MPI_File_get_group(MPI_File fh, MPI_Group* group) {
  return file_call("MPI_File_get_group", fh, [&](RankState& rs) {
    check_out(group, "group");
    *group = add_group(rs, local_members(comm_of(rs, file_of(rs, fh).comm)));
  });
}

int MPI_File_get_amode(MPI_File fh, int* amode) {
  return file_call("MPI_File_get_amode", fh, [&](RankState& rs) {
    check_out(amode, "amode");
    *amode = file_of(rs, fh).amode;
  });
}

int MPI_File_set_info(MPI_File fh, MPI_Info info) {
  return file_call("MPI_File_set_info", fh,
                   [&](RankState& rs) { merge_info(file_of(rs, fh).info, info_of(rs, info)); });
}

int MPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  return file_call("MPI_File_get_info", fh, [&](RankState& rs) {
    check_out(info_used, "info_used");
    *info_used = new_info(rs, file_of(rs, fh).info);
  });
}

// --- views (13.3) -----------------------------------------------------------------------------------

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
                      MPI_Info info) {
  return file_call("MPI_File_set_view", fh, [&](RankState& rs) {
    File& f = file_of(rs, fh);
    check_out(datarep, "datarep");
    const Type& et = committed(rs, etype);
    const Type& ft = committed(rs, filetype);
    const std::string rep = datarep;
    if (rep != "native" && rep != "internal" && rep != "external32")
      throw MpiError{MPI_ERR_UNSUPPORTED_DATAREP,
                     fmt::format("data representation \"{}\" (\"native\", \"internal\" and \"external32\" are "
                                 "provided)",
                                 rep)};
    if (rep == "external32") {
      check_external(et, "etype");
      check_external(ft, "filetype");
    }
    check_no_split(f, "MPI_File_set_view");
    if (disp == MPI_DISPLACEMENT_CURRENT) {
      if (!(f.amode & MPI_MODE_SEQUENTIAL))
        throw MpiError{MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT on a file not opened MPI_MODE_SEQUENTIAL"};
      // The pointer as the last member to enter found it: a faster member may have set the view
      // and reset the pointer already.
      const MPI_Offset at = max_of(rs, comm_of(rs, f.comm), f.open->shared_pointer);
      disp = f.view.disp + static_cast<MPI_Offset>(static_cast<std::size_t>(at) * f.view.etype->size);
    }
    if (disp < 0) throw MpiError{MPI_ERR_ARG, fmt::format("displacement {} is negative", disp)};
    if (et.size > 0 && ft.size % et.size != 0)
      throw MpiError{MPI_ERR_TYPE, fmt::format("the filetype's {} bytes are not a whole number of etypes of {} bytes",
                                               ft.size, et.size)};
    if (ft.size > 0 && ft.extent <= 0)
      throw MpiError{MPI_ERR_TYPE, fmt::format("the filetype's extent, {}, is not positive", ft.extent)};
    check_layout(et, "etype", !(f.amode & MPI_MODE_RDONLY));
    check_layout(ft, "filetype", !(f.amode & MPI_MODE_RDONLY));
    View v;
    v.disp = disp;
    v.etype = shared_copy(et);
    v.filetype = shared_copy(ft);
    v.etype_handle = etype;
    v.filetype_handle = filetype;
    v.datarep = rep;
    set_runs(v);
    merge_info(f.info, info_of(rs, info));
    f.view = std::move(v);
    f.pointer = 0;
    sets_shared_pointer(f, 0);
  });
}

int MPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype, char* datarep) {
  return file_call("MPI_File_get_view", fh, [&](RankState& rs) {
    check_out(disp, "disp");
    check_out(etype, "etype");
    check_out(filetype, "filetype");
    check_out(datarep, "datarep");
    const View& v = file_of(rs, fh).view;
    // A derived type comes back as a new handle, which the program frees (MPI-3.1 13.3).
    auto handle = [&](MPI_Datatype h, const std::shared_ptr<const Type>& t) {
      if (predefined_type(h)) return h;
      Type copy = *t;
      copy.committed = true;
      return new_type_handle(rs, std::move(copy));
    };
    *disp = v.disp;
    *etype = handle(v.etype_handle, v.etype);
    *filetype = handle(v.filetype_handle, v.filetype);
    std::memcpy(datarep, v.datarep.c_str(), v.datarep.size() + 1);
  });
}

// --- data access (13.4): explicit offsets, the individual file pointer, the shared file pointer;
// blocking, nonblocking and split collective. A collective access needs no message here: each
// member's part is made in its turn.

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_read_at", fh, status, through(kAt, offset, buf, count, datatype, false));
}
int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                         MPI_Status* status) {
  return data_call("MPI_File_read_at_all", fh, status, through(kAt, offset, buf, count, datatype, false));
}
int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype,
                      MPI_Status* status) {
  return data_call("MPI_File_write_at", fh, status, through(kAt, offset, buf, count, datatype, true));
}
int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  return data_call("MPI_File_write_at_all", fh, status, through(kAt, offset, buf, count, datatype, true));
}
int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                      MPI_Request* request) {
  return request_call("MPI_File_iread_at", fh, request, through(kAt, offset, buf, count, datatype, false));
}
int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype,
                       MPI_Request* request) {
  return request_call("MPI_File_iwrite_at", fh, request, through(kAt, offset, buf, count, datatype, true));
}
int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                          MPI_Request* request) {
  return request_call("MPI_File_iread_at_all", fh, request, through(kAt, offset, buf, count, datatype, false));
}
int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  return request_call("MPI_File_iwrite_at_all", fh, request, through(kAt, offset, buf, count, datatype, true));
}

int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_read", fh, status, through(kOwn, 0, buf, count, datatype, false));
}
int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_read_all", fh, status, through(kOwn, 0, buf, count, datatype, false));
}
int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_write", fh, status, through(kOwn, 0, buf, count, datatype, true));
}
int MPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_write_all", fh, status, through(kOwn, 0, buf, count, datatype, true));
}
int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  return request_call("MPI_File_iread", fh, request, through(kOwn, 0, buf, count, datatype, false));
}
int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  return request_call("MPI_File_iwrite", fh, request, through(kOwn, 0, buf, count, datatype, true));
}
int MPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  return request_call("MPI_File_iread_all", fh, request, through(kOwn, 0, buf, count, datatype, false));
}
int MPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  return request_call("MPI_File_iwrite_all", fh, request, through(kOwn, 0, buf, count, datatype, true));
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  return file_call("MPI_File_seek", fh, [&](RankState& rs) {
    File& f = file_of(rs, fh);
    check_pointer_mode(f, kOwn);
    f.pointer = seek_target(f, f.pointer, offset, whence);
  });
}

int MPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  return file_call("MPI_File_get_position", fh, [&](RankState& rs) {
    check_out(offset, "offset");
    *offset = file_of(rs, fh).pointer;
  });
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  return file_call("MPI_File_get_byte_offset", fh, [&](RankState& rs) {
    check_out(disp, "disp");
    const File& f = file_of(rs, fh);
    if (offset < 0) throw MpiError{MPI_ERR_ARG, fmt::format("offset {} is negative", offset)};
    // The file offset of the view's data byte at that position, or the view's start for an empty view.
    *disp = f.view.disp;
    for_each_piece(f.view, static_cast<std::size_t>(offset) * f.view.etype->size, 1,
                   [&](MPI_Offset at, std::size_t, std::size_t) { *disp = at; });
  });
}

int MPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_read_shared", fh, status, through(kShared, 0, buf, count, datatype, false));
}
int MPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_write_shared", fh, status, through(kShared, 0, buf, count, datatype, true));
}
int MPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  return request_call("MPI_File_iread_shared", fh, request, through(kShared, 0, buf, count, datatype, false));
}
int MPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  return request_call("MPI_File_iwrite_shared", fh, request, through(kShared, 0, buf, count, datatype, true));
}
int MPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_read_ordered", fh, status, in_order(buf, count, datatype, false));
}
int MPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return data_call("MPI_File_write_ordered", fh, status, in_order(buf, count, datatype, true));
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  return file_call("MPI_File_seek_shared", fh, [&](RankState& rs) {
    File& f = file_of(rs, fh);
    Comm& pc = comm_of(rs, f.comm);
    check_same(rs, pc, offset, "offsets");
    check_same(rs, pc, whence, "whence arguments");
    // The pointer as the last member to enter found it (as MPI_File_write_ordered takes it).
    const MPI_Offset from = max_of(rs, pc, f.open->shared_pointer);
    sets_shared_pointer(f, seek_target(f, from, offset, whence));
  });
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  return file_call("MPI_File_get_position_shared", fh, [&](RankState& rs) {
    check_out(offset, "offset");
    *offset = file_of(rs, fh).open->shared_pointer;
  });
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype) {
  return begin_call("MPI_File_read_at_all_begin", fh, through(kAt, offset, buf, count, datatype, false));
}
int MPI_File_read_at_all_end(MPI_File fh, void*, MPI_Status* status) {
  return end_call("MPI_File_read_at_all_end", "MPI_File_read_at_all_begin", fh, status);
}
int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype datatype) {
  return begin_call("MPI_File_write_at_all_begin", fh, through(kAt, offset, buf, count, datatype, true));
}
int MPI_File_write_at_all_end(MPI_File fh, const void*, MPI_Status* status) {
  return end_call("MPI_File_write_at_all_end", "MPI_File_write_at_all_begin", fh, status);
}
int MPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return begin_call("MPI_File_read_all_begin", fh, through(kOwn, 0, buf, count, datatype, false));
}
int MPI_File_read_all_end(MPI_File fh, void*, MPI_Status* status) {
  return end_call("MPI_File_read_all_end", "MPI_File_read_all_begin", fh, status);
}
int MPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return begin_call("MPI_File_write_all_begin", fh, through(kOwn, 0, buf, count, datatype, true));
}
int MPI_File_write_all_end(MPI_File fh, const void*, MPI_Status* status) {
  return end_call("MPI_File_write_all_end", "MPI_File_write_all_begin", fh, status);
}
int MPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return begin_call("MPI_File_read_ordered_begin", fh, in_order(buf, count, datatype, false));
}
int MPI_File_read_ordered_end(MPI_File fh, void*, MPI_Status* status) {
  return end_call("MPI_File_read_ordered_end", "MPI_File_read_ordered_begin", fh, status);
}
int MPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return begin_call("MPI_File_write_ordered_begin", fh, in_order(buf, count, datatype, true));
}
int MPI_File_write_ordered_end(MPI_File fh, const void*, MPI_Status* status) {
  return end_call("MPI_File_write_ordered_end", "MPI_File_write_ordered_begin", fh, status);
}

// --- interoperability, consistency and errors (13.5, 13.6, 13.7) -------------------------------------

int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  return file_call("MPI_File_get_type_extent", fh, [&](RankState& rs) {
    check_out(extent, "extent");
    const File& f = file_of(rs, fh);
    const Type& t = type_of(rs, datatype);
    *extent = t.extent;  // "native" and "internal": the extent in memory
    if (f.view.datarep == "external32") {
      if (predefined_type(datatype))
        *extent = static_cast<MPI_Aint>(external_size(t, 1));
      else
        check_external(t, "datatype");
    }
  });
}

int MPI_Register_datarep(const char* datarep, MPI_Datarep_conversion_function*, MPI_Datarep_conversion_function*,
                         MPI_Datarep_extent_function*, void*) {
  return file_call("MPI_Register_datarep", MPI_FILE_NULL, [&](RankState&) {
    check_out(datarep, "datarep");
    const std::string rep = datarep;
    if (rep == "native" || rep == "internal" || rep == "external32")
      throw MpiError{MPI_ERR_DUP_DATAREP, fmt::format("data representation \"{}\" is predefined", rep)};
    throw MpiError{MPI_ERR_UNSUPPORTED_OPERATION,
                   fmt::format("data representation \"{}\": user-defined representations are not provided", rep)};
  });
}

int MPI_File_set_atomicity(MPI_File fh, int flag) {
  return file_call("MPI_File_set_atomicity", fh, [&](RankState& rs) {
    File& f = file_of(rs, fh);
    check_same(rs, comm_of(rs, f.comm), flag != 0, "atomicity flags");
    // Every access is made whole in its rank's turn, so the atomic mode holds either way.
    f.atomic = flag != 0;
  });
}

int MPI_File_get_atomicity(MPI_File fh, int* flag) {
  return file_call("MPI_File_get_atomicity", fh, [&](RankState& rs) {
    check_out(flag, "flag");
    *flag = file_of(rs, fh).atomic ? 1 : 0;
  });
}

int MPI_File_sync(MPI_File fh) {
  return file_call("MPI_File_sync", fh, [&](RankState& rs) {
    File& f = file_of(rs, fh);
    if (f.amode & MPI_MODE_RDONLY) return;
    if (::fdatasync(f.open->fd) != 0) throw system_error(errno, "cannot sync \"" + f.open->name + "\"");
  });
}

int MPI_File_create_errhandler(MPI_File_errhandler_function* file_errhandler_fn, MPI_Errhandler* errhandler) {
  return file_call("MPI_File_create_errhandler", MPI_FILE_NULL, [&](RankState& rs) {
    check_out(errhandler, "errhandler");
    check_out(reinterpret_cast<const void*>(file_errhandler_fn), "file_errhandler_fn");
    // A file's handler takes an MPI_File*, a communicator's an MPI_Comm*: both are int handles.
    *errhandler = add_errhandler(rs, reinterpret_cast<MPI_Comm_errhandler_function*>(file_errhandler_fn));
  });
}

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  return file_call("MPI_File_set_errhandler", file, [&](RankState& rs) {
    check_errhandler(rs, errhandler);
    (file == MPI_FILE_NULL ? rs.file_null_errhandler : file_of(rs, file).errhandler) = errhandler;
  });
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  return file_call("MPI_File_get_errhandler", file, [&](RankState& rs) {
    check_out(errhandler, "errhandler");
    *errhandler = file == MPI_FILE_NULL ? rs.file_null_errhandler : file_of(rs, file).errhandler;
  });
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode) {
  RankState& rs = state("MPI_File_call_errhandler");
  if (fh != MPI_FILE_NULL && !find_file(rs, fh))
    return raise_on_file(rs, fh, "MPI_File_call_errhandler", MpiError{MPI_ERR_FILE, handle_text(fh)});
  raise_on_file(rs, fh, "MPI_File_call_errhandler",
                MpiError{errorcode, fmt::format("the program raised error code {}", errorcode)});
  return MPI_SUCCESS;
}

// Every handle is an int here.
MPI_Fint MPI_File_c2f(MPI_File file) { return file; }
MPI_File MPI_File_f2c(MPI_Fint file) { return file; }
int MPI_File_toint(MPI_File file) { return file; }
MPI_File MPI_File_fromint(int file) { return file; }
