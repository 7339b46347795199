// Tables for the community descheduler's pod-picking plugins' tests: rows judging one pod under
// edited args, and rows that edit the args and the handle, run one pass over a cluster the test
// builds, and name the pods evicted, in order.
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fake_handle.h"
#include "plugins/podfilter/pod_filter.h"

namespace koord::roles::descheduler::testkit {

template <typename Args>
using ArgsEdit = std::function<void(Args&)>;
using PodEdit = std::function<void(Pod&)>;

/// One pod, edited, judged under default args edited: every rule it breaks, in the plugin's words.
template <typename Args>
struct RuleCase {
  const char* name;
  ArgsEdit<Args> args;
  PodEdit pod;
  std::vector<std::string> refusals;
};

template <typename Args>
struct PassCase {
  const char* name;
  std::function<void(Args&, FakeHandle&)> setup;
  /// namespace/name, in eviction order.
  std::vector<std::string> evicted;
};

/// What every row shares: the cluster on a fresh handle, the args before the row's edits, and
/// what each eviction's options must say.
template <typename Args>
struct PassTable {
  std::function<void(FakeHandle&)> cluster;
  Args args;
  std::string_view plugin_name;
  /// Empty: the reason is not looked at.
  std::string_view reason_contains;
};

/// A section per row: PluginT(args, handle, the filter args.common makes) deschedules the
/// handle's nodes once.
template <typename PluginT, typename Args>
void checkPasses(const PassTable<Args>& table, const std::vector<PassCase<Args>>& cases) {
  for (const auto& c : cases) {
    SECTION(c.name) {
      FakeHandle h;
      table.cluster(h);
      Args args = table.args;
      c.setup(args, h);
      auto selection = podfilter::PodFilter::make(args.common);
      REQUIRE(selection.has_value());
      PluginT plugin(std::make_shared<const Args>(args), h, *selection);
      REQUIRE(plugin.deschedule(h.nodes()).has_value());
      CHECK(h.evicted == c.evicted);
      for (const auto& o : h.options) {
        CHECK(o.plugin_name == table.plugin_name);
        if (!table.reason_contains.empty())
          CHECK_THAT(o.reason, Catch::Contains(std::string(table.reason_contains)));
      }
    }
  }
}

}  // namespace koord::roles::descheduler::testkit
