// Fixtures for the SelectorSpread and DefaultSelector tests: selectors as text, spreading objects
// put into a fake cluster under the informers' keys, and pods with label sets.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/pod_info.h"
#include "koord/kube/labels.h"
#include "plugins/upstream/helper/spread_selectors.h"
#include "scheduler/builders.h"
#include "scheduler/fake_cluster.h"

namespace selectorspread_test {

using koord::kube::Labels;
using koord::kube::Selector;
using koord::roles::scheduler::PodInfo;
using koord::roles::scheduler::testkit::makeNode;
using koord::roles::scheduler::testkit::makePod;
using koord::roles::scheduler::testkit::PodBuilder;
using koord::roles::scheduler::upstream::helper::SpreadingSelector;

/// A selector in the string syntax ("foo" is Exists, "foo=bar" an equality).
inline Selector sel(std::string_view text) {
  auto s = Selector::parse(text);
  REQUIRE(s.has_value());
  return *s;
}

inline SpreadingSelector object(std::string name, std::string_view selector,
                                std::string ns = "default") {
  return {std::move(ns), std::move(name), sel(selector)};
}

/// The spreading objects a test puts into the cluster, by kind.
struct Objects {
  std::vector<SpreadingSelector> services = {};
  std::vector<SpreadingSelector> rcs = {};
  std::vector<SpreadingSelector> rss = {};
  std::vector<SpreadingSelector> sss = {};
};

inline void addObjects(koord::roles::scheduler::testkit::FakeCluster& cluster,
                       const Objects& objects) {
  namespace helper = koord::roles::scheduler::upstream::helper;
  auto put = [&](std::string_view key, const std::vector<SpreadingSelector>& list) {
    auto& source = cluster.declare<SpreadingSelector>(key);
    for (const auto& o : list)
      source.set(o.key(), std::make_shared<const SpreadingSelector>(o));
  };
  put(helper::kServiceSource, objects.services);
  put(helper::kReplicationControllerSource, objects.rcs);
  put(helper::kReplicaSetSource, objects.rss);
  put(helper::kStatefulSetSource, objects.sss);
}

/// A pod in "default" named `name` with `labels`.
inline PodBuilder podWith(std::string name, const Labels& labels) {
  PodBuilder b = makePod(std::move(name));
  for (const auto& [k, v] : labels)
    b.label(k, v);
  return b;
}

}  // namespace selectorspread_test
