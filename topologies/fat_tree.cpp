// The CM-5 fat tree (paper 003, section 3); see fat_tree.hpp for the model.
#include "touchstone/topologies/fat_tree.hpp"

#include <fmt/format.h>

#include "touchstone/error.hpp"

namespace touchstone {
namespace {

class FatTree final : public Topology {
 public:
  explicit FatTree(int nodes) : nodes_(nodes) {
    while (span(levels_) < nodes_) ++levels_;
  }
  std::string name() const override { return fmt::format("fattree:{}", nodes_); }
  int nodes() const override { return nodes_; }
  std::size_t link_channels() const override {
    return static_cast<std::size_t>(nodes_) * static_cast<std::size_t>(levels_) * 2;
  }
  void route(int src, int dst, std::vector<LinkId>& out) const override {
    const int top = common_level(src, dst);
    for (int l = 0; l < top; ++l) out.push_back(id(src, l, 0));
    for (int l = top - 1; l >= 0; --l) out.push_back(id(dst, l, 1));
  }
  int distance(int src, int dst) const override { return 2 * common_level(src, dst); }
  std::string link_name(LinkId link) const override {
    const int dir = static_cast<int>(link % 2), level = static_cast<int>(link / 2 % static_cast<LinkId>(levels_));
    const int node = static_cast<int>(link / 2 / static_cast<LinkId>(levels_));
    return fmt::format("node {} level {} {}", node, level, dir == 0 ? "up" : "down");
  }
  // Section 3: 20 MB/s inside a cluster of 4, 10 MB/s inside 16, 5 MB/s beyond.
  Time link_byte_time(LinkId link) const override {
    const int level = static_cast<int>(link / 2 % static_cast<LinkId>(levels_));
    return level == 0 ? nanoseconds(50) : level == 1 ? nanoseconds(100) : nanoseconds(200);
  }

 private:
  static int span(int level) { return 1 << (2 * level); }  // 4^level nodes below a level switch
  int common_level(int a, int b) const {
    int l = 0;
    while (a / span(l) != b / span(l)) ++l;
    return l;
  }
  LinkId id(int node, int level, int dir) const {
    return static_cast<LinkId>((node * levels_ + level) * 2 + dir);
  }
  int nodes_;
  int levels_ = 1;
};

}  // namespace

std::shared_ptr<const Topology> make_fat_tree(int nodes) {
  if (nodes < 2 || nodes > 16384) throw UsageError(fmt::format("fat tree: {} nodes; give 2 to 16384", nodes));
  return std::make_shared<FatTree>(nodes);
}

}  // namespace touchstone
