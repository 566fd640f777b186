// The tool information interface (MPI-3.1 14.3; docs/mpi.md, "The tool information interface").
// Its control variables describe the emulated machine as the calling rank sees it and never
// change (MPI_T_SCOPE_CONSTANT); its performance variables count the rank's messages and bytes
// (Proc::traffic) and its virtual time in MPI calls (RankState::mpi_time), each handle from its
// own start: a handle's value is what accumulated while it was started, since its last reset or
// write. One category holds them all; there are no enumerations. MPI_T functions return their
// errors (MPI_T_ERR_*) and never call an error handler; they work before MPI_Init and after
// MPI_Finalize, between MPI_T_init_thread and the matching MPI_T_finalize.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace touchstone::mpi {

struct PvarHandle {
  int index = 0;
  bool started = false;
  double kept = 0;   // accumulated while started, up to `since`
  double since = 0;  // the variable's value when the handle last started, was reset or written
};

struct PvarSession {
  std::vector<std::optional<PvarHandle>> handles;  // handle = index + 1
};

struct ToolState {
  int inits = 0;
  std::vector<std::optional<int>> cvar_handles;      // the variable's index; handle = index + 1
  std::vector<std::optional<PvarSession>> sessions;  // session = index + 1
};

}  // namespace touchstone::mpi

namespace {

struct ToolError {
  int code;
};

struct Cvar {
  const char* name;
  const char* desc;
  MPI_Datatype type;                             // MPI_CHAR, MPI_INT or MPI_DOUBLE
  std::function<std::string(const Proc&)> text;  // MPI_CHAR
  std::function<double(const Proc&)> number;     // the others
};

double us(Time t) { return to_us(t); }

const std::vector<Cvar>& cvars() {
  static const std::vector<Cvar> list = {
      {"touchstone_machine",
       "the emulated machine, as touchstone names it",
       MPI_CHAR,
       [](const Proc& p) { return p.machine().name; },
       {}},
      {"touchstone_send_overhead_us",
       "C_send: the sender's CPU time per message on this rank's node (us)",
       MPI_DOUBLE,
       {},
       [](const Proc& p) { return us(p.machine().costs_of(p.rank()).send_overhead); }},
      {"touchstone_recv_overhead_us",
       "C_recv: the receiver's CPU time per message on this rank's node (us)",
       MPI_DOUBLE,
       {},
       [](const Proc& p) { return us(p.machine().costs_of(p.rank()).recv_overhead); }},
      {"touchstone_hop_time_us",
       "t_hop: a header's time per channel of the network (us)",
       MPI_DOUBLE,
       {},
       [](const Proc& p) { return us(p.machine().net.hop_time); }},
      {"touchstone_packet_payload",
       "data bytes per packet of the network",
       MPI_INT,
       {},
       [](const Proc& p) { return static_cast<double>(p.machine().net.packet_payload); }},
  };
  return list;
}

struct Pvar {
  const char* name;
  const char* desc;
  int var_class;
  MPI_Datatype type;  // MPI_UNSIGNED_LONG_LONG or MPI_DOUBLE
  std::function<double(const RankState&)> value;
};

const std::vector<Pvar>& pvars() {
  static const std::vector<Pvar> list = {
      {"touchstone_messages_sent", "messages this rank's sends posted (collectives' included; not one-sided)",
       MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
       [](const RankState& rs) { return static_cast<double>(rs.proc->traffic().messages_sent); }},
      {"touchstone_bytes_sent", "payload bytes of the messages this rank sent", MPI_T_PVAR_CLASS_COUNTER,
       MPI_UNSIGNED_LONG_LONG, [](const RankState& rs) { return static_cast<double>(rs.proc->traffic().bytes_sent); }},
      {"touchstone_messages_received", "messages this rank's receives completed (collectives' included)",
       MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
       [](const RankState& rs) { return static_cast<double>(rs.proc->traffic().messages_received); }},
      {"touchstone_bytes_received", "payload bytes of the messages this rank received", MPI_T_PVAR_CLASS_COUNTER,
       MPI_UNSIGNED_LONG_LONG,
       [](const RankState& rs) { return static_cast<double>(rs.proc->traffic().bytes_received); }},
      {"touchstone_mpi_time", "virtual seconds this rank spent in MPI calls", MPI_T_PVAR_CLASS_TIMER, MPI_DOUBLE,
       [](const RankState& rs) { return to_us(rs.mpi_time) / 1e6; }},
  };
  return list;
}

constexpr const char* kCategory = "touchstone";
constexpr const char* kCategoryDesc = "the emulated machine and what this rank did on it";

// Runs body as MPI_T function `name`: MPI_T_ERR_NOT_INITIALIZED outside MPI_T_init_thread and
// MPI_T_finalize, else MPI_SUCCESS or the ToolError body threw.
template <class Body>
int tool_call(const char* name, Body&& body) {
  RankState& rs = state(name, false);
  if (!rs.tool || rs.tool->inits == 0) return MPI_T_ERR_NOT_INITIALIZED;
  try {
    body(rs, *rs.tool);
    return MPI_SUCCESS;
  } catch (const ToolError& e) {
    return e.code;
  }
}

// MPI-3.1 14.3.3: no string is returned when `len` is null; with a null `out` or *len of 0 only the
// length it needs (with its terminating null); else at most *len - 1 characters and a null, and
// *len says how many were stored, with the null.
void put_string(const std::string& s, char* out, int* len) {
  if (!len) return;
  if (!out || *len == 0) {
    *len = static_cast<int>(s.size()) + 1;
    return;
  }
  const std::size_t n = std::min(s.size(), static_cast<std::size_t>(std::max(*len, 1) - 1));
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
  *len = static_cast<int>(n) + 1;
}

template <class T>
void put(T* out, T value) {
  if (out) *out = value;
}

int check_index(int i, std::size_t n) {
  if (i < 0 || static_cast<std::size_t>(i) >= n) throw ToolError{MPI_T_ERR_INVALID_INDEX};
  return i;
}

void check_pointer(const void* p) {
  if (!p) throw ToolError{MPI_T_ERR_INVALID};
}

// The index of the control variable behind handle h.
int cvar_of(const ToolState& t, MPI_T_cvar_handle h) {
  const auto i = static_cast<std::size_t>(h) - 1;
  if (h <= 0 || i >= t.cvar_handles.size() || !t.cvar_handles[i]) throw ToolError{MPI_T_ERR_INVALID_HANDLE};
  return *t.cvar_handles[i];
}

PvarSession& session_of(ToolState& t, MPI_T_pvar_session s) {
  const auto i = static_cast<std::size_t>(s) - 1;
  if (s <= 0 || i >= t.sessions.size() || !t.sessions[i]) throw ToolError{MPI_T_ERR_INVALID_SESSION};
  return *t.sessions[i];
}

PvarHandle& handle_of(PvarSession& s, MPI_T_pvar_handle h) {
  const auto i = static_cast<std::size_t>(h) - 1;
  if (h <= 0 || i >= s.handles.size() || !s.handles[i]) throw ToolError{MPI_T_ERR_INVALID_HANDLE};
  return *s.handles[i];
}

double current(const RankState& rs, const PvarHandle& h) {
  return pvars()[static_cast<std::size_t>(h.index)].value(rs);
}
double handle_value(const RankState& rs, const PvarHandle& h) {
  return h.kept + (h.started ? current(rs, h) - h.since : 0);
}

void write_value(const PvarHandle& h, double v, void* buf) {
  if (pvars()[static_cast<std::size_t>(h.index)].type == MPI_DOUBLE) {
    std::memcpy(buf, &v, sizeof v);
  } else {
    const auto n = static_cast<unsigned long long>(v);
    std::memcpy(buf, &n, sizeof n);
  }
}

// Applies f to handle h of session s, or to every handle of s for MPI_T_PVAR_ALL_HANDLES.
template <class F>
void each_handle(PvarSession& s, MPI_T_pvar_handle h, F&& f) {
  if (h != MPI_T_PVAR_ALL_HANDLES) return f(handle_of(s, h));
  for (auto& x : s.handles)
    if (x) f(*x);
}

}  // namespace

int MPI_T_init_thread(int, int* provided) {
  RankState& rs = state("MPI_T_init_thread", false);
  if (!provided) return MPI_T_ERR_INVALID;
  if (!rs.tool) rs.tool = std::make_shared<ToolState>();
  ++rs.tool->inits;
  *provided = MPI_THREAD_SINGLE;  // every rank's program runs on one thread (MPI_Query_thread)
  return MPI_SUCCESS;
}

int MPI_T_finalize(void) {
  return tool_call("MPI_T_finalize", [](RankState& rs, ToolState& t) {
    if (--t.inits == 0) rs.tool.reset();  // its handles and sessions go with the last
  });
}

int MPI_T_enum_get_info(MPI_T_enum, int*, char*, int*) {
  return tool_call("MPI_T_enum_get_info", [](RankState&, ToolState&) { throw ToolError{MPI_T_ERR_INVALID_HANDLE}; });
}

int MPI_T_enum_get_item(MPI_T_enum, int, int*, char*, int*) {
  return tool_call("MPI_T_enum_get_item", [](RankState&, ToolState&) { throw ToolError{MPI_T_ERR_INVALID_HANDLE}; });
}

int MPI_T_cvar_get_num(int* num_cvar) {
  return tool_call("MPI_T_cvar_get_num", [&](RankState&, ToolState&) {
    check_pointer(num_cvar);
    *num_cvar = static_cast<int>(cvars().size());
  });
}

int MPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity, MPI_Datatype* datatype,
                        MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind, int* scope) {
  return tool_call("MPI_T_cvar_get_info", [&](RankState&, ToolState&) {
    const Cvar& v = cvars()[static_cast<std::size_t>(check_index(cvar_index, cvars().size()))];
    put_string(v.name, name, name_len);
    put_string(v.desc, desc, desc_len);
    put(verbosity, MPI_T_VERBOSITY_USER_BASIC);
    put(datatype, v.type);
    put(enumtype, MPI_T_ENUM_NULL);
    put(bind, MPI_T_BIND_NO_OBJECT);
    put(scope, MPI_T_SCOPE_CONSTANT);
  });
}

int MPI_T_cvar_get_index(const char* name, int* cvar_index) {
  return tool_call("MPI_T_cvar_get_index", [&](RankState&, ToolState&) {
    check_pointer(name);
    check_pointer(cvar_index);
    const auto& list = cvars();
    const auto it =
        std::find_if(list.begin(), list.end(), [&](const Cvar& v) { return std::strcmp(v.name, name) == 0; });
    if (it == list.end()) throw ToolError{MPI_T_ERR_INVALID_NAME};
    *cvar_index = static_cast<int>(it - list.begin());
  });
}

int MPI_T_cvar_handle_alloc(int cvar_index, void*, MPI_T_cvar_handle* handle, int* count) {
  return tool_call("MPI_T_cvar_handle_alloc", [&](RankState& rs, ToolState& t) {
    const Cvar& v = cvars()[static_cast<std::size_t>(check_index(cvar_index, cvars().size()))];
    check_pointer(handle);
    check_pointer(count);
    *count = v.type == MPI_CHAR ? static_cast<int>(v.text(*rs.proc).size()) + 1 : 1;
    t.cvar_handles.emplace_back(cvar_index);
    *handle = static_cast<MPI_T_cvar_handle>(t.cvar_handles.size());
  });
}

int MPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  return tool_call("MPI_T_cvar_handle_free", [&](RankState&, ToolState& t) {
    check_pointer(handle);
    cvar_of(t, *handle);
    t.cvar_handles[static_cast<std::size_t>(*handle) - 1].reset();
    *handle = MPI_T_CVAR_HANDLE_NULL;
  });
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  return tool_call("MPI_T_cvar_read", [&](RankState& rs, ToolState& t) {
    const Cvar& v = cvars()[static_cast<std::size_t>(cvar_of(t, handle))];
    check_pointer(buf);
    if (v.type == MPI_CHAR) {
      const std::string s = v.text(*rs.proc);
      std::memcpy(buf, s.c_str(), s.size() + 1);
    } else if (v.type == MPI_INT) {
      const int n = static_cast<int>(v.number(*rs.proc));
      std::memcpy(buf, &n, sizeof n);
    } else {
      const double x = v.number(*rs.proc);
      std::memcpy(buf, &x, sizeof x);
    }
  });
}

// The machine is fixed for the whole run: its variables are constants.
int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void*) {
  return tool_call("MPI_T_cvar_write", [&](RankState&, ToolState& t) {
    cvar_of(t, handle);
    throw ToolError{MPI_T_ERR_CVAR_SET_NEVER};
  });
}

int MPI_T_pvar_get_num(int* num_pvar) {
  return tool_call("MPI_T_pvar_get_num", [&](RankState&, ToolState&) {
    check_pointer(num_pvar);
    *num_pvar = static_cast<int>(pvars().size());
  });
}

int MPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind,
                        int* readonly, int* continuous, int* atomic) {
  return tool_call("MPI_T_pvar_get_info", [&](RankState&, ToolState&) {
    const Pvar& v = pvars()[static_cast<std::size_t>(check_index(pvar_index, pvars().size()))];
    put_string(v.name, name, name_len);
    put_string(v.desc, desc, desc_len);
    put(verbosity, MPI_T_VERBOSITY_USER_BASIC);
    put(var_class, v.var_class);
    put(datatype, v.type);
    put(enumtype, MPI_T_ENUM_NULL);
    put(bind, MPI_T_BIND_NO_OBJECT);
    put(readonly, 0);    // a handle may be reset or written: it changes that handle's view only
    put(continuous, 0);  // a handle counts only while started
    put(atomic, 0);
  });
}

int MPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  return tool_call("MPI_T_pvar_get_index", [&](RankState&, ToolState&) {
    check_pointer(name);
    check_pointer(pvar_index);
    const auto& list = pvars();
    const auto it = std::find_if(list.begin(), list.end(), [&](const Pvar& v) {
      return v.var_class == var_class && std::strcmp(v.name, name) == 0;
    });
    if (it == list.end()) throw ToolError{MPI_T_ERR_INVALID_NAME};
    *pvar_index = static_cast<int>(it - list.begin());
  });
}

int MPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  return tool_call("MPI_T_pvar_session_create", [&](RankState&, ToolState& t) {
    check_pointer(session);
    t.sessions.emplace_back(PvarSession{});
    *session = static_cast<MPI_T_pvar_session>(t.sessions.size());
  });
}

int MPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  return tool_call("MPI_T_pvar_session_free", [&](RankState&, ToolState& t) {
    check_pointer(session);
    session_of(t, *session);
    t.sessions[static_cast<std::size_t>(*session) - 1].reset();
    *session = MPI_T_PVAR_SESSION_NULL;
  });
}

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void*, MPI_T_pvar_handle* handle, int* count) {
  return tool_call("MPI_T_pvar_handle_alloc", [&](RankState&, ToolState& t) {
    PvarSession& s = session_of(t, session);
    check_index(pvar_index, pvars().size());
    check_pointer(handle);
    check_pointer(count);
    s.handles.emplace_back(PvarHandle{pvar_index});
    *handle = static_cast<MPI_T_pvar_handle>(s.handles.size());
    *count = 1;
  });
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  return tool_call("MPI_T_pvar_handle_free", [&](RankState&, ToolState& t) {
    PvarSession& s = session_of(t, session);
    check_pointer(handle);
    handle_of(s, *handle);
    s.handles[static_cast<std::size_t>(*handle) - 1].reset();
    *handle = MPI_T_PVAR_HANDLE_NULL;
  });
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return tool_call("MPI_T_pvar_start", [&](RankState& rs, ToolState& t) {
    each_handle(session_of(t, session), handle, [&](PvarHandle& h) {
      if (h.started) return;
      h.since = current(rs, h);
      h.started = true;
    });
  });
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return tool_call("MPI_T_pvar_stop", [&](RankState& rs, ToolState& t) {
    each_handle(session_of(t, session), handle, [&](PvarHandle& h) {
      if (!h.started) return;
      h.kept = handle_value(rs, h);
      h.started = false;
    });
  });
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  return tool_call("MPI_T_pvar_read", [&](RankState& rs, ToolState& t) {
    PvarSession& s = session_of(t, session);
    if (handle == MPI_T_PVAR_ALL_HANDLES) throw ToolError{MPI_T_ERR_INVALID_HANDLE};
    const PvarHandle& h = handle_of(s, handle);
    check_pointer(buf);
    write_value(h, handle_value(rs, h), buf);
  });
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
  return tool_call("MPI_T_pvar_write", [&](RankState& rs, ToolState& t) {
    PvarSession& s = session_of(t, session);
    if (handle == MPI_T_PVAR_ALL_HANDLES) throw ToolError{MPI_T_ERR_INVALID_HANDLE};
    PvarHandle& h = handle_of(s, handle);
    check_pointer(buf);
    double v = 0;
    if (pvars()[static_cast<std::size_t>(h.index)].type == MPI_DOUBLE) {
      std::memcpy(&v, buf, sizeof v);
    } else {
      unsigned long long n = 0;
      std::memcpy(&n, buf, sizeof n);
      v = static_cast<double>(n);
    }
    h.kept = v;
    if (h.started) h.since = current(rs, h);
  });
}

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return tool_call("MPI_T_pvar_reset", [&](RankState& rs, ToolState& t) {
    each_handle(session_of(t, session), handle, [&](PvarHandle& h) {
      h.kept = 0;
      if (h.started) h.since = current(rs, h);
    });
  });
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  return tool_call("MPI_T_pvar_readreset", [&](RankState& rs, ToolState& t) {
    PvarSession& s = session_of(t, session);
    if (handle == MPI_T_PVAR_ALL_HANDLES) throw ToolError{MPI_T_ERR_INVALID_HANDLE};
    PvarHandle& h = handle_of(s, handle);
    check_pointer(buf);
    write_value(h, handle_value(rs, h), buf);
    h.kept = 0;
    if (h.started) h.since = current(rs, h);
  });
}

int MPI_T_category_get_num(int* num_cat) {
  return tool_call("MPI_T_category_get_num", [&](RankState&, ToolState&) {
    check_pointer(num_cat);
    *num_cat = 1;
  });
}

int MPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len, int* num_cvars,
                            int* num_pvars, int* num_categories) {
  return tool_call("MPI_T_category_get_info", [&](RankState&, ToolState&) {
    check_index(cat_index, 1);
    put_string(kCategory, name, name_len);
    put_string(kCategoryDesc, desc, desc_len);
    put(num_cvars, static_cast<int>(cvars().size()));
    put(num_pvars, static_cast<int>(pvars().size()));
    put(num_categories, 0);
  });
}

int MPI_T_category_get_index(const char* name, int* cat_index) {
  return tool_call("MPI_T_category_get_index", [&](RankState&, ToolState&) {
    check_pointer(name);
    check_pointer(cat_index);
    if (std::strcmp(name, kCategory) != 0) throw ToolError{MPI_T_ERR_INVALID_NAME};
    *cat_index = 0;
  });
}

namespace {
// The first len indices of a category's n members, which are 0 .. n - 1.
void put_indices(int cat_index, int len, int indices[], std::size_t n) {
  check_index(cat_index, 1);
  if (len < 0) throw ToolError{MPI_T_ERR_INVALID};
  if (len > 0) check_pointer(indices);
  for (int i = 0; i < len && static_cast<std::size_t>(i) < n; ++i) indices[i] = i;
}
}  // namespace

int MPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return tool_call("MPI_T_category_get_cvars",
                   [&](RankState&, ToolState&) { put_indices(cat_index, len, indices, cvars().size()); });
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return tool_call("MPI_T_category_get_pvars",
                   [&](RankState&, ToolState&) { put_indices(cat_index, len, indices, pvars().size()); });
}

int MPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  return tool_call("MPI_T_category_get_categories",
                   [&](RankState&, ToolState&) { put_indices(cat_index, len, indices, 0); });
}

// The variables and categories never change during a run.
int MPI_T_category_changed(int* stamp) {
  return tool_call("MPI_T_category_changed", [&](RankState&, ToolState&) {
    check_pointer(stamp);
    *stamp = 0;
  });
}
