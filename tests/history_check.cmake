# Code, tests and docs state what is true now: no comment, test name or page points at a work log
# (a numbered session or issue, or the current session) or at a section of a specification
# document the repository does not hold. A comment gives the reason itself; history is in
# CHANGELOG.md and in git. Fails naming file:line.
#   cmake -DROOT=<repository> -P tests/history_check.cmake
#
# Scans the tracked files (git ls-files; every file under the source folders when ROOT is not a git
# checkout) with the extensions below, except the exclusions.

# Files still being edited on other branches (the MPI layer, the algorithm catalog and the docs
# pages those branches own, mpi/src/launch.cpp among them), cleaned when those merge. Remove
# entries as they are; the list is meant to end empty.
set(excluded_prefixes
)

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
    foreach(dir runtime machines topologies algorithms bench tests tools mpi examples include docs cmake)
      list(APPEND globs "${ROOT}/${dir}/*.${ext}")
    endforeach()
  endforeach()
  file(GLOB_RECURSE files RELATIVE "${ROOT}" ${globs})
  file(GLOB top RELATIVE "${ROOT}" "${ROOT}/*.md" "${ROOT}/CMakeLists.txt")
  list(APPEND files ${top})
endif()

# Lower-cased text: a work-log reference, any case. Original text: the undefined document.
set(log_ref "(^|[^a-z0-9_])((sessions?|issues?) ?#?[0-9]|this[ ]session)")
set(spec_ref "(^|[^A-Za-z0-9_])SPEC( [0-9]|\\.md)")

set(bad "")
set(scanned 0)
foreach(rel IN LISTS files)
  if(rel STREQUAL "")
    continue()
  endif()
  set(skip "")
  foreach(prefix IN LISTS excluded_prefixes)
    string(FIND "${rel}" "${prefix}" at)
    if(at EQUAL 0)
      set(skip yes)
    endif()
  endforeach()
  get_filename_component(name "${rel}" NAME)
  string(REGEX MATCH "[^.]+$" ext "${name}")
  list(FIND extensions "${ext}" known)
  if(skip OR known EQUAL -1 OR NOT EXISTS "${ROOT}/${rel}")
    continue()
  endif()
  math(EXPR scanned "${scanned} + 1")
  file(READ "${ROOT}/${rel}" text)
  string(TOLOWER "${text}" lower)
  if(NOT lower MATCHES "${log_ref}" AND NOT text MATCHES "${spec_ref}")
    continue()
  endif()
  # Split into lines; characters that CMake lists treat specially are neutralized first.
  string(REGEX REPLACE "[][;\\\\]" "_" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(TOLOWER "${line}" low)
    if(low MATCHES "${log_ref}" OR line MATCHES "${spec_ref}")
      string(STRIP "${line}" shown)
      list(APPEND bad "${rel}:${n}: ${shown}")
    endif()
  endforeach()
endforeach()

if(bad)
  list(JOIN bad "\n  " msg)
  message(FATAL_ERROR "work-log or undefined-document references (say the reason itself):\n  ${msg}")
endif()
message(STATUS "history: ${scanned} files name no session, issue or SPEC document")
