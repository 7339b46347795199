#include <catch2/catch.hpp>

#include "koord/cgroup/resource_executor.h"
#include "role_fixture.h"
#include "runtimehooks/batchresource/batch_resource.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using koord::testing::TempTree;

namespace {

const char* kUid = "6e2b5f4e-2c6a-4f0c-9a51-2d8a1c0f3b7e";

PodMeta bePod() {
  return testing::batchResourcePod("spark", "exec", kUid);
}

}  // namespace

TEST_CASE("Koordinator's share and quota conversions") {
  CHECK(milliCPUToShares(0) == 2);
  CHECK(milliCPUToShares(1) == 2);
  CHECK(milliCPUToShares(1000) == 1024);
  CHECK(milliCPUToShares(1'000'000) == 262144);
  CHECK(milliCPUToQuota(0) == -1);
  CHECK(milliCPUToQuota(5) == 1000);
  CHECK(milliCPUToQuota(2500) == 250000);
}

TEST_CASE("the plan: pod sums, per-container values, unlimited once one is unlimited") {
  auto plan = planBatchResource(bePod());
  REQUIRE(plan);
  CHECK(plan->pod.cpu_shares == 1536);
  CHECK(plan->pod.cfs_quota == 250000);
  CHECK(plan->pod.memory_limit == (2LL << 30) + (512LL << 20));
  REQUIRE(plan->containers.size() == 2);
  CHECK(plan->containers[0].cpu_shares == 1024);
  CHECK(plan->containers[0].cfs_quota == 200000);
  CHECK(plan->containers[1].memory_limit == 512LL << 20);

  auto p = bePod();
  p.containers[1].limits.erase("kubernetes.io/batch-cpu");
  auto unlimited = planBatchResource(p);
  REQUIRE(unlimited);
  CHECK(unlimited->pod.cfs_quota == -1);
  CHECK(unlimited->containers[1].cfs_quota == -1);
  CHECK(unlimited->containers[0].cfs_quota == 200000);

  auto ls = bePod();
  ls.labels.clear();
  CHECK_FALSE(planBatchResource(ls));  // not koord BE: the kubelet's values stay
  auto plain = bePod();
  for (auto& c : plain.containers)
    c.requests.clear(), c.limits.clear();
  CHECK_FALSE(planBatchResource(plain));  // BE without batch resources
}

TEST_CASE("huge batch limits saturate to a valid quota instead of wrapping negative") {
  // "1E" milli-cores times the period used to wrap the quota negative: an unthrottled BE pod.
  CHECK(milliCPUToQuota(std::int64_t{1'000'000'000'000'000'000}) == kMaxCFSQuota);
  CHECK(milliCPUToQuota(INT64_MAX) == kMaxCFSQuota);
  CHECK(milliCPUToQuota(8192 * 1000) == kMaxCFSQuota);
  CHECK(milliCPUToQuota(8192 * 1000 - 1) == kMaxCFSQuota - 100);
  CHECK(milliCPUToShares(INT64_MAX) == 262144);

  auto p = bePod();
  for (auto& c : p.containers) {
    c.requests["kubernetes.io/batch-cpu"] = koord::kube::Quantity::parse("1E").value();
    c.limits["kubernetes.io/batch-cpu"] = koord::kube::Quantity::parse("1E").value();
    c.limits["kubernetes.io/batch-memory"] = koord::kube::Quantity::parse("8Ei").value();
  }
  auto plan = planBatchResource(p);
  REQUIRE(plan);
  for (const CgroupValues& v : plan->containers) {
    CHECK(v.cfs_quota == kMaxCFSQuota);
    CHECK(v.cpu_shares == 262144);
    CHECK(v.memory_limit > 0);
  }
  // The pod's sums of two such containers stay at the bounds too.
  CHECK(plan->pod.cfs_quota == kMaxCFSQuota);
  CHECK(plan->pod.cpu_shares == 262144);
  CHECK(plan->pod.memory_limit == INT64_MAX);
}

TEST_CASE("applied to the pod's and containers' cgroups, v1 and v2") {
  auto pod = bePod();
  auto plan = planBatchResource(pod).value();
  {
    TempTree t("koord-batch");
    const std::string dir = std::string("kubepods/besteffort/pod") + kUid;
    for (const std::string& d :
         {dir, dir + "/" + std::string(64, 'a'), dir + "/" + std::string(64, 'b')}) {
      t.write("cpu/" + d + "/cpu.shares", "2");
      t.write("cpu/" + d + "/cpu.cfs_quota_us", "-1");
      t.write("memory/" + d + "/memory.limit_in_bytes", "9223372036854771712");
    }
    koord::cgroup::ResourceExecutor e(
        {t.root(), koord::cgroup::CgroupVersion::kV1, koord::cgroup::CgroupDriver::kCgroupfs});
    auto stats = applyBatchResource(e, pod, plan);
    CHECK(stats.errors.empty());
    CHECK(stats.written == 9);
    CHECK(t.read("cpu/" + dir + "/cpu.shares") == "1536");
    CHECK(t.read("cpu/" + dir + "/cpu.cfs_quota_us") == "250000");
    CHECK(t.read("memory/" + dir + "/" + std::string(64, 'b') + "/memory.limit_in_bytes") ==
          std::to_string(512LL << 20));
    auto again = applyBatchResource(e, pod, plan);
    CHECK(again.written == 0);
    CHECK(again.unchanged == 9);
  }
  {
    TempTree t("koord-batch");
    t.write("cgroup.controllers", "cpu memory");
    const std::string dir = std::string("kubepods.slice/kubepods-besteffort.slice/") +
                            "kubepods-besteffort-pod6e2b5f4e_2c6a_4f0c_9a51_2d8a1c0f3b7e.slice";
    t.write(dir + "/cpu.weight", "1");
    t.write(dir + "/cpu.max", "max 100000");
    t.write(dir + "/memory.max", "max");
    koord::cgroup::ResourceExecutor e(
        {t.root(), koord::cgroup::CgroupVersion::kV2, koord::cgroup::CgroupDriver::kSystemd});
    auto stats = applyBatchResource(e, pod, plan);
    CHECK(t.read(dir + "/cpu.weight") == "59");
    CHECK(t.read(dir + "/cpu.max") == "250000 100000");
    // The container scopes are not there: each is an error naming its file, the pod still set.
    CHECK(stats.errors.size() == 6);
    CHECK(stats.errors[0].find("cri-containerd-") != std::string::npos);
  }
}
