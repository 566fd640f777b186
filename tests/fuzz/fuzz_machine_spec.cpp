// libFuzzer harness: the machine spec grammar (parse_machine on any text).
#include <cstddef>
#include <cstdint>
#include <string>

#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string spec(reinterpret_cast<const char*>(data), size);
  ts_fuzz::expect_clean([&] { ts_fuzz::check_machine(touchstone::parse_machine(spec)); });
  return 0;
}
