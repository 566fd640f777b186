// libFuzzer harness: JSON machine files (the input is the file's content). A file that
// names other files reaches only what the fuzzer writes into its own name, or nothing.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = ts_fuzz::scratch_file("ts_fuzz", ".json");
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                               static_cast<std::streamsize>(size));
  ts_fuzz::expect_clean([&] { ts_fuzz::check_machine(touchstone::parse_machine(path)); });
  return 0;
}
