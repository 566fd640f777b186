# Plug-ins (docs/extending.md): examples/plugin_bruck.cpp loaded by sweep, run and mpirun, and the
# errors of --plugin, with two plug-ins wrong on purpose (bad_plugins.cpp).
add_library(test_plugin_wrong MODULE ${CMAKE_CURRENT_LIST_DIR}/bad_plugins.cpp)
add_library(test_plugin_clash MODULE ${CMAKE_CURRENT_LIST_DIR}/bad_plugins.cpp)
target_compile_definitions(test_plugin_clash PRIVATE CLASH)
# A plug-in whose run fails in one order of a race (racy_plugin.cpp).
add_library(test_plugin_racy MODULE ${CMAKE_CURRENT_LIST_DIR}/racy_plugin.cpp)
foreach(plugin IN ITEMS test_plugin_wrong test_plugin_clash test_plugin_racy)
  target_link_libraries(${plugin} PRIVATE touchstone_algorithms touchstone_options)
  set_target_properties(${plugin} PROPERTIES PREFIX "")
endforeach()
if(TOUCHSTONE_BUILD_EXAMPLES)
  add_test(NAME Plugins.SweepRunMpirunAndErrors
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/plugin_check.sh $<TARGET_FILE:touchstone_main> $<TARGET_FILE:plugin_bruck>
                   $<TARGET_FILE:test_plugin_wrong> $<TARGET_FILE:test_plugin_clash> $<TARGET_FILE:touchstone_mpi>
                   $<TARGET_FILE:mpi_test_collectives>)
  set_tests_properties(Plugins.SweepRunMpirunAndErrors PROPERTIES TIMEOUT ${TOUCHSTONE_TEST_TIMEOUT})
endif()
# touchstone run --races=error explores a failed run as mpirun does: the original order fails, the
# other completes, so the race is harmful and the run's own failure decides the exit status.
set(expect_lines ${PROJECT_SOURCE_DIR}/tests/mpi/expect_lines.sh)
add_test(NAME Plugins.RunExploresFailedRun
         COMMAND ${expect_lines} 2 "rank 0 failed at t=31\\.48 us: rank 1's message came first"
                 "explored 2 run\\(s\\) \\(at most 20\\), every choice; the original run failed: rank 0 failed at .*"
                 "  --schedule 0:1=2: completed \\(trace_hash [0-9a-f]{16}\\)"
                 "  rank 0 receive #1: harmful: --schedule 0:1=2 ends otherwise: completed"
                 -- $<TARGET_FILE:touchstone_main> run --plugin $<TARGET_FILE:test_plugin_racy>
                 --algorithm alltoall/first-wins --machine mesh:1x3 --size 8 --races=error)
