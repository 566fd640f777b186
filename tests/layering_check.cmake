# The floors of the house (docs/extending.md): each folder may include only the floors below it.
#   runtime      its own headers: the ground floor knows no paper, no topology, no machine
#   topologies   the runtime
#   machines     the topologies and the runtime
#   algorithms   the machines, topologies and runtime (and the umbrella header), never the experiment
#                harness, mpi, the command line, tools or bench
#   experiment   the algorithms and everything below them, never mpi, the command line, tools or bench
#   mpi          the algorithms and everything below them, never the experiment harness, the command
#                line, tools or bench
#   cli          everything above but tools and bench
#   distributed  the experiment harness and everything below it, never mpi (Open MPI's MPI is its own);
#                and, as every program, the command line's parse_command_line.hpp
# Every include, quoted or angled, that resolves to a file of the repository must lie on an allowed
# floor; a quoted include that resolves nowhere in the repository is refused too (it climbs out).
#   cmake -DROOT=<repository> -P tests/layering_check.cmake
set(bases "${ROOT}/runtime/include" "${ROOT}/topologies/include" "${ROOT}/machines/include" "${ROOT}/include"
          "${ROOT}/experiment/include" "${ROOT}/mpi/include" "${ROOT}")
set(floor_runtime runtime)
set(floor_topologies runtime topologies)
set(floor_machines runtime topologies machines)
set(floor_algorithms runtime topologies machines include algorithms)
set(floor_experiment runtime topologies machines include algorithms experiment)
set(floor_mpi runtime topologies machines include algorithms mpi)
set(floor_cli runtime topologies machines include algorithms experiment mpi cli)
set(floor_distributed runtime topologies machines include algorithms experiment distributed)
# Files of a floor above that a floor may include all the same: the one way every program refuses a
# command line (it includes only CLI11 and fmt).
set(also_distributed "${ROOT}/cli/parse_command_line.hpp")

set(bad "")
set(checked 0)
foreach(floor runtime topologies machines algorithms experiment mpi cli distributed)
  file(GLOB_RECURSE files "${ROOT}/${floor}/*.hpp" "${ROOT}/${floor}/*.cpp" "${ROOT}/${floor}/*.h" "${ROOT}/${floor}/*.c")
  foreach(f IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
    get_filename_component(dir "${f}" DIRECTORY)
    foreach(line IN LISTS lines)
      if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        set(quoted yes)
      elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
        set(quoted no)
      else()
        continue()
      endif()
      set(inc "${CMAKE_MATCH_1}")
      # The runtime is compiled with its own headers only: only its own folders resolve there.
      if(floor STREQUAL "runtime")
        set(search "${dir}" "${ROOT}/runtime/include")
      elseif(floor STREQUAL "distributed")  # its <mpi.h> is Open MPI's, not mpi/include's
        set(search "${dir}" ${bases})
        list(REMOVE_ITEM search "${ROOT}/mpi/include")
      else()
        set(search "${dir}" ${bases})
      endif()
      set(real "")
      foreach(base IN LISTS search)
        if(EXISTS "${base}/${inc}" AND NOT IS_DIRECTORY "${base}/${inc}")
          get_filename_component(real "${base}/${inc}" REALPATH)
          break()
        endif()
      endforeach()
      if(real STREQUAL "")
        # A system header; but a floor above's header name in angle brackets is refused as well.
        if(quoted OR inc MATCHES
           "^(algorithms|topologies|machines|experiment|cli|tools|bench|mpi|touchstone/topologies|touchstone/machines|touchstone/experiment)[/.]")
          if(NOT (inc STREQUAL "mpi.h" AND ((quoted AND floor STREQUAL "mpi") OR floor STREQUAL "distributed")))
            list(APPEND bad "${f}: ${line} (resolves to no file of its floors)")
          endif()
        endif()
        continue()
      endif()
      string(FIND "${real}" "${ROOT}/" inside)
      if(NOT inside EQUAL 0)
        continue()
      endif()
      set(ok no)
      foreach(allowed IN LISTS floor_${floor})
        string(FIND "${real}" "${ROOT}/${allowed}/" at)
        if(at EQUAL 0)
          set(ok yes)
        endif()
      endforeach()
      list(FIND also_${floor} "${real}" also)
      if(also GREATER -1)
        set(ok yes)
      endif()
      if(NOT ok)
        list(APPEND bad "${f}: ${line} (${floor}/ may include only ${floor_${floor}})")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad)
  list(JOIN bad "\n  " msg)
  message(FATAL_ERROR "includes that climb a floor:\n  ${msg}")
endif()
message(STATUS "layering: ${checked} files of runtime, topologies, machines, algorithms, experiment, mpi, cli and "
               "distributed include only their floors")
