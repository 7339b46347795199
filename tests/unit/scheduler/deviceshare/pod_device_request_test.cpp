#include "plugins/deviceshare/pod_device_request.h"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "catch_expected.h"
#include "device_fixtures.h"
#include "koord/apis/device.h"

using namespace koord;
using namespace koord::roles::scheduler;
using namespace koord::roles::scheduler::deviceshare;
using namespace koord::roles::scheduler::deviceshare::testing;

namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

kube::ResourceList listOf(const Entries& entries) {
  kube::ResourceList out;
  for (const auto& [name, value] : entries)
    out.emplace(name, kube::Quantity::parse(value).value());
  return out;
}

}  // namespace

TEST_CASE("pod device requests: normalised as Koordinator converts them",
          "[scheduler][deviceshare]") {
  struct Case {
    std::string name;
    Entries requests;
    DeviceType type;
    Entries want;  // the normalised request of `type`, as resource names
  };
  const std::vector<Case> cases{
      {"nvidia.com/gpu: whole cards as percent",
       {{"nvidia.com/gpu", "2"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-core", "200"}, {"koordinator.sh/gpu-memory-ratio", "200"}}},
      {"dcu.com/gpu likewise",
       {{"dcu.com/gpu", "1"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-core", "100"}, {"koordinator.sh/gpu-memory-ratio", "100"}}},
      {"koordinator.sh/gpu: core and ratio of the same amount",
       {{"koordinator.sh/gpu", "50"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-core", "50"}, {"koordinator.sh/gpu-memory-ratio", "50"}}},
      {"gpu-memory-ratio alone takes no core",
       {{"koordinator.sh/gpu-memory-ratio", "50"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-memory-ratio", "50"}}},
      {"gpu-memory alone",
       {{"koordinator.sh/gpu-memory", "8Gi"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-memory", "8Gi"}}},
      {"gpu-core with gpu-memory",
       {{"koordinator.sh/gpu-core", "200"}, {"koordinator.sh/gpu-memory", "64Gi"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-core", "200"}, {"koordinator.sh/gpu-memory", "64Gi"}}},
      {"gpu-core with gpu-memory-ratio: no need to agree",
       {{"koordinator.sh/gpu-core", "100"}, {"koordinator.sh/gpu-memory-ratio", "200"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-core", "100"}, {"koordinator.sh/gpu-memory-ratio", "200"}}},
      {"deprecated kubernetes.io/ names count",
       {{"kubernetes.io/gpu-core", "50"}, {"kubernetes.io/gpu-memory-ratio", "50"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-core", "50"}, {"koordinator.sh/gpu-memory-ratio", "50"}}},
      {"rdma share",
       {{"koordinator.sh/rdma", "1"}},
       DeviceType::kRDMA,
       {{"koordinator.sh/rdma", "1"}}},
      {"fpga whole devices",
       {{"koordinator.sh/fpga", "200"}},
       DeviceType::kFPGA,
       {{"koordinator.sh/fpga", "200"}}},
      {"gpu.shared with gpu-memory-ratio (Koordinator v1.6)",
       {{"koordinator.sh/gpu.shared", "2"}, {"koordinator.sh/gpu-memory-ratio", "100"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-memory-ratio", "100"}}},
      {"gpu.shared with gpu-core and gpu-memory",
       {{"koordinator.sh/gpu.shared", "2"},
        {"koordinator.sh/gpu-core", "100"},
        {"koordinator.sh/gpu-memory", "16Gi"}},
       DeviceType::kGPU,
       {{"koordinator.sh/gpu-core", "100"}, {"koordinator.sh/gpu-memory", "16Gi"}}},
      {"other resources are no device request",
       {{"cpu", "4"}, {"memory", "8Gi"}, {"koordinator.sh/rdma", "100"}},
       DeviceType::kRDMA,
       {{"koordinator.sh/rdma", "100"}}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    auto got = podDeviceRequests(Resource::fromList(listOf(c.requests)));
    REQUIRE(got.has_value());
    CHECK(got->types == (1u << static_cast<unsigned>(c.type)));
    CHECK(got->of(c.type).toList() == listOf(c.want));
  }
}

TEST_CASE("pod device requests: none", "[scheduler][deviceshare]") {
  for (const Entries& e : std::vector<Entries>{{}, {{"cpu", "1"}}, {{"nvidia.com/gpu", "0"}}}) {
    auto got = podDeviceRequests(Resource::fromList(listOf(e)));
    REQUIRE(got.has_value());
    CHECK(got->empty());
  }
}

TEST_CASE("pod device requests: several types at once", "[scheduler][deviceshare]") {
  auto got = podDeviceRequests(Resource::fromList(listOf(
      {{"nvidia.com/gpu", "1"}, {"koordinator.sh/rdma", "1"}, {"koordinator.sh/fpga", "100"}})));
  REQUIRE(got.has_value());
  CHECK(got->has(DeviceType::kGPU));
  CHECK(got->has(DeviceType::kRDMA));
  CHECK(got->has(DeviceType::kFPGA));
  CHECK(got->of(DeviceType::kRDMA).get(DeviceResource::kRDMA) == 1);
}

TEST_CASE("pod device requests: validation errors in Koordinator's words",
          "[scheduler][deviceshare]") {
  struct Case {
    Entries requests;
    std::string error;
  };
  const std::vector<Case> cases{
      {{{"koordinator.sh/gpu-core", "101"}}, "invalid resource unit koordinator.sh/gpu-core: 101"},
      {{{"koordinator.sh/gpu", "101"}}, "invalid resource unit koordinator.sh/gpu: 101"},
      {{{"koordinator.sh/gpu-core", "100"}, {"koordinator.sh/gpu-memory-ratio", "101"}},
       "invalid resource unit koordinator.sh/gpu-memory-ratio: 101"},
      {{{"koordinator.sh/fpga", "201"}}, "invalid resource unit koordinator.sh/fpga: 201"},
      {{{"koordinator.sh/rdma", "201"}}, "invalid resource unit koordinator.sh/rdma: 201"},
      {{{"nvidia.com/gpu", "2"},
        {"koordinator.sh/gpu", "200"},
        {"koordinator.sh/gpu-core", "200"},
        {"koordinator.sh/gpu-memory", "32Gi"},
        {"koordinator.sh/gpu-memory-ratio", "200"}},
       "invalid resource device requests: [koordinator.sh/gpu koordinator.sh/gpu-core "
       "koordinator.sh/gpu-memory koordinator.sh/gpu-memory-ratio nvidia.com/gpu]"},
      {{{"nvidia.com/gpu", "1"}, {"koordinator.sh/gpu-core", "50"}},
       "invalid resource device requests: [koordinator.sh/gpu-core nvidia.com/gpu]"},
      {{{"koordinator.sh/gpu-core", "50"}},
       "invalid resource device requests: [koordinator.sh/gpu-core]"},
      {{{"koordinator.sh/gpu-memory", "8Gi"}, {"koordinator.sh/gpu-memory-ratio", "50"}},
       "invalid resource device requests: [koordinator.sh/gpu-memory "
       "koordinator.sh/gpu-memory-ratio]"},
      // gpu.shared needs memory; core and ratio split evenly, at most a card per share.
      {{{"koordinator.sh/gpu.shared", "1"}},
       "invalid resource device requests: [koordinator.sh/gpu.shared]"},
      {{{"koordinator.sh/gpu.shared", "2"}, {"koordinator.sh/gpu-memory-ratio", "75"}},
       "invalid resource device requests: [koordinator.sh/gpu-memory-ratio "
       "koordinator.sh/gpu.shared]"},
      {{{"koordinator.sh/gpu.shared", "2"},
        {"koordinator.sh/gpu-core", "300"},
        {"koordinator.sh/gpu-memory-ratio", "100"}},
       "invalid resource device requests: [koordinator.sh/gpu-core "
       "koordinator.sh/gpu-memory-ratio koordinator.sh/gpu.shared]"},
      {{{"koordinator.sh/gpu.shared", "1"}, {"nvidia.com/gpu", "1"}},
       "invalid resource device requests: [koordinator.sh/gpu.shared nvidia.com/gpu]"},
  };
  for (const Case& c : cases) {
    INFO(c.error);
    auto got = podDeviceRequests(Resource::fromList(listOf(c.requests)));
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error().message == c.error);
  }
}

TEST_CASE("pod device requests: the deprecated names are Koordinator's",
          "[scheduler][deviceshare]") {
  for (std::string_view name :
       {"gpu", "gpu-core", "gpu-memory", "gpu-memory-ratio", "rdma", "fpga"}) {
    const std::string old_name = "kubernetes.io/" + std::string(name);
    INFO(old_name);
    CHECK(apis::deprecatedDeviceResourceReplacement(old_name) ==
          "koordinator.sh/" + std::string(name));
    // gpu-core alone is no valid request: it goes with a ratio.
    Entries entries{{old_name, "100"}};
    if (name == "gpu-core")
      entries.emplace_back("koordinator.sh/gpu-memory-ratio", "100");
    auto got = podDeviceRequests(Resource::fromList(listOf(entries)));
    REQUIRE(got.has_value());
    CHECK_FALSE(got->empty());
  }
  CHECK(apis::deprecatedDeviceResourceReplacement("kubernetes.io/batch-cpu").empty());
}

TEST_CASE("pod device requests: gpu.shared and what counts as sharing a GPU",
          "[scheduler][deviceshare]") {
  auto shared = podDeviceRequests(Resource::fromList(
      listOf({{"koordinator.sh/gpu.shared", "2"}, {"koordinator.sh/gpu-memory-ratio", "100"}})));
  REQUIRE(shared.has_value());
  CHECK(shared->gpu_shared == 2);
  CHECK(shared->sharesGpu());
  const std::vector<std::pair<Entries, bool>> cases = {
      {{{"koordinator.sh/gpu-memory-ratio", "50"}}, true},
      {{{"koordinator.sh/gpu-memory", "8Gi"}}, true},
      {{{"koordinator.sh/gpu-memory-ratio", "200"}}, false},
      {{{"nvidia.com/gpu", "1"}}, false},
      {{{"koordinator.sh/rdma", "50"}}, false},
  };
  for (const auto& [entries, sharing] : cases) {
    auto got = podDeviceRequests(Resource::fromList(listOf(entries)));
    REQUIRE(got.has_value());
    CHECK(got->gpu_shared == 0);
    CHECK(got->sharesGpu() == sharing);
  }
}

TEST_CASE("pod device requests: Huawei NPUs, whole and as vNPU slices (Koordinator v1.8)",
          "[scheduler][deviceshare]") {
  const Entries vnpu{{"koordinator.sh/gpu.shared", "1"},
                     {"huawei.com/npu-core", "2"},
                     {"huawei.com/npu-cpu", "1"},
                     {"huawei.com/npu-dvpp", "25"},
                     {"koordinator.sh/gpu-memory", "6Gi"}};
  auto slice = podDeviceRequests(Resource::fromList(listOf(vnpu)));
  REQUIRE(slice.has_value());
  CHECK(slice->sharesGpu());
  CHECK(slice->of(DeviceType::kGPU).namesNpu());
  CHECK(slice->perGpu().toList() == listOf({{"huawei.com/npu-core", "2"},
                                            {"huawei.com/npu-cpu", "1"},
                                            {"huawei.com/npu-dvpp", "25"},
                                            {"koordinator.sh/gpu-memory", "6Gi"}}));

  // Two whole NPUs: the cores split over them, as calcDesiredRequestsAndCountForGPU does.
  auto whole = podDeviceRequests(Resource::fromList(
      listOf({{"huawei.com/npu-core", "16"}, {"koordinator.sh/gpu-memory-ratio", "200"}})));
  REQUIRE(whole.has_value());
  CHECK_FALSE(whole->sharesGpu());
  CHECK(whole->perGpu().toList() ==
        listOf({{"huawei.com/npu-core", "8"}, {"koordinator.sh/gpu-memory-ratio", "100"}}));

  struct Refused {
    Entries requests;
    std::string error;
  };
  const std::vector<Refused> refused{
      // A vNPU is a slice of one NPU.
      {{{"koordinator.sh/gpu.shared", "2"},
        {"huawei.com/npu-core", "2"},
        {"huawei.com/npu-cpu", "1"},
        {"koordinator.sh/gpu-memory", "6Gi"}},
       "invalid resource device requests: [huawei.com/npu-core huawei.com/npu-cpu "
       "koordinator.sh/gpu-memory koordinator.sh/gpu.shared]"},
      {{{"koordinator.sh/gpu.shared", "1"},
        {"huawei.com/npu-core", "2"},
        {"huawei.com/npu-cpu", "1"},
        {"huawei.com/npu-dvpp", "101"},
        {"koordinator.sh/gpu-memory", "6Gi"}},
       "invalid resource device requests: [huawei.com/npu-core huawei.com/npu-cpu "
       "huawei.com/npu-dvpp koordinator.sh/gpu-memory koordinator.sh/gpu.shared]"},
      // npu-cpu goes only with a slice.
      {{{"huawei.com/npu-cpu", "1"}, {"koordinator.sh/gpu-memory-ratio", "50"}},
       "invalid resource device requests: [huawei.com/npu-cpu koordinator.sh/gpu-memory-ratio]"},
  };
  for (const Refused& c : refused) {
    INFO(c.error);
    auto got = podDeviceRequests(Resource::fromList(listOf(c.requests)));
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error().message == c.error);
  }
}
