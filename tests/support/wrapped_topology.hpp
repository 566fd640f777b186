// A test's own topology built on a real one: everything forwards to the base, so that a test
// overrides only what it changes (a slower link, a routing function that fails).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "touchstone/topology.hpp"

namespace ts_test {

class WrappedTopology : public touchstone::Topology {
 public:
  explicit WrappedTopology(std::shared_ptr<const Topology> base) : base_(std::move(base)) {}
  int nodes() const override { return base_->nodes(); }
  std::size_t link_channels() const override { return base_->link_channels(); }
  void route(int s, int d, std::vector<touchstone::LinkId>& out) const override { base_->route(s, d, out); }
  int distance(int s, int d) const override { return base_->distance(s, d); }
  std::string link_name(touchstone::LinkId id) const override { return base_->link_name(id); }

 protected:
  const Topology& base() const { return *base_; }

 private:
  std::shared_ptr<const Topology> base_;
};

}  // namespace ts_test
