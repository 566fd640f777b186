# ctest's first test (TestFiles.Fresh, tests/CMakeLists.txt): the folder the tests write their
# temporary files to, emptied. Usage: cmake -DDIR=<folder> -P fresh_dir.cmake
if(NOT DIR)
  message(FATAL_ERROR "fresh_dir.cmake: no -DDIR=<folder>")
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
