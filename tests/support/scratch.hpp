// Scratch files for tests that hand a path to the code under test. ctest runs every test in its
// own process, several at once, all with the build's one $TMPDIR (tests/CMakeLists.txt): two tests
// writing the same name there read each other's files. Each process writes in a folder of its own,
// removed when the process ends (the files' text is in the test that writes them).
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace ts_test {

/// `name` in this process's scratch folder; the file keeps its name, so messages naming it match.
inline std::filesystem::path scratch_path(const std::string& name) {
  struct Folder {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("touchstone_test_" + std::to_string(::getpid()));
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() {
      std::error_code ignored;  // nothing to report at exit: the test's verdict is already out
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  return folder.path / name;
}

}  // namespace ts_test
