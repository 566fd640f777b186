# Plug-ins (docs/extending.md): examples/plugin_bruck.cpp loaded by sweep, run and mpirun, and the
# errors of --plugin, with two plug-ins wrong on purpose (bad_plugins.cpp).
add_library(test_plugin_wrong MODULE ${CMAKE_CURRENT_LIST_DIR}/bad_plugins.cpp)
add_library(test_plugin_clash MODULE ${CMAKE_CURRENT_LIST_DIR}/bad_plugins.cpp)
target_compile_definitions(test_plugin_clash PRIVATE CLASH)
foreach(plugin IN ITEMS test_plugin_wrong test_plugin_clash)
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
