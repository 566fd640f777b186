# Code, tests and docs state what is true now: no comment, test name or page points at a work log
# (a numbered session or issue, or the current session) or at a section of a specification
# document the repository does not hold. A comment gives the reason itself; history is in
# CHANGELOG.md and in git. Fails naming file:line.
#   cmake -DROOT=<repository> -P tests/history_check.cmake
#
# Scans the tracked files (git ls-files; every file under the source folders when ROOT is not a git
# checkout) with the extensions below.

set(extensions hpp cpp h c cc cmake txt md sh dict in supp py)

find_package(Git QUIET)
set(files "")
if(GIT_FOUND AND EXISTS "${ROOT}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${ROOT}" ls-files
                  OUTPUT_VARIABLE listing RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    string(REPLACE "\n" ";" files "${listing}")
  endif()
endif()
if(NOT files)
  set(globs "")
  foreach(ext IN LISTS extensions)
    foreach(dir runtime machines topologies algorithms experiment cli bench tests tools mpi examples include docs cmake)
      list(APPEND globs "${ROOT}/${dir}/*.${ext}")
    endforeach()
  endforeach()
  file(GLOB_RECURSE files RELATIVE "${ROOT}" ${globs})
  file(GLOB top RELATIVE "${ROOT}" "${ROOT}/*.md" "${ROOT}/CMakeLists.txt")
  list(APPEND files ${top})
endif()

# Lower-cased text: a work-log reference, any case. Original text: the undefined document.
set(log_ref "(^|[^a-z0-9_])((sessions?|issues?) ?#?[0-9]|this[ ]session)")
# A line that ends in "session" or "issue" and a next line that starts with a number after its
# comment marker: the same reference, wrapped.
set(log_tail "(^|[^a-z0-9_])(sessions?|issues?) ?#?$")
set(log_head "^[ \t]*(//+|#+|\\*+)?[ \t]*#?[0-9]")
set(log_wrapped "(^|[^a-z0-9_])(sessions?|issues?)[ \t]*\n[ \t]*(//+|#+|\\*+)?[ \t]*#?[0-9]")
set(spec_ref "(^|[^A-Za-z0-9_])SPEC( [0-9]|\\.md)")

set(bad "")
set(scanned 0)
foreach(rel IN LISTS files)
  if(rel STREQUAL "")
    continue()
  endif()
  get_filename_component(name "${rel}" NAME)
  string(REGEX MATCH "[^.]+$" ext "${name}")
  list(FIND extensions "${ext}" known)
  if(known EQUAL -1 OR NOT EXISTS "${ROOT}/${rel}")
    continue()
  endif()
  math(EXPR scanned "${scanned} + 1")
  file(READ "${ROOT}/${rel}" text)
  string(TOLOWER "${text}" lower)
  if(NOT lower MATCHES "${log_ref}" AND NOT lower MATCHES "${log_wrapped}" AND NOT text MATCHES "${spec_ref}")
    continue()
  endif()
  # Split into lines; characters that CMake lists treat specially are neutralized first.
  string(REGEX REPLACE "[][;\\\\]" "_" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(n 0)
  set(tail "")
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(TOLOWER "${line}" low)
    if(tail AND low MATCHES "${log_head}")
      list(APPEND bad "${tail}")
    endif()
    set(tail "")
    string(STRIP "${line}" shown)
    if(low MATCHES "${log_ref}" OR line MATCHES "${spec_ref}")
      list(APPEND bad "${rel}:${n}: ${shown}")
    elseif(low MATCHES "${log_tail}")
      set(tail "${rel}:${n}: ${shown} (continued on the next line)")
    endif()
  endforeach()
endforeach()

if(bad)
  list(JOIN bad "\n  " msg)
  message(FATAL_ERROR "work-log or undefined-document references (say the reason itself):\n  ${msg}")
endif()
message(STATUS "history: ${scanned} files name no session, issue or SPEC document")
