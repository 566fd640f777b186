// Attribute caching (attributes.hpp; MPI-3.1 section 6.7): keyvals and attributes of communicators,
// datatypes and windows, with the MPI-1 names MPICH's tests still use.

#include <algorithm>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "attributes.hpp"
#include "call.hpp"
#include "comm.hpp"
#include "rma.hpp"

namespace touchstone::mpi {

Attributes& attributes(RankState& rs) {
  if (!rs.attributes) {
    rs.attributes = std::make_shared<Attributes>();
    rs.attributes->universe_size = session()->universe();
    rs.attributes->appnum = rs.appnum;
  }
  return *rs.attributes;
}

namespace {

const char* kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::comm: return "communicator";
    case AttrKind::type: return "datatype";
    case AttrKind::win: return "window";
  }
  return "object";
}

bool predefined_comm_key(int keyval) { return keyval >= MPI_TAG_UB && keyval <= MPI_APPNUM; }
bool predefined_win_key(int keyval) { return keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL; }

bool in_use(const Attributes& a, int keyval) {
  for (const auto& [object, list] : a.values)
    for (const auto& [k, v] : list)
      if (k == keyval) return true;
  return false;
}

// A usable keyval of kind `kind`: MPI_ERR_KEYVAL for a predefined, unknown or other-kind one, or
// for a freed one that no attribute uses any more (MPI-3.1 section 6.7.2: a keyval is freed only
// once every attribute using it is deleted; until then it names them).
Keyval& keyval_of(RankState& rs, AttrKind kind, int keyval) {
  Attributes& a = attributes(rs);
  if ((kind == AttrKind::comm && predefined_comm_key(keyval)) || (kind == AttrKind::win && predefined_win_key(keyval)))
    throw MpiError{MPI_ERR_KEYVAL, fmt::format("keyval {} is predefined: it cannot be set, deleted or freed", keyval)};
  const int i = keyval - kFirstKeyval;
  if (i < 0 || i >= static_cast<int>(a.keyvals.size()) ||
      (a.keyvals[static_cast<std::size_t>(i)].freed && !in_use(a, keyval)))
    throw MpiError{MPI_ERR_KEYVAL, fmt::format("keyval {} is not valid", keyval)};
  Keyval& k = a.keyvals[static_cast<std::size_t>(i)];
  if (k.kind != kind)
    throw MpiError{MPI_ERR_KEYVAL,
                   fmt::format("keyval {} was created for a {}, not a {}", keyval, kind_name(k.kind), kind_name(kind))};
  return k;
}

// The object must exist: its kind's handle check raises that kind's error class.
void check_object(RankState& rs, AttrKind kind, int handle) {
  switch (kind) {
    case AttrKind::comm: comm_of(rs, handle); return;
    case AttrKind::type: type_of(rs, handle); return;
    case AttrKind::win: window_of(rs, handle); return;
  }
}

// Stores the new keyval in *keyval (the argument `name`, checked first).
void create_keyval(RankState& rs, AttrKind kind, AttrCopyFn* copy, AttrDeleteFn* del, void* extra, int* keyval,
                   const char* name) {
  check_out(keyval, name);
  Attributes& a = attributes(rs);
  a.keyvals.push_back(Keyval{kind, copy, del, extra, false});
  *keyval = kFirstKeyval + static_cast<int>(a.keyvals.size()) - 1;
}

// The keyval stays for the attributes that use it (their delete callbacks still run); freeing it
// again while they do changes nothing. `name`: the argument keyval is.
void free_keyval(RankState& rs, AttrKind kind, int* keyval, const char* name) {
  check_out(keyval, name);
  keyval_of(rs, kind, *keyval).freed = true;
  *keyval = MPI_KEYVAL_INVALID;
}

const Keyval& any_keyval(RankState& rs, int keyval) {
  return attributes(rs).keyvals[static_cast<std::size_t>(keyval - kFirstKeyval)];
}

std::vector<std::pair<int, void*>>* values_of(RankState& rs, AttrKind kind, int handle) {
  auto& v = attributes(rs).values;
  const auto it = v.find({kind, handle});
  return it == v.end() ? nullptr : &it->second;
}

// Runs the delete callback of `keyval` on `value`; MpiError with the callback's code if it fails.
void run_delete(RankState& rs, int handle, int keyval, void* value) {
  const Keyval& k = any_keyval(rs, keyval);
  if (!k.del) return;
  const int rc = k.del(handle, keyval, value, k.extra_state);
  if (rc != MPI_SUCCESS)
    throw MpiError{rc, fmt::format("the delete callback of keyval {} returned error {}", keyval, rc)};
}

std::vector<std::pair<int, void*>>::iterator find_value(std::vector<std::pair<int, void*>>& list, int keyval) {
  return std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.first == keyval; });
}

void set_attr(RankState& rs, AttrKind kind, int handle, int keyval, void* value) {
  check_object(rs, kind, handle);
  keyval_of(rs, kind, keyval);
  if (auto* list = values_of(rs, kind, handle)) {
    if (auto it = find_value(*list, keyval); it != list->end()) {
      run_delete(rs, handle, keyval, it->second);  // the old value goes first; its failure keeps it
      list = values_of(rs, kind, handle);
      if (auto again = find_value(*list, keyval); again != list->end()) list->erase(again);
    }
  }
  attributes(rs).values[{kind, handle}].emplace_back(keyval, value);  // set last: deleted first
}

bool attr_value(RankState& rs, AttrKind kind, int handle, int keyval, void* out) {
  check_object(rs, kind, handle);
  Attributes& a = attributes(rs);
  if (kind == AttrKind::comm && predefined_comm_key(keyval)) {
    static int tag_ub = kTagUb, yes = 1, proc_null = MPI_PROC_NULL, any = MPI_ANY_SOURCE;
    int* v = nullptr;
    switch (keyval) {
      case MPI_TAG_UB: v = &tag_ub; break;
      case MPI_WTIME_IS_GLOBAL: v = &yes; break;  // every VP's clock is the one virtual time
      case MPI_HOST: v = &proc_null; break;
      case MPI_IO: v = &any; break;
      case MPI_UNIVERSE_SIZE: v = &a.universe_size; break;
      case MPI_LASTUSEDCODE: v = &a.lastusedcode; break;
      case MPI_APPNUM: v = &a.appnum; break;
      default: break;
    }
    *static_cast<int**>(out) = v;
    return true;
  }
  if (kind == AttrKind::win && predefined_win_key(keyval)) return window_attribute(rs, handle, keyval, out);
  keyval_of(rs, kind, keyval);
  auto* list = values_of(rs, kind, handle);
  if (!list) return false;
  const auto it = find_value(*list, keyval);
  if (it == list->end()) return false;
  *static_cast<void**>(out) = it->second;
  return true;
}

// MPI_*_get_attr: *flag says whether the attribute is set, *out then holds its value.
void get_attr(RankState& rs, AttrKind kind, int handle, int keyval, void* out, int* flag) {
  check_out(out, "attribute_val");
  check_out(flag, "flag");
  *flag = attr_value(rs, kind, handle, keyval, out);
}

void delete_attr(RankState& rs, AttrKind kind, int handle, int keyval) {
  check_object(rs, kind, handle);
  keyval_of(rs, kind, keyval);
  auto* list = values_of(rs, kind, handle);
  const auto it = list ? find_value(*list, keyval) : std::vector<std::pair<int, void*>>::iterator{};
  if (!list || it == list->end())
    throw MpiError{MPI_ERR_KEYVAL, fmt::format("the {} has no attribute for keyval {}", kind_name(kind), keyval)};
  run_delete(rs, handle, keyval, it->second);
  list = values_of(rs, kind, handle);  // the callback may have changed the attributes
  if (auto again = find_value(*list, keyval); again != list->end()) list->erase(again);
}

}  // namespace

void copy_attributes(RankState& rs, AttrKind kind, int old_handle, int new_handle) {
  const auto* list = values_of(rs, kind, old_handle);
  if (!list) return;
  const std::vector<std::pair<int, void*>> old = *list;  // a callback may set attributes itself
  for (const auto& [keyval, value] : old) {
    const Keyval& k = any_keyval(rs, keyval);
    if (!k.copy) continue;
    void* out = nullptr;
    int flag = 0;
    const int rc = k.copy(old_handle, keyval, k.extra_state, value, &out, &flag);
    if (rc != MPI_SUCCESS) {
      try {
        delete_attributes(rs, kind, new_handle);
      } catch (const MpiError&) {  // the copy callback's error is the one reported
      }
      throw MpiError{rc, fmt::format("the copy callback of keyval {} returned error {}", keyval, rc)};
    }
    if (flag) attributes(rs).values[{kind, new_handle}].emplace_back(keyval, out);
  }
}

void copy_attributes(AttrKind kind, int old_handle, int new_handle) {
  copy_attributes(state("copy_attributes"), kind, old_handle, new_handle);
}

void delete_attributes(RankState& rs, AttrKind kind, int handle) {
  while (auto* list = values_of(rs, kind, handle)) {
    if (list->empty()) {
      attributes(rs).values.erase({kind, handle});
      return;
    }
    const auto [keyval, value] = list->back();
    run_delete(rs, handle, keyval, value);
    list = values_of(rs, kind, handle);  // the callback may have changed the attributes
    if (!list) return;
    if (auto it = find_value(*list, keyval); it != list->end()) list->erase(it);
  }
}

void finalize_attributes(RankState& rs) {
  delete_attributes(rs, AttrKind::comm, MPI_COMM_SELF);
  delete_attributes(rs, AttrKind::comm, MPI_COMM_WORLD);
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

int touchstone_attr_null_copy_fn(int, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int touchstone_attr_dup_fn(int, int, void*, void* attribute_val_in, void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
}

int touchstone_attr_null_delete_fn(int, int, void*, void*) { return MPI_SUCCESS; }

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval, void* extra_state) {
  return call("MPI_Comm_create_keyval", MPI_COMM_WORLD, [&](RankState& rs) {
    create_keyval(rs, AttrKind::comm, comm_copy_attr_fn, comm_delete_attr_fn, extra_state, comm_keyval, "comm_keyval");
  });
}

int MPI_Comm_free_keyval(int* comm_keyval) {
  return call("MPI_Comm_free_keyval", MPI_COMM_WORLD, [&](RankState& rs) {
    free_keyval(rs, AttrKind::comm, comm_keyval, "comm_keyval");
  });
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  return call("MPI_Comm_set_attr", comm,
              [&](RankState& rs) { set_attr(rs, AttrKind::comm, comm, comm_keyval, attribute_val); });
}

int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return call("MPI_Comm_get_attr", comm, [&](RankState& rs) {
    get_attr(rs, AttrKind::comm, comm, comm_keyval, attribute_val, flag);
  });
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  return call("MPI_Comm_delete_attr", comm, [&](RankState& rs) { delete_attr(rs, AttrKind::comm, comm, comm_keyval); });
}

int MPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                           MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval, void* extra_state) {
  return call("MPI_Type_create_keyval", MPI_COMM_WORLD, [&](RankState& rs) {
    create_keyval(rs, AttrKind::type, type_copy_attr_fn, type_delete_attr_fn, extra_state, type_keyval, "type_keyval");
  });
}

int MPI_Type_free_keyval(int* type_keyval) {
  return call("MPI_Type_free_keyval", MPI_COMM_WORLD, [&](RankState& rs) {
    free_keyval(rs, AttrKind::type, type_keyval, "type_keyval");
  });
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  return call("MPI_Type_set_attr", MPI_COMM_WORLD,
              [&](RankState& rs) { set_attr(rs, AttrKind::type, datatype, type_keyval, attribute_val); });
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  return call("MPI_Type_get_attr", MPI_COMM_WORLD, [&](RankState& rs) {
    get_attr(rs, AttrKind::type, datatype, type_keyval, attribute_val, flag);
  });
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  return call("MPI_Type_delete_attr", MPI_COMM_WORLD,
              [&](RankState& rs) { delete_attr(rs, AttrKind::type, datatype, type_keyval); });
}

int MPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                          MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval, void* extra_state) {
  return call("MPI_Win_create_keyval", MPI_COMM_WORLD, [&](RankState& rs) {
    create_keyval(rs, AttrKind::win, win_copy_attr_fn, win_delete_attr_fn, extra_state, win_keyval, "win_keyval");
  });
}

int MPI_Win_free_keyval(int* win_keyval) {
  return call("MPI_Win_free_keyval", MPI_COMM_WORLD, [&](RankState& rs) {
    free_keyval(rs, AttrKind::win, win_keyval, "win_keyval");
  });
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  return win_call("MPI_Win_set_attr", win,
                  [&](RankState& rs) { set_attr(rs, AttrKind::win, win, win_keyval, attribute_val); });
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  return win_call("MPI_Win_get_attr", win, [&](RankState& rs) {
    get_attr(rs, AttrKind::win, win, win_keyval, attribute_val, flag);
  });
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  return win_call("MPI_Win_delete_attr", win, [&](RankState& rs) { delete_attr(rs, AttrKind::win, win, win_keyval); });
}

// The MPI-1 names (deprecated since MPI-2): communicator attributes under other names.
int MPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra_state) {
  return call("MPI_Keyval_create", MPI_COMM_WORLD, [&](RankState& rs) {
    create_keyval(rs, AttrKind::comm, copy_fn, delete_fn, extra_state, keyval, "keyval");
  });
}

int MPI_Keyval_free(int* keyval) {
  return call("MPI_Keyval_free", MPI_COMM_WORLD, [&](RankState& rs) {
    free_keyval(rs, AttrKind::comm, keyval, "keyval");
  });
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return call("MPI_Attr_put", comm, [&](RankState& rs) { set_attr(rs, AttrKind::comm, comm, keyval, attribute_val); });
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return call("MPI_Attr_get", comm, [&](RankState& rs) {
    get_attr(rs, AttrKind::comm, comm, keyval, attribute_val, flag);
  });
}

int MPI_Attr_delete(MPI_Comm comm, int keyval) {
  return call("MPI_Attr_delete", comm, [&](RankState& rs) { delete_attr(rs, AttrKind::comm, comm, keyval); });
}
