// MPI's error classes, codes and strings, predefined and added by the program (MPI-3.1 8.4-8.5),
// and MPI_Comm_call_errhandler.
#include <algorithm>
#include <cstring>
#include <string>

#include <fmt/format.h>

#pragma GCC visibility push(default)
#include "mpi.h"
#pragma GCC visibility pop

#include "attributes.hpp"
#include "call.hpp"

using namespace touchstone;
using namespace touchstone::mpi;

namespace {
// The class of `code`: a predefined class is its own; an added code or class has the one it was
// added with. MPI_ERR_ARG for anything else.
int class_of(RankState& rs, int code) {
  if (code >= MPI_SUCCESS && code <= MPI_ERR_LASTCODE) return code;
  const auto it = rs.added_error_class.find(code);
  if (it == rs.added_error_class.end())
    throw MpiError{MPI_ERR_ARG, fmt::format("{} is not an error code or class (predefined, or added with "
                                            "MPI_Add_error_class/MPI_Add_error_code)", code)};
  return it->second;
}

// A new value above every code and class so far; MPI_LASTUSEDCODE follows it.
int next_code(RankState& rs) {
  int& last = attributes(rs).lastusedcode;
  return ++last;
}

void copy_out(const std::string& s, char* out, int max, int* len) {
  const std::size_t n = std::min<std::size_t>(s.size(), static_cast<std::size_t>(max - 1));
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
  *len = static_cast<int>(n);
}
}  // namespace

int MPI_Add_error_class(int* errorclass) {
  return call("MPI_Add_error_class", MPI_COMM_WORLD, [&](RankState& rs) {
    if (!errorclass) throw MpiError{MPI_ERR_ARG, "errorclass is a null pointer"};
    const int c = next_code(rs);
    rs.added_error_class[c] = c;
    *errorclass = c;
  });
}

int MPI_Add_error_code(int errorclass, int* errorcode) {
  return call("MPI_Add_error_code", MPI_COMM_WORLD, [&](RankState& rs) {
    if (!errorcode) throw MpiError{MPI_ERR_ARG, "errorcode is a null pointer"};
    // The class must be one: predefined, or added with MPI_Add_error_class (not an added code).
    const int c = class_of(rs, errorclass);
    if (c != errorclass) throw MpiError{MPI_ERR_ARG, fmt::format("{} is an error code, not a class", errorclass)};
    const int code = next_code(rs);
    rs.added_error_class[code] = c;
    *errorcode = code;
  });
}

int MPI_Add_error_string(int errorcode, const char* string) {
  return call("MPI_Add_error_string", MPI_COMM_WORLD, [&](RankState& rs) {
    if (!string) throw MpiError{MPI_ERR_ARG, "string is a null pointer"};
    if (errorcode <= MPI_ERR_LASTCODE || !rs.added_error_class.count(errorcode))
      throw MpiError{MPI_ERR_ARG, fmt::format("{} is not an error code or class the program added: the strings of "
                                              "predefined ones cannot be changed", errorcode)};
    if (std::strlen(string) >= MPI_MAX_ERROR_STRING)
      throw MpiError{MPI_ERR_ARG, fmt::format("the string is longer than MPI_MAX_ERROR_STRING - 1 = {} characters",
                                              MPI_MAX_ERROR_STRING - 1)};
    rs.error_strings[errorcode] = string;
  });
}

// MPI-4.1 9.5: what MPI_Add_error_class, _code and _string added may be taken back; a class only
// once no added code belongs to it. The values are not given out again (MPI_LASTUSEDCODE stays).
namespace {
void check_added(const RankState& rs, int code, bool is_class) {
  const auto it = rs.added_error_class.find(code);
  if (code <= MPI_ERR_LASTCODE || it == rs.added_error_class.end())
    throw MpiError{MPI_ERR_ARG,
                   fmt::format("{} is not an error {} the program added", code, is_class ? "class" : "code")};
  if ((it->second == code) != is_class)
    throw MpiError{MPI_ERR_ARG, fmt::format("{} is an error {}, not {}", code, is_class ? "code" : "class",
                                            is_class ? "a class" : "a code")};
}
}  // namespace

int MPI_Remove_error_class(int errorclass) {
  return call("MPI_Remove_error_class", MPI_COMM_WORLD, [&](RankState& rs) {
    check_added(rs, errorclass, true);
    for (const auto& [code, cls] : rs.added_error_class)
      if (cls == errorclass && code != errorclass)
        throw MpiError{MPI_ERR_ARG, fmt::format("error class {} still has error code {} (MPI_Remove_error_code first)",
                                                errorclass, code)};
    rs.added_error_class.erase(errorclass);
    rs.error_strings.erase(errorclass);
  });
}

int MPI_Remove_error_code(int errorcode) {
  return call("MPI_Remove_error_code", MPI_COMM_WORLD, [&](RankState& rs) {
    check_added(rs, errorcode, false);
    rs.added_error_class.erase(errorcode);
    rs.error_strings.erase(errorcode);
  });
}

int MPI_Remove_error_string(int errorcode) {
  return call("MPI_Remove_error_string", MPI_COMM_WORLD, [&](RankState& rs) {
    if (errorcode <= MPI_ERR_LASTCODE || !rs.added_error_class.count(errorcode))
      throw MpiError{MPI_ERR_ARG, fmt::format("{} is not an error code or class the program added", errorcode)};
    if (!rs.error_strings.erase(errorcode))
      throw MpiError{MPI_ERR_ARG,
                     fmt::format("error code {} has no string to remove (MPI_Add_error_string)", errorcode)};
  });
}

// Callable before MPI_Init and after MPI_Finalize (MPI-4.0 11.4.1).
int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  RankState& rs = state("MPI_Error_string", false);
  if (!string || !resultlen) return MPI_ERR_ARG;  // nothing to write the text into
  std::string s;
  if (const auto it = rs.error_strings.find(errorcode); it != rs.error_strings.end()) s = it->second;
  else if (errorcode > MPI_ERR_LASTCODE && rs.added_error_class.count(errorcode)) s = "";  // added, no string yet
  else s = fmt::format("MPI error {}: {}", errorcode, error_text(errorcode));
  copy_out(s, string, MPI_MAX_ERROR_STRING, resultlen);
  return MPI_SUCCESS;
}

int MPI_Error_class(int errorcode, int* errorclass) {
  RankState& rs = state("MPI_Error_class", false);
  if (!errorclass)
    return call("MPI_Error_class", MPI_COMM_WORLD, [&](RankState&) { check_out(errorclass, "errorclass"); }, false);
  if (errorcode >= MPI_SUCCESS && errorcode <= MPI_ERR_LASTCODE) {
    *errorclass = errorcode;
    return MPI_SUCCESS;
  }
  return call("MPI_Error_class", MPI_COMM_WORLD, [&](RankState&) { *errorclass = class_of(rs, errorcode); });
}

// Calls the communicator's error handler with `errorcode` as if an MPI call on it had failed:
// MPI_ERRORS_ARE_FATAL ends the run, a user handler is called; MPI_SUCCESS once it returns.
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  RankState& rs = state("MPI_Comm_call_errhandler");
  if (!find_comm(rs, comm)) return raise(rs, comm, "MPI_Comm_call_errhandler",
                                         MpiError{MPI_ERR_COMM, fmt::format("communicator {} is not valid", comm)});
  std::string text;
  if (const auto it = rs.error_strings.find(errorcode); it != rs.error_strings.end()) text = it->second;
  raise(rs, comm, "MPI_Comm_call_errhandler",
        MpiError{errorcode, fmt::format("the program raised error code {}{}", errorcode,
                                        text.empty() ? "" : " (" + text + ")")});
  return MPI_SUCCESS;
}
