#include "window_notes.hpp"

#include <utility>

#include "touchstone/packed.hpp"

namespace touchstone::mpi {

// The earlier parts' bytes go first, after their length; the new part's follow to the end.
void add_window_notes(RunOptions& ro, std::function<std::vector<std::byte>()> give,
                      std::function<void(int process, std::span<const std::byte> notes)> take) {
  auto earlier_give = std::move(ro.window_notes);
  auto earlier_take = std::move(ro.on_window_notes);
  ro.window_notes = [earlier_give = std::move(earlier_give), give = std::move(give)] {
    Packed p;
    p.put_bytes(earlier_give ? earlier_give() : std::vector<std::byte>());
    const std::vector<std::byte> mine = give();
    p.bytes.insert(p.bytes.end(), mine.begin(), mine.end());
    return std::move(p.bytes);
  };
  ro.on_window_notes = [earlier_take = std::move(earlier_take), take = std::move(take)](
                           int process, std::span<const std::byte> notes) {
    Unpacker in(notes);
    const std::span<const std::byte> earlier = in.take_bytes();
    if (earlier_take) earlier_take(process, earlier);
    take(process, notes.subspan(sizeof(std::size_t) + earlier.size()));
  };
}

}  // namespace touchstone::mpi
