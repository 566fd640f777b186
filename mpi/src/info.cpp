// MPI_Info (MPI-3.1 section 9): ordered (key, value) string pairs behind an integer handle.
// MPI_INFO_ENV holds what `touchstone mpirun` started the program with.

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "call.hpp"
#include "comm.hpp"
#include "info.hpp"

namespace touchstone::mpi {

namespace {

InfoPairs env_info() { return {{"maxprocs", std::to_string(session()->np)}}; }

InfoPairs& mutable_info(RankState& rs, MPI_Info info) {
  const int i = info - kFirstInfo;
  if (i < 0 || i >= static_cast<int>(rs.infos.size()) || !rs.infos[static_cast<std::size_t>(i)])
    throw MpiError{MPI_ERR_INFO, info == MPI_INFO_ENV ? "MPI_INFO_ENV cannot be changed or freed"
                                                      : fmt::format("info {} is not valid", info)};
  return *rs.infos[static_cast<std::size_t>(i)];
}

// A key's checks (MPI_ERR_INFO_KEY): not null, not empty, at most MPI_MAX_INFO_KEY characters.
std::string key_of(const char* key) {
  if (!key) throw MpiError{MPI_ERR_INFO_KEY, "the key is a null pointer"};
  const std::size_t n = std::strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY)
    throw MpiError{MPI_ERR_INFO_KEY,
                   fmt::format("key of {} characters (1 .. MPI_MAX_INFO_KEY = {})", n, MPI_MAX_INFO_KEY)};
  return key;
}

const std::string* lookup(const InfoPairs& pairs, const std::string& key) {
  const auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == key; });
  return it == pairs.end() ? nullptr : &it->second;
}

// Copies a string into a user's buffer of `room` characters plus the terminating null.
void copy_out(const std::string& s, char* out, std::size_t room) {
  const std::size_t n = std::min(s.size(), room);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

}  // namespace

const InfoPairs& info_of(RankState& rs, MPI_Info info) {
  static const InfoPairs none;
  if (info == MPI_INFO_NULL) return none;
  if (info == MPI_INFO_ENV) {
    static thread_local InfoPairs env;
    env = env_info();
    return env;
  }
  return mutable_info(rs, info);
}

MPI_Info new_info(RankState& rs, InfoPairs pairs) {
  rs.infos.emplace_back(std::move(pairs));
  return static_cast<MPI_Info>(kFirstInfo + rs.infos.size() - 1);
}

void set_info_value(InfoPairs& pairs, const std::string& key, const std::string& value) {
  for (auto& [k, v] : pairs)
    if (k == key) return void(v = value);
  pairs.emplace_back(key, value);
}

void merge_info(InfoPairs& into, const InfoPairs& from) {
  for (const auto& [k, v] : from) set_info_value(into, k, v);
}

}  // namespace touchstone::mpi

using namespace touchstone;
using namespace touchstone::mpi;

namespace {

// The MPI_Info functions may be called before MPI_Init and after MPI_Finalize (MPI-4.0); their
// errors go to MPI_COMM_WORLD's handler. Inlined, so that the call site is the program's (call.hpp).
template <class Body>
[[gnu::always_inline]] inline int info_call(const char* name, Body&& body) {
  return call(name, MPI_COMM_WORLD, std::forward<Body>(body), false);
}

}  // namespace

int MPI_Info_create(MPI_Info* info) {
  return info_call("MPI_Info_create", [&](RankState& rs) {
    check_out(info, "info");
    *info = new_info(rs, {});
  });
}

int MPI_Info_set(MPI_Info info, const char* key, const char* value) {
  return info_call("MPI_Info_set", [&](RankState& rs) {
    InfoPairs& pairs = mutable_info(rs, info);
    const std::string k = key_of(key);
    if (!value) throw MpiError{MPI_ERR_INFO_VALUE, "the value is a null pointer"};
    const std::size_t n = std::strlen(value);
    if (n == 0 || n > MPI_MAX_INFO_VAL)
      throw MpiError{MPI_ERR_INFO_VALUE,
                     fmt::format("value of {} characters (1 .. MPI_MAX_INFO_VAL = {})", n, MPI_MAX_INFO_VAL)};
    set_info_value(pairs, k, value);
  });
}

int MPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  return info_call("MPI_Info_get", [&](RankState& rs) {
    check_out(value, "value");
    check_out(flag, "flag");
    if (info == MPI_INFO_NULL) throw MpiError{MPI_ERR_INFO, "MPI_INFO_NULL has no keys to get"};
    const std::string k = key_of(key);
    if (valuelen < 0) throw MpiError{MPI_ERR_ARG, fmt::format("valuelen {} is negative", valuelen)};
    const std::string* v = lookup(info_of(rs, info), k);
    *flag = v != nullptr;
    if (v) copy_out(*v, value, static_cast<std::size_t>(valuelen));  // truncated to valuelen characters
  });
}

// MPI-4.0: *buflen says the room in value (with the null) and returns the value's length + 1.
int MPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  return info_call("MPI_Info_get_string", [&](RankState& rs) {
    check_out(buflen, "buflen");
    check_out(flag, "flag");
    if (info == MPI_INFO_NULL) throw MpiError{MPI_ERR_INFO, "MPI_INFO_NULL has no keys to get"};
    const std::string k = key_of(key);
    if (*buflen < 0) throw MpiError{MPI_ERR_ARG, fmt::format("buflen {} is negative", *buflen)};
    const std::string* v = lookup(info_of(rs, info), k);
    *flag = v != nullptr;
    if (!v) return;
    if (*buflen > 0) copy_out(*v, value, static_cast<std::size_t>(*buflen - 1));
    *buflen = static_cast<int>(v->size()) + 1;
  });
}

// MPI-4.0: an info object like MPI_INFO_ENV.
int MPI_Info_create_env(int, char*[], MPI_Info* info) {
  return info_call("MPI_Info_create_env", [&](RankState& rs) {
    check_out(info, "info");
    *info = new_info(rs, env_info());
  });
}

int MPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  return info_call("MPI_Info_get_valuelen", [&](RankState& rs) {
    check_out(valuelen, "valuelen");
    check_out(flag, "flag");
    if (info == MPI_INFO_NULL) throw MpiError{MPI_ERR_INFO, "MPI_INFO_NULL has no keys"};
    const std::string* v = lookup(info_of(rs, info), key_of(key));
    *flag = v != nullptr;
    if (v) *valuelen = static_cast<int>(v->size());
  });
}

int MPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  return info_call("MPI_Info_get_nkeys", [&](RankState& rs) {
    check_out(nkeys, "nkeys");
    if (info == MPI_INFO_NULL) throw MpiError{MPI_ERR_INFO, "MPI_INFO_NULL is not an info object"};
    *nkeys = static_cast<int>(info_of(rs, info).size());
  });
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  return info_call("MPI_Info_get_nthkey", [&](RankState& rs) {
    check_out(key, "key");
    if (info == MPI_INFO_NULL) throw MpiError{MPI_ERR_INFO, "MPI_INFO_NULL is not an info object"};
    const InfoPairs& pairs = info_of(rs, info);
    if (n < 0 || n >= static_cast<int>(pairs.size()))
      throw MpiError{MPI_ERR_ARG,
                     fmt::format("key number {} is out of range: the info has {} key(s)", n, pairs.size())};
    copy_out(pairs[static_cast<std::size_t>(n)].first, key, MPI_MAX_INFO_KEY);
  });
}

int MPI_Info_delete(MPI_Info info, const char* key) {
  return info_call("MPI_Info_delete", [&](RankState& rs) {
    InfoPairs& pairs = mutable_info(rs, info);
    const std::string k = key_of(key);
    const auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == k; });
    if (it == pairs.end()) throw MpiError{MPI_ERR_INFO_NOKEY, fmt::format("the info has no key '{}'", k)};
    pairs.erase(it);
  });
}

int MPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  return info_call("MPI_Info_dup", [&](RankState& rs) {
    check_out(newinfo, "newinfo");
    if (info == MPI_INFO_NULL) throw MpiError{MPI_ERR_INFO, "MPI_INFO_NULL cannot be duplicated"};
    InfoPairs copy = info_of(rs, info);
    *newinfo = new_info(rs, std::move(copy));
  });
}

int MPI_Info_free(MPI_Info* info) {
  return info_call("MPI_Info_free", [&](RankState& rs) {
    check_out(info, "info");
    mutable_info(rs, *info);
    rs.infos[static_cast<std::size_t>(*info - kFirstInfo)].reset();
    *info = MPI_INFO_NULL;
  });
}
