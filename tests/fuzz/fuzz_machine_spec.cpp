// libFuzzer harness: the machine spec grammar (parse_machine on any text). A text that parses
// round-trips: MachineSpec::parse(spec.text()) == spec.
#include <cstddef>
#include <cstdint>
#include <string>

#include "invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ts_fuzz::expect_clean([&] {
    const touchstone::MachineSpec spec = touchstone::MachineSpec::parse(text);
    ts_fuzz::check(touchstone::MachineSpec::parse(spec.text()) == spec, "a spec whose text does not parse back to it");
    ts_fuzz::check_machine(touchstone::build_machine(spec));
  });
  return 0;
}
