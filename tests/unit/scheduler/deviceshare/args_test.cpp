// DeviceShareArgs as Koordinator's chart writes them, up to v1.8: the scoring strategy, NUMA
// alignment, and the gpu.shared fields accepted; unknown or mistyped fields refused by name.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "plugins/deviceshare/args.h"

namespace koord::roles::scheduler::deviceshare {
namespace {

kube::Expected<DeviceShareArgs> decode(const std::string& text) {
  const boost::json::value v = boost::json::parse(text);
  return decodeDeviceShareArgs(&v, "kubescheduler.config.k8s.io/v1");
}

}  // namespace

TEST_CASE("DeviceShareArgs: Koordinator v1.8's chart args decode", "[scheduler][deviceshare]") {
  auto a = decode(R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DeviceShareArgs",
                      "gpuShareUnsupportedModels": [
                        {"vendor": "huawei", "model": "Ascend-310P3-300I-DUO"}],
                      "gpuSharedResourceTemplatesConfig": {
                        "configMapNamespace": "koordinator-system",
                        "configMapName": "gpu-shared-resource-templates",
                        "matchedResources": ["huawei.com/npu-core"]}})");
  REQUIRE(a.has_value());
  REQUIRE(a->gpu_share_unsupported_models.size() == 1);
  CHECK(a->gpu_share_unsupported_models[0].vendor == "huawei");
  CHECK(a->gpu_share_unsupported_models[0].model == "Ascend-310P3-300I-DUO");
  REQUIRE(a->gpu_shared_resource_templates.has_value());
  CHECK(a->gpu_shared_resource_templates->config_map_name == "gpu-shared-resource-templates");
  CHECK(a->gpu_shared_resource_templates->matched_resources ==
        std::vector<std::string>{"huawei.com/npu-core"});
  auto none = decode("{}");
  REQUIRE(none.has_value());
  CHECK(none->gpu_share_unsupported_models.empty());
  CHECK_FALSE(none->gpu_shared_resource_templates.has_value());
}

TEST_CASE("DeviceShareArgs: bad gpu.shared fields are refused by name",
          "[scheduler][deviceshare]") {
  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"gpuShareUnsupportedModels": {"vendor": "x"}})", "gpuShareUnsupportedModels"},
           {R"({"gpuShareUnsupportedModels": [{"vendor": 1}]})", "vendor"},
           {R"({"gpuShareUnsupportedModels": [{"vendor": "x", "gpu": "y"}]})", "gpu"},
           {R"({"gpuSharedResourceTemplatesConfig": []})", "gpuSharedResourceTemplatesConfig"},
           {R"({"gpuSharedResourceTemplatesConfig": {"matchedResources": "a"}})",
            "matchedResources"},
           {R"({"gpuSharedTemplates": {}})", "gpuSharedTemplates"}}) {
    INFO(text);
    auto a = decode(text);
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error().message.find(field) != std::string::npos);
  }
  std::string many = R"({"gpuShareUnsupportedModels": [)";
  for (std::size_t i = 0; i <= kMaxDeviceShareArgsItems; ++i)
    many += std::string(i == 0 ? "" : ",") + R"({"vendor": "v", "model": "m"})";
  many += "]}";
  CHECK_FALSE(decode(many).has_value());
}

}  // namespace koord::roles::scheduler::deviceshare
