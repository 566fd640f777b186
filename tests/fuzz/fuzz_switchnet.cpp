// libFuzzer harness: switch network files (switchnet:FILE; the input is the file's content).
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = ts_fuzz::scratch_file("ts_fuzz_switchnet", ".json");
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                               static_cast<std::streamsize>(size));
  ts_fuzz::expect_clean([&] { ts_fuzz::check_machine(touchstone::parse_machine("switchnet:" + path)); });
  return 0;
}
