// GPU shared-resource templates: data.yaml as Koordinator's chart ships it, strict matching of a
// request per GPU, refusals naming the fault, and the ConfigMap projection the informer keeps.
#include "plugins/deviceshare/gpu_shared_resource_templates.h"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "koord/kube/yaml_json.h"
#include "plugins/deviceshare/args.h"
#include "plugins/deviceshare/device_resources.h"

using namespace koord;
using namespace koord::roles::scheduler::deviceshare;

namespace {

// Two models as Koordinator v1.8's chart lists them (a subset of its templates).
constexpr std::string_view kData = R"(huawei-Ascend-310P3:
  vir01:
    huawei.com/npu-core: "1"
    huawei.com/npu-cpu: "1"
    huawei.com/npu-dvpp: "12"
    koordinator.sh/gpu-memory: 3Gi
  vir04_3c:
    huawei.com/npu-core: "4"
    huawei.com/npu-cpu: "3"
    huawei.com/npu-dvpp: "50"
    koordinator.sh/gpu-memory: 12Gi
  vir04_3c_ndvpp:
    huawei.com/npu-core: "4"
    huawei.com/npu-cpu: "3"
    koordinator.sh/gpu-memory: 12Gi
huawei-Ascend-910:
  vir04:
    huawei.com/npu-core: 4
    huawei.com/npu-cpu: 1
    koordinator.sh/gpu-memory: 4Gi
)";

DeviceResources slice(std::int64_t core, std::int64_t cpu, std::optional<std::int64_t> dvpp,
                      std::int64_t memory_gi) {
  DeviceResources r;
  r.set(DeviceResource::kNPUCore, core);
  r.set(DeviceResource::kNPUCPU, cpu);
  if (dvpp)
    r.set(DeviceResource::kNPUDVPP, *dvpp);
  r.set(DeviceResource::kGPUMemory, memory_gi << 30);
  return r;
}

}  // namespace

TEST_CASE("gpu shared-resource templates: a request matches the templates it equals",
          "[scheduler][deviceshare]") {
  auto templates = GpuSharedResourceTemplates::parse(kData);
  REQUIRE(templates.has_value());
  CHECK(templates->modelCount() == 2);

  const TemplateCandidates vir01 = templates->match(slice(1, 1, 12, 3));
  REQUIRE(vir01.by_model.size() == 1);
  const auto* names = vir01.find(templatesKey("huawei", "Ascend-310P3"));
  REQUIRE(names != nullptr);
  CHECK(*names == std::vector<std::string>{"vir01"});
  CHECK(vir01.find(templatesKey("huawei", "Ascend-910")) == nullptr);

  // Without npu-dvpp the slice is another template; numbers written unquoted read the same.
  CHECK(*templates->match(slice(4, 3, std::nullopt, 12)).find("huawei-Ascend-310P3") ==
        std::vector<std::string>{"vir04_3c_ndvpp"});
  CHECK(*templates->match(slice(4, 1, std::nullopt, 4)).find("huawei-Ascend-910") ==
        std::vector<std::string>{"vir04"});

  // Strict: an amount off by one, a resource more or less, match nothing.
  CHECK(templates->match(slice(1, 1, 12, 4)).empty());
  CHECK(templates->match(slice(1, 1, std::nullopt, 3)).empty());
  DeviceResources more = slice(1, 1, 12, 3);
  more.set(DeviceResource::kGPUCore, 10);
  CHECK(templates->match(more).empty());
}

TEST_CASE("gpu shared-resource templates: a template naming other resources matches nothing",
          "[scheduler][deviceshare]") {
  auto templates = GpuSharedResourceTemplates::parse(R"(huawei-Ascend-310P3:
  odd:
    huawei.com/npu-core: "1"
    example.com/other: "1"
)");
  REQUIRE(templates.has_value());
  DeviceResources core;
  core.set(DeviceResource::kNPUCore, 1);
  CHECK(templates->match(core).empty());
}

TEST_CASE("gpu shared-resource templates: malformed data is refused with the path",
          "[scheduler][deviceshare]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"[1, 2]", "data.yaml: expected object"},
      {"huawei-Ascend-310P3: [1]", "data.yaml.huawei-Ascend-310P3: expected object"},
      {"huawei-Ascend-310P3:\n  vir01:\n    huawei.com/npu-core: lots\n",
       "data.yaml.huawei-Ascend-310P3.vir01[huawei.com/npu-core]"},
      {"a: {b: 1", "data.yaml:"},
  };
  for (const auto& [data, want] : cases) {
    INFO(data);
    auto got = GpuSharedResourceTemplates::parse(data);
    REQUIRE_FALSE(got.has_value());
    CHECK_THAT(got.error().message, Catch::Contains(want));
  }
  std::string many;
  for (std::size_t i = 0; i <= kMaxTemplateModels; ++i)
    many += "m" + std::to_string(i) + ": {}\n";
  auto too_many = GpuSharedResourceTemplates::parse(many);
  REQUIRE_FALSE(too_many.has_value());
  CHECK_THAT(too_many.error().message, Catch::Contains("more than 256 models"));
  // An empty ConfigMap holds no templates.
  auto empty = GpuSharedResourceTemplates::parse("");
  REQUIRE(empty.has_value());
  CHECK(empty->modelCount() == 0);
}

TEST_CASE("gpu shared-resource templates: the ConfigMap projection keeps data.yaml alone",
          "[scheduler][deviceshare]") {
  auto with = decodeTemplatesConfigMap(boost::json::parse(
      R"({"metadata":{"namespace":"koordinator-system","name":"gpu-shared-resource-templates"},
          "data":{"data.yaml":"a: {}","other":"big"}})"));
  REQUIRE(with.has_value());
  CHECK(with->namespace_ == "koordinator-system");
  CHECK(with->name == "gpu-shared-resource-templates");
  CHECK(with->data_yaml == std::optional<std::string>("a: {}"));

  auto without = decodeTemplatesConfigMap(
      boost::json::parse(R"({"metadata":{"namespace":"default","name":"x"},"data":{"k":"v"}})"));
  REQUIRE(without.has_value());
  CHECK_FALSE(without->data_yaml.has_value());

  auto bad = decodeTemplatesConfigMap(
      boost::json::parse(R"({"metadata":{"name":"x"},"data":{"data.yaml":7}})"));
  REQUIRE_FALSE(bad.has_value());
  CHECK_THAT(bad.error().message, Catch::Contains("data.data.yaml"));
}

TEST_CASE("gpu shared-resource templates: the chart's ConfigMap parses and matches",
          "[scheduler][deviceshare]") {
  std::ifstream in(KOORD_TEMPLATES_CONFIG_MAP);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  auto object = kube::yamlToJson(text.str());
  REQUIRE(object.has_value());
  auto config_map = decodeTemplatesConfigMap(*object);
  REQUIRE(config_map.has_value());
  CHECK(config_map->name == defaultGpuSharedResourceTemplatesConfig().config_map_name);
  CHECK(config_map->namespace_ == defaultGpuSharedResourceTemplatesConfig().config_map_namespace);
  REQUIRE(config_map->data_yaml.has_value());
  auto templates = GpuSharedResourceTemplates::parse(*config_map->data_yaml);
  REQUIRE(templates.has_value());
  CHECK(templates->modelCount() == 8);
  CHECK(*templates->match(slice(1, 1, 12, 3)).find("huawei-Ascend-310P3") ==
        std::vector<std::string>{"vir01"});
  CHECK(*templates->match(slice(10, 4, 100, 16)).find("huawei-Ascend-910B4") ==
        std::vector<std::string>{"vir10_4c_16g_m"});
}
