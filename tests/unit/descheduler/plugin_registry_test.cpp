// The descheduler's plugin registry: entries by name, a typed factory decoding args and building
// plugins, buildPlugins' errors naming the plugin, and the (empty) in-tree table.
#include "framework/plugin_registry.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>

namespace koord::roles::descheduler {
namespace {

struct LowNodeLoadArgs final : PluginArgs {
  int threshold = 80;
};

Expected<LowNodeLoadArgs> decodeArgs(const boost::json::value* args) {
  LowNodeLoadArgs out;
  if (args == nullptr || args->is_null())
    return out;
  const auto* o = args->if_object();
  if (o == nullptr || !o->contains("threshold") || !o->at("threshold").is_int64())
    return invalidArgument("threshold: want an integer");
  out.threshold = static_cast<int>(o->at("threshold").get_int64());
  return out;
}

class LowNodeLoad final : public BalancePlugin {
 public:
  explicit LowNodeLoad(std::shared_ptr<const LowNodeLoadArgs> args) : args_(std::move(args)) {}
  std::string_view name() const override { return "LowNodeLoad"; }
  Expected<void> balance(const std::vector<const Node*>&) override { return {}; }
  int threshold() const { return args_ ? args_->threshold : -1; }

 private:
  std::shared_ptr<const LowNodeLoadArgs> args_;
};

class NoEvictions final : public FrameworkHandle {
 public:
  const Snapshot& snapshot() const override { return snapshot_; }
  bool filter(const Pod&) const override { return false; }
  bool preEvictionFilter(const Pod&) const override { return false; }
  bool evict(const Pod&, const EvictOptions&) override { return false; }
  bool nodeLimitReached(std::string_view) const override { return true; }
  bool totalLimitReached() const override { return true; }
  PodEvictionApi& podEvictor() override { return api_; }

 private:
  struct NoApi final : PodEvictionApi {
    bool evict(const Pod&, const EvictOptions&) override { return false; }
  };
  Snapshot snapshot_;
  NoApi api_;
};

PluginRegistry registryWithLowNodeLoad() {
  PluginRegistry r;
  r.add("LowNodeLoad", makePluginFactory<LowNodeLoadArgs>(
                           decodeArgs,
                           [](std::shared_ptr<const LowNodeLoadArgs> args, FrameworkHandle&) {
                             return std::make_shared<LowNodeLoad>(std::move(args));
                           },
                           "LowNodeLoad: args are not LowNodeLoadArgs"));
  return r;
}

TEST_CASE("descheduler registry: plugins by name, duplicates refused", "[descheduler]") {
  PluginRegistry r = registryWithLowNodeLoad();
  CHECK(r.names() == std::vector<std::string>{"LowNodeLoad"});
  CHECK(r.find("LowNodeLoad") != nullptr);
  CHECK(r.find("RemovePodsViolatingNodeAffinity") == nullptr);
  CHECK_THROWS_AS(r.add("LowNodeLoad", PluginFactory{}), std::logic_error);
}

TEST_CASE("descheduler registry: the typed factory decodes args and builds the plugin",
          "[descheduler]") {
  const PluginRegistry r = registryWithLowNodeLoad();
  const PluginFactory* f = r.find("LowNodeLoad");
  REQUIRE(f != nullptr);
  NoEvictions handle;

  const auto v = boost::json::parse(R"({"threshold":65})");
  auto args = f->decode_args(&v, "descheduler/v1alpha2");
  REQUIRE(args.has_value());
  auto built = f->create(*args, handle);
  REQUIRE(built.has_value());
  auto* plugin = dynamic_cast<LowNodeLoad*>(built->get());
  REQUIRE(plugin != nullptr);
  CHECK(plugin->threshold() == 65);
  CHECK(dynamic_cast<BalancePlugin*>(built->get()) != nullptr);
  CHECK(dynamic_cast<DeschedulePlugin*>(built->get()) == nullptr);

  SECTION("no args: the decoder's defaults") {
    auto defaults = f->decode_args(nullptr, "");
    REQUIRE(defaults.has_value());
    auto p = f->create(*defaults, handle);
    REQUIRE(p.has_value());
    CHECK(dynamic_cast<LowNodeLoad&>(**p).threshold() == 80);
  }
  SECTION("bad args are the decoder's error") {
    const auto bad = boost::json::parse(R"({"threshold":"high"})");
    auto refused = f->decode_args(&bad, "");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message == "threshold: want an integer");
  }
  SECTION("args of another plugin are refused at create") {
    struct OtherArgs final : PluginArgs {};
    auto wrong = f->create(std::make_shared<const OtherArgs>(), handle);
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error().message == "LowNodeLoad: args are not LowNodeLoadArgs");
  }
}

TEST_CASE("buildPlugins builds a profile's plugins in order, errors naming the plugin",
          "[descheduler]") {
  const PluginRegistry r = registryWithLowNodeLoad();
  NoEvictions handle;
  const auto v = boost::json::parse(R"({"threshold":50})");

  auto built = buildPlugins(r, {{"LowNodeLoad", &v}, {"LowNodeLoad", nullptr}}, "", handle);
  REQUIRE(built.has_value());
  REQUIRE(built->size() == 2);
  CHECK(dynamic_cast<LowNodeLoad&>(*(*built)[0]).threshold() == 50);
  CHECK(dynamic_cast<LowNodeLoad&>(*(*built)[1]).threshold() == 80);

  auto unknown = buildPlugins(r, {{"MigrationController", nullptr}}, "", handle);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message == "plugin MigrationController: not in this build");

  const auto bad = boost::json::parse(R"({"threshold":true})");
  auto refused = buildPlugins(r, {{"LowNodeLoad", &bad}}, "", handle);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "plugin LowNodeLoad args: threshold: want an integer");
}

TEST_CASE("the in-tree descheduler registry carries Koordinator's and the community plugins",
          "[descheduler]") {
  const std::vector<std::string> want{"DefaultEvictor",
                                      "HighNodeUtilization",
                                      "LowNodeLoad",
                                      "LowNodeUtilization",
                                      "MigrationController",
                                      "PodLifeTime",
                                      "RemoveDuplicates",
                                      "RemoveFailedPods",
                                      "RemovePodsHavingTooManyRestarts",
                                      "RemovePodsViolatingInterPodAntiAffinity",
                                      "RemovePodsViolatingNodeAffinity",
                                      "RemovePodsViolatingNodeTaints",
                                      "RemovePodsViolatingTopologySpreadConstraint"};
  CHECK(inTreeRegistry().names() == want);
  // Each decodes its defaults (no pluginConfig) or says which arg it needs.
  for (const auto& name : want) {
    INFO(name);
    auto args = inTreeRegistry().find(name)->decode_args(nullptr, "descheduler/v1alpha2");
    const bool needs_args = name == "PodLifeTime" || name == "RemovePodsHavingTooManyRestarts" ||
                            name == "LowNodeUtilization" || name == "HighNodeUtilization" ||
                            name == "RemovePodsViolatingNodeAffinity";
    CHECK(args.has_value() != needs_args);
  }
}

}  // namespace
}  // namespace koord::roles::descheduler
