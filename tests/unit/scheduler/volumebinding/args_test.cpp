// VolumeBindingArgs per configuration version, and the registry entry: the plugin's extension
// points and the storage informers it declares.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "fixtures.h"
#include "framework/plugin_registry.h"
#include "plugins/upstream/volumebinding/args.h"
#include "plugins/upstream/volumebinding/register.h"

namespace vb_test {
namespace {

constexpr std::string_view kV1beta1 = "kubescheduler.config.k8s.io/v1beta1";
constexpr std::string_view kV1beta2 = "kubescheduler.config.k8s.io/v1beta2";
constexpr std::string_view kV1 = "kubescheduler.config.k8s.io/v1";

koord::kube::Expected<std::shared_ptr<const vb::VolumeBindingArgs>> decode(
    std::string_view text, std::string_view version) {
  json::value v = json::parse(text);
  return vb::decodeVolumeBindingArgs(&v, version);
}

TEST_CASE("volumebinding: args default and decode per version", "[scheduler][volumebinding]") {
  auto none = vb::decodeVolumeBindingArgs(nullptr, kV1beta1);
  REQUIRE(none);
  CHECK((*none)->bind_timeout_seconds == 600);
  CHECK((*none)->shape.empty());
  auto null = decode("null", kV1);
  REQUIRE(null);
  CHECK((*null)->bind_timeout_seconds == 600);

  auto set = decode(R"({"bindTimeoutSeconds": 30})", kV1beta1);
  REQUIRE(set);
  CHECK((*set)->bind_timeout_seconds == 30);

  auto zero = decode(R"({"bindTimeoutSeconds": 0})", kV1beta2);
  REQUIRE(zero);
  CHECK((*zero)->bind_timeout_seconds == 0);

  auto shape = decode(
      R"({"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]})", kV1);
  REQUIRE(shape);
  CHECK((*shape)->shape == std::vector<vb::ShapePoint>{{.utilization = 0, .score = 0},
                                                       {.utilization = 100, .score = 10}});
}

TEST_CASE("volumebinding: bad args name the field", "[scheduler][volumebinding]") {
  struct Row {
    std::string text;
    std::string_view version;
    std::string error;
  };
  const std::vector<Row> rows = {
      {R"({"bindTimeoutSeconds": 0})", kV1beta1,
       "invalid BindTimeoutSeconds: 0, must be positive integer"},
      {R"({"bindTimeoutSeconds": -5})", kV1beta1,
       "invalid BindTimeoutSeconds: -5, must be positive integer"},
      {R"({"bindTimeoutSeconds": -1})", kV1beta2,
       "bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a "
       "negative value"},
      {R"({"bindTimeoutSeconds": 1.5})", kV1, "bindTimeoutSeconds: expected integer, got number"},
      {R"({"shape": []})", kV1beta1, "shape: unknown field"},
      {R"({"timeout": 3})", kV1, "timeout: unknown field"},
      {R"({"shape": []})", kV1, "shape: Required value: at least one point must be specified"},
      {R"({"shape": [{"utilization": 50}, {"utilization": 50}]})", kV1,
       "shape[1].utilization: Invalid value: 50: Utilization values must be sorted in "
       "increasing order"},
      {R"({"shape": [{"utilization": 101}]})", kV1,
       "shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"},
      {R"({"shape": [{"utilization": 1, "score": 11}]})", kV1,
       "shape[0].score: Invalid value: 11: not in valid range [0, 10]"},
      {R"({"shape": [{"utilization": 1, "weight": 1}]})", kV1, "shape[0].weight: unknown field"},
      {R"({"shape": {}})", kV1, "shape: expected array, got object"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.text, row.version);
    auto r = decode(row.text, row.version);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains(row.error));
  }
  std::string many = R"({"shape": [)";
  for (int i = 0; i < 101; ++i)
    many += (i ? "," : "") + std::string(R"({"utilization": 1})");
  many += "]}";
  auto r = decode(many, kV1);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("must have at most 100 items"));
}

TEST_CASE("volumebinding: the registry entry builds the plugin and declares the storage kinds",
          "[scheduler][volumebinding]") {
  koord::roles::scheduler::PluginRegistry registry;
  koord::roles::scheduler::upstream::registerVolumeBinding(registry);
  const auto* factory = registry.find("VolumeBinding");
  REQUIRE(factory != nullptr);
  std::vector<std::string> keys;
  for (const auto& d : factory->objects)
    keys.push_back(d.key);
  CHECK(keys == std::vector<std::string>{std::string(storage::kPersistentVolumes),
                                         std::string(storage::kPersistentVolumeClaims),
                                         std::string(storage::kStorageClasses),
                                         std::string(storage::kCSINodes)});
  auto args = factory->decode_args(nullptr, kV1);
  REQUIRE(args);
  Env env;
  auto plugin = factory->create(*args, env.handle);
  REQUIRE(plugin);
  using namespace koord::roles::scheduler;
  CHECK(dynamic_cast<PreFilterPlugin*>(plugin->get()) != nullptr);
  CHECK(dynamic_cast<FilterPlugin*>(plugin->get()) != nullptr);
  CHECK(dynamic_cast<ReservePlugin*>(plugin->get()) != nullptr);
  CHECK(dynamic_cast<PreBindPlugin*>(plugin->get()) != nullptr);
  CHECK(dynamic_cast<ScorePlugin*>(plugin->get()) == nullptr);
  // Built without any storage source declared, it holds nothing and refuses claims plainly.
  koord::roles::scheduler::testkit::FakeHandle bare;
  auto lone = factory->create(*args, bare);
  REQUIRE(lone);
  CycleState state;
  Status s = dynamic_cast<PreFilterPlugin&>(**lone).preFilter(state, podWithClaims("p", {"c"}));
  CHECK(s.message() == R"(persistentvolumeclaim "c" not found)");
}

}  // namespace
}  // namespace vb_test
