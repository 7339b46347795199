// helper.DefaultSelector as kube-scheduler 1.20 computes it (Services and RCs merged as one label
// set, then every selecting ReplicaSet's and StatefulSet's requirements ANDed), over the index
// that follows the sources' events.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "fixtures.h"
#include "plugins/upstream/helper/default_selector.h"

namespace selectorspread_test {
namespace {

using koord::roles::scheduler::testkit::FakeCluster;
using koord::roles::scheduler::testkit::MapObjectSource;
using koord::roles::scheduler::upstream::helper::defaultSelector;
using koord::roles::scheduler::upstream::helper::kReplicaSetSource;
using koord::roles::scheduler::upstream::helper::kServiceSource;
using koord::roles::scheduler::upstream::helper::SpreadSelectorIndex;

struct SelectorCase {
  std::string name;
  PodInfo pod;
  Objects objects;
  /// The selector's string form; "" for the empty selector (no default spreading).
  std::string want;
};

std::vector<SelectorCase> selectorCases() {
  const Labels web{{"app", "web"}, {"tier", "front"}, {"pod-template-hash", "h1"}};
  const PodInfo pod = podWith("p", web);
  return {
      {"nothing in the cluster", pod, {}, ""},
      {"a pod without labels", makePod("p"), {.services = {object("s", "app=web")}}, ""},
      {"one service", pod, {.services = {object("s", "app=web")}}, "app=web"},
      {"services' selectors are merged into one set",
       pod,
       {.services = {object("s1", "app=web"), object("s2", "tier=front,app=web"),
                     object("other", "app=api")}},
       "app=web,tier=front"},
      {"services and RCs of other namespaces are not looked at",
       pod,
       {.services = {object("s", "app=web", "ns1")}, .rcs = {object("rc", "tier=front", "ns1")}},
       ""},
      {"a service must select every one of its labels",
       pod,
       {.services = {object("s", "app=web,track=canary")}},
       ""},
      {"RCs merge into the services' set",
       pod,
       {.services = {object("s", "app=web")}, .rcs = {object("rc", "tier=front")}},
       "app=web,tier=front"},
      // 1.20 lists every ReplicaSet of the namespace that selects the pod, owner or not.
      {"every selecting replica set adds its requirements",
       pod,
       {.services = {object("s", "app=web")},
        .rss = {object("web-h1", "app=web,pod-template-hash=h1"),
                object("web-h0", "app=web,pod-template-hash=h0"),
                object("front", "tier in (front,back)")}},
       "app=web,app=web,pod-template-hash=h1,tier in (back,front)"},
      {"stateful sets add theirs after the replica sets'",
       pod,
       {.rss = {object("rs", "app=web")}, .sss = {object("ss", "app,!canary")}},
       "app=web,app,!canary"},
      {"a selector without an equality is matched too",
       pod,
       {.rss = {object("rs", "!canary")}},
       "!canary"},
      {"controllers select no pod without labels",
       makePod("p"),
       {.rcs = {}, .rss = {object("rs", "!canary")}, .sss = {object("ss", "!canary")}},
       ""},
      {"a pod of another namespace",
       podWith("p", web).ns("ns1"),
       {.services = {object("s", "app=web")}, .rss = {object("rs", "app=web", "ns1")}},
       "app=web"},
  };
}

TEST_CASE("DefaultSelector as kube-scheduler 1.20's helper", "[selectorspread][default]") {
  for (const auto& tc : selectorCases()) {
    SECTION(tc.name) {
      FakeCluster cluster;
      addObjects(cluster, tc.objects);
      const SpreadSelectorIndex index(SpreadSelectorIndex::sourcesOf(cluster));
      const Selector got = index.defaultSelector(tc.pod);
      CHECK(got.toString() == tc.want);
      CHECK(got.empty() == tc.want.empty());
      if (!tc.want.empty()) {
        // Equal, requirement for requirement, to the same text parsed.
        CHECK(got == sel(tc.want));
        CHECK(got.matches(tc.pod.labels));
      }
    }
  }
}

TEST_CASE("DefaultSelector without sources is empty", "[selectorspread][default]") {
  const PodInfo pod = podWith("p", {{"app", "web"}});
  CHECK(defaultSelector(pod, nullptr).empty());
  FakeCluster cluster;  // no spreading sources declared
  const SpreadSelectorIndex index(SpreadSelectorIndex::sourcesOf(cluster));
  CHECK(index.size() == 0);
  CHECK(defaultSelector(pod, &index).empty());
}

TEST_CASE("DefaultSelector follows the sources' events", "[selectorspread][default]") {
  FakeCluster cluster;
  MapObjectSource<SpreadingSelector>& services = cluster.declare<SpreadingSelector>(kServiceSource);
  MapObjectSource<SpreadingSelector>& rss = cluster.declare<SpreadingSelector>(kReplicaSetSource);
  services.set("default/old", std::make_shared<const SpreadingSelector>(object("old", "app=web")));
  const SpreadSelectorIndex index(SpreadSelectorIndex::sourcesOf(cluster));
  const PodInfo pod = podWith("p", {{"app", "web"}, {"tier", "front"}});
  CHECK(index.size() == 1);
  CHECK(index.defaultSelector(pod).toString() == "app=web");

  auto put = [](MapObjectSource<SpreadingSelector>& source, const SpreadingSelector& o) {
    source.set(o.key(), std::make_shared<const SpreadingSelector>(o));
  };
  SECTION("an added object counts") {
    put(rss, object("rs", "tier=front"));
    CHECK(index.size() == 2);
    CHECK(index.defaultSelector(pod).toString() == "app=web,tier=front");
  }
  SECTION("an updated selector moves to its new bucket") {
    put(services, object("old", "tier=front"));
    CHECK(index.size() == 1);
    CHECK(index.defaultSelector(pod).toString() == "tier=front");
    put(services, object("old", "tier=back"));
    CHECK(index.defaultSelector(pod).empty());
  }
  SECTION("an object updated to select nothing leaves the index") {
    put(services, SpreadingSelector{"default", "old", Selector::nothing()});
    CHECK(index.size() == 0);
    CHECK(index.defaultSelector(pod).empty());
  }
  SECTION("a deleted object no longer counts") {
    services.remove("default/old");
    CHECK(index.size() == 0);
    CHECK(index.defaultSelector(pod).empty());
  }
  SECTION("objects of one bucket go one by one") {
    put(services, object("twin", "app=web"));
    CHECK(index.size() == 2);
    services.remove("default/old");
    CHECK(index.defaultSelector(pod).toString() == "app=web");
    services.remove("default/twin");
    CHECK(index.defaultSelector(pod).empty());
  }
}

TEST_CASE("the index's handlers outlive it", "[selectorspread][default]") {
  FakeCluster cluster;
  auto& services = cluster.declare<SpreadingSelector>(kServiceSource);
  { const SpreadSelectorIndex index(SpreadSelectorIndex::sourcesOf(cluster)); }
  // The source still calls the handlers of the index gone: they hold their own state (a use
  // after free here is what the sanitizers would catch).
  services.set("default/s", std::make_shared<const SpreadingSelector>(object("s", "app=web")));
  const SpreadSelectorIndex later(SpreadSelectorIndex::sourcesOf(cluster));
  CHECK(later.size() == 1);
  services.remove("default/s");
  CHECK(later.size() == 0);
}

}  // namespace
}  // namespace selectorspread_test
