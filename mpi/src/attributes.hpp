// Attribute caching (MPI-3.1 section 6.7) for any kind of object: keyvals with their copy and
// delete callbacks, and the attributes set on each object, keyed by the object's kind and handle.
// Internal to libtouchstone_mpi.so.
#pragma once
#include <map>
#include <utility>
#include <vector>

#include "state.hpp"

namespace touchstone::mpi {

enum class AttrKind { comm, type, win };

/// Every handle is an int, so one callback signature serves every kind (mpi.h).
using AttrCopyFn = int(int old_handle, int keyval, void* extra_state, void* value_in, void* value_out, int* flag);
using AttrDeleteFn = int(int handle, int keyval, void* value, void* extra_state);

struct Keyval {
  AttrKind kind = AttrKind::comm;
  AttrCopyFn* copy = nullptr;  ///< nullptr: never copied (as MPI_*_NULL_COPY_FN)
  AttrDeleteFn* del = nullptr;
  void* extra_state = nullptr;
  bool freed = false;  ///< by MPI_*_free_keyval: no longer usable, but its attributes keep their callbacks
};

struct Attributes {
  std::vector<Keyval> keyvals;  ///< handle = kFirstKeyval + index
  /// Per object, its (keyval, value) pairs in the order they were set (deletion runs in reverse).
  std::map<std::pair<AttrKind, int>, std::vector<std::pair<int, void*>>> values;
  int universe_size = 0, appnum = 0, lastusedcode = MPI_ERR_LASTCODE;  ///< predefined communicator attributes
};

/// The first user keyval; below it, the predefined communicator attributes (MPI_TAG_UB ...).
inline constexpr int kFirstKeyval = 16;

/// The rank's attribute store, made on first use.
Attributes& attributes(RankState& rs);

/// Copies the attributes of `old_handle` to `new_handle` through their keyvals' copy callbacks, in
/// the order they were set (MPI_Comm_dup, MPI_Type_dup). A callback returning an error stops the
/// copy: the attributes already copied are deleted again and MpiError carries the callback's code.
void copy_attributes(RankState& rs, AttrKind kind, int old_handle, int new_handle);
void copy_attributes(AttrKind kind, int old_handle, int new_handle);  ///< for the calling rank
/// Deletes every attribute of `handle`, last set first, through the delete callbacks (MPI_Comm_free,
/// MPI_Type_free, MPI_Finalize). A callback returning an error stops there with MpiError; that
/// attribute and the ones set before it stay.
void delete_attributes(RankState& rs, AttrKind kind, int handle);

/// MPI_Finalize's first step: MPI_COMM_SELF's attributes, then MPI_COMM_WORLD's, each last set first.
void finalize_attributes(RankState& rs);

}  // namespace touchstone::mpi
