// A profile at run time: plugins built once from the registry, Deschedule and Balance over the
// pass's nodes, evictions through the Filter plugins' verdict, the limiter and the one Evict
// plugin, each counted in descheduler_pods_evicted.
#include <catch2/catch.hpp>

#include <string>

#include "config/descheduler_config.h"
#include "fake_handle.h"
#include "runtime/profile_runner.h"

using namespace koord::roles::descheduler;
namespace testkit = koord::roles::descheduler::testkit;

namespace {

struct NoArgs final : PluginArgs {};

// Evicts every pod on the nodes it is given, as far as the handle lets it.
class EvictAll final : public DeschedulePlugin {
 public:
  explicit EvictAll(FrameworkHandle& h) : h_(h) {}
  std::string_view name() const override { return "EvictAll"; }
  koord::Expected<void> deschedule(const std::vector<const Node*>& nodes) override {
    for (const Node* n : nodes) {
      for (const auto& p : h_.snapshot().podsOn(n->name)) {
        if (h_.filter(*p))
          h_.evict(*p, {"EvictAll", "test"});
      }
    }
    return {};
  }

 private:
  FrameworkHandle& h_;
};

// Refuses pods labelled keep=true.
class KeepFilter final : public FilterPlugin {
 public:
  std::string_view name() const override { return "KeepFilter"; }
  bool filter(const Pod& pod) const override { return !pod.labels.contains("keep"); }
};

// Evicts through the handle's API side.
class ApiEvict final : public EvictPlugin {
 public:
  explicit ApiEvict(FrameworkHandle& h) : h_(h) {}
  std::string_view name() const override { return "ApiEvict"; }
  bool evict(const Pod& pod, const EvictOptions& o) override {
    return h_.podEvictor().evict(pod, o);
  }

 private:
  FrameworkHandle& h_;
};

template <typename P>
PluginFactory factory() {
  return makePluginFactory<NoArgs>(
      [](const boost::json::value*) -> koord::Expected<NoArgs> { return NoArgs{}; },
      [](std::shared_ptr<const NoArgs>, FrameworkHandle& h) -> std::shared_ptr<Plugin> {
        if constexpr (std::is_constructible_v<P, FrameworkHandle&>)
          return std::make_shared<P>(h);
        else
          return std::make_shared<P>();
      },
      "wrong args");
}

PluginRegistry registry() {
  PluginRegistry r;
  r.add("EvictAll", factory<EvictAll>());
  r.add("KeepFilter", factory<KeepFilter>());
  r.add("ApiEvict", factory<ApiEvict>());
  return r;
}

config::Profile profile(const std::string& yaml) {
  auto c = config::parseDeschedulerConfigText(yaml, registry());
  INFO((c ? std::string() : c.error().message));
  REQUIRE(c.has_value());
  return c->profiles.front();
}

const char* kProfile = R"(
profiles:
- name: p
  plugins:
    deschedule: {enabled: [{name: EvictAll}]}
    filter: {enabled: [{name: KeepFilter}]}
    evict: {enabled: [{name: ApiEvict}]}
)";

}  // namespace

TEST_CASE("evictions pass the filters, the caps and the evict plugin, and are counted") {
  Snapshot snap;
  snap.addNode(testkit::makeNode("n1"));
  snap.addNode(testkit::makeNode("n2"));
  for (int i = 0; i < 4; ++i)
    snap.addPod(testkit::makePod("a" + std::to_string(i), "n1"));
  auto kept = testkit::makePod("kept", "n1");
  kept->labels["keep"] = "true";
  snap.addPod(kept);
  snap.addPod(testkit::makePod("b0", "n2"));

  EvictionLimiter limiter(2, std::nullopt, std::nullopt);
  testkit::RecordingApi api;
  koord::metrics::Registry metrics;
  auto runner = ProfileRunner::build(profile(kProfile), registry(), limiter, api, metrics);
  REQUIRE(runner.has_value());
  std::vector<const Node*> nodes = {snap.node("n1"), snap.node("n2")};
  REQUIRE((*runner)->runDeschedule(snap, nodes).has_value());
  // Two per node: a0, a1 on n1 (a2, a3 capped, kept filtered), b0 on n2.
  CHECK(api.evicted == std::vector<std::string>{"default/a0", "default/a1", "default/b0"});
  const std::string text = metrics.render();
  CHECK(text.find(R"(descheduler_pods_evicted{result="success",strategy="EvictAll",)"
                  R"(namespace="default",node="n1"} 2)") != std::string::npos);
  // The snapshot is the pass's only while it runs.
  CHECK((*runner)->snapshot().nodes.empty());
}

TEST_CASE("a failed eviction gives its slot back and is counted as an error") {
  Snapshot snap;
  snap.addNode(testkit::makeNode("n1"));
  snap.addPod(testkit::makePod("a0", "n1"));
  snap.addPod(testkit::makePod("a1", "n1"));
  EvictionLimiter limiter(1, std::nullopt, std::nullopt);
  testkit::RecordingApi api;
  api.answer = false;
  koord::metrics::Registry metrics;
  auto runner = ProfileRunner::build(profile(kProfile), registry(), limiter, api, metrics);
  REQUIRE(runner.has_value());
  REQUIRE((*runner)->runDeschedule(snap, {snap.node("n1")}).has_value());
  // Both tried: the first failure released the node's only slot.
  CHECK(api.evicted.size() == 2);
  CHECK(limiter.total() == 0u);
  CHECK(metrics.render().find(R"(result="error")") != std::string::npos);
}

TEST_CASE("a profile's nodeSelector picks its nodes") {
  auto p = profile(R"(
profiles:
- name: p
  nodeSelector: {matchLabels: {pool: batch}}
  plugins:
    deschedule: {enabled: [{name: EvictAll}]}
    evict: {enabled: [{name: ApiEvict}]}
)");
  EvictionLimiter limiter(std::nullopt, std::nullopt, std::nullopt);
  testkit::RecordingApi api;
  koord::metrics::Registry metrics;
  auto runner = ProfileRunner::build(p, registry(), limiter, api, metrics);
  REQUIRE(runner.has_value());
  auto a = testkit::makeNode("a");
  a->labels["pool"] = "batch";
  auto b = testkit::makeNode("b");
  CHECK((*runner)->selectNodes({a.get(), b.get()}) == std::vector<const Node*>{a.get()});
}

TEST_CASE("profiles that cannot run are refused when built") {
  EvictionLimiter limiter(std::nullopt, std::nullopt, std::nullopt);
  testkit::RecordingApi api;
  koord::metrics::Registry metrics;
  // The message building the profiles of `yaml` is refused with.
  auto refusal = [&](const char* yaml) {
    auto r = ProfileRunner::build(profile(yaml), registry(), limiter, api, metrics);
    REQUIRE_FALSE(r.has_value());
    return r.error().message;
  };
  SECTION("a plugin at a point it does not implement") {
    CHECK_THAT(refusal(R"(
profiles:
- name: p
  plugins:
    balance: {enabled: [{name: EvictAll}]}
    evict: {enabled: [{name: ApiEvict}]}
)"),
               Catch::Contains("does not implement balance"));
  }
  SECTION("deschedule plugins without an evict plugin") {
    CHECK_THAT(refusal(R"(
profiles:
- name: p
  plugins:
    deschedule: {enabled: [{name: EvictAll}]}
)"),
               Catch::Contains("no evict plugin"));
  }
}
