#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

#include "catch_expected.h"
#include "statesinformer/host_application.h"
#include "statesinformer/node_info.h"

using namespace koord::roles::koordlet;
namespace json = boost::json;
using koord::apis::PriorityClass;
using koord::apis::QoSClass;
using koord::cgroup::CgroupDriver;

namespace {

HostApplications decode(std::string_view array_json) {
  auto v = json::parse(array_json);
  return decodeHostApplications(&v);
}

const HostApplication* findApp(const HostApplications& h, std::string_view name) {
  auto it = std::find_if(h.apps.begin(), h.apps.end(),
                         [&](const HostApplication& a) { return a.name == name; });
  return it == h.apps.end() ? nullptr : &*it;
}

const SkippedHostApplication* findSkipped(const HostApplications& h, std::string_view key) {
  auto it = std::find_if(h.skipped.begin(), h.skipped.end(),
                         [&](const SkippedHostApplication& s) { return s.key == key; });
  return it == h.skipped.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("host applications: without cgroupPath the directory follows the QoS") {
  auto h = decode(R"([
    {"name": "nginx", "priority": "koord-prod", "qos": "LS"},
    {"name": "redis", "qos": "LSR"},
    {"name": "dpdk", "qos": "LSE"},
    {"name": "backup", "priority": "koord-batch", "qos": "BE"},
    {"name": "sshd", "qos": "SYSTEM"},
    {"name": "plain"}
  ])");
  REQUIRE(h.skipped.empty());
  REQUIRE(h.apps.size() == 6);
  const auto* nginx = findApp(h, "nginx");
  REQUIRE(nginx != nullptr);
  CHECK(nginx->priority == PriorityClass::kProd);
  CHECK(nginx->qos == QoSClass::kLS);
  CHECK_FALSE(nginx->has_cgroup_path);
  CHECK_FALSE(nginx->under_kube_besteffort);
  for (auto driver : {CgroupDriver::kCgroupfs, CgroupDriver::kSystemd}) {
    CHECK(hostAppCgroupDir(driver, *nginx) == "host-latency-sensitive/nginx");
    CHECK(hostAppCgroupDir(driver, *findApp(h, "redis")) == "host-latency-sensitive/redis");
    CHECK(hostAppCgroupDir(driver, *findApp(h, "dpdk")) == "host-latency-sensitive/dpdk");
    CHECK(hostAppCgroupDir(driver, *findApp(h, "backup")) == "host-best-effort/backup");
    CHECK(hostAppCgroupDir(driver, *findApp(h, "sshd")) == "sshd");
    CHECK(hostAppCgroupDir(driver, *findApp(h, "plain")) == "plain");
  }
  // A BE app outside the kubelet's besteffort cgroup is not under it.
  CHECK(findApp(h, "backup")->priority == PriorityClass::kBatch);
  CHECK_FALSE(findApp(h, "backup")->under_kube_besteffort);
}

TEST_CASE("host applications: cgroupPath joins base, parentDir and relativePath per driver") {
  auto h = decode(R"([
    {"name": "nginx", "qos": "LS", "cgroupPath": {"base": "CgroupRoot",
      "parentDir": "host-latency-sensitive/", "relativePath": "nginx/"}},
    {"name": "spark", "qos": "BE", "cgroupPath": {"base": "KubepodsBesteffort",
      "parentDir": "/host/", "relativePath": "spark"}},
    {"name": "agent", "qos": "LS", "cgroupPath": {"base": "KubepodsBurstable",
      "relativePath": "agent@1.x"}},
    {"name": "kp", "cgroupPath": {"base": "Kubepods", "parentDir": "system/kp"}},
    {"name": "nobase", "cgroupPath": {"relativePath": "/a/b/"}}
  ])");
  REQUIRE(h.skipped.empty());
  REQUIRE(h.apps.size() == 5);
  CHECK(hostAppCgroupDir(CgroupDriver::kCgroupfs, *findApp(h, "nginx")) ==
        "host-latency-sensitive/nginx");
  const auto* spark = findApp(h, "spark");
  REQUIRE(spark != nullptr);
  CHECK(spark->under_kube_besteffort);
  CHECK(spark->base == HostAppCgroupBase::kKubepodsBesteffort);
  CHECK(hostAppCgroupDir(CgroupDriver::kCgroupfs, *spark) == "kubepods/besteffort/host/spark");
  CHECK(hostAppCgroupDir(CgroupDriver::kSystemd, *spark) ==
        "kubepods.slice/kubepods-besteffort.slice/host/spark");
  CHECK(hostAppCgroupDir(CgroupDriver::kCgroupfs, *findApp(h, "agent")) ==
        "kubepods/burstable/agent@1.x");
  CHECK_FALSE(findApp(h, "agent")->under_kube_besteffort);
  CHECK(hostAppCgroupDir(CgroupDriver::kSystemd, *findApp(h, "kp")) == "kubepods.slice/system/kp");
  CHECK(hostAppCgroupDir(CgroupDriver::kCgroupfs, *findApp(h, "nobase")) == "a/b");
}

TEST_CASE("host applications: a bad entry is skipped with its reason, the others kept") {
  auto h = decode(R"([
    {"name": "good", "qos": "LS"},
    {"name": "escape", "cgroupPath": {"parentDir": "../../etc"}},
    {"name": "dot", "cgroupPath": {"relativePath": "a/./b"}},
    {"name": "star", "cgroupPath": {"relativePath": "a*b"}},
    {"name": "double", "cgroupPath": {"parentDir": "a//b"}},
    {"name": "empty", "cgroupPath": {"base": "Kubepods", "parentDir": "/", "relativePath": ""}},
    {"name": "base", "cgroupPath": {"base": "Elsewhere", "relativePath": "x"}},
    {"name": "typed", "cgroupPath": {"relativePath": 7}},
    {"name": "", "qos": "LS"},
    {"name": "../x"},
    {"qos": "BE"},
    "not an object",
    {"name": "good", "qos": "BE"}
  ])");
  REQUIRE(h.apps.size() == 1);
  CHECK(h.apps[0].name == "good");
  CHECK(h.apps[0].qos == QoSClass::kLS);  // the first of a repeated name wins
  CHECK(h.skipped.size() == 12);

  auto reason = [&](std::string_view key) {
    const auto* s = findSkipped(h, key);
    return s == nullptr ? std::string("<not skipped>") : s->reason;
  };
  CHECK_THAT(reason("escape"), Catch::Contains("spec.hostApplications[1]") &&
                                   Catch::Contains("parentDir") && Catch::Contains("\"..\""));
  CHECK_THAT(reason("dot"), Catch::Contains("relativePath") && Catch::Contains("\".\""));
  CHECK_THAT(reason("star"), Catch::Contains("outside [A-Za-z0-9._@-]"));
  CHECK_THAT(reason("double"), Catch::Contains("empty component"));
  CHECK_THAT(reason("empty"), Catch::Contains("neither parentDir nor relativePath"));
  CHECK_THAT(reason("base"), Catch::Contains("\"Elsewhere\""));
  CHECK_THAT(reason("typed"), Catch::Contains("cgroupPath.relativePath"));
  CHECK_THAT(reason("hostApplications[8]"), Catch::Contains("name: empty"));
  // A name that is not a component never becomes the key: it could be anything.
  CHECK_THAT(reason("hostApplications[9]"), Catch::Contains("\"../x\""));
  CHECK_THAT(reason("hostApplications[10]"), Catch::Contains("name: empty"));
  CHECK_THAT(reason("hostApplications[11]"), Catch::Contains("expected object"));
  CHECK_THAT(reason("good"), Catch::Contains("repeats"));
}

TEST_CASE("host applications: a component over NAME_MAX is refused without echoing it") {
  json::array list{json::object{{"name", std::string(256, 'a')}},
                   json::object{{"name", "long"},
                                {"cgroupPath", {{"relativePath", "x/" + std::string(300, 'b')}}}},
                   json::object{{"name", std::string(255, 'c')}}};
  json::value v = list;
  auto h = decodeHostApplications(&v);
  REQUIRE(h.apps.size() == 1);
  CHECK(h.apps[0].name.size() == 255);
  REQUIRE(h.skipped.size() == 2);
  CHECK(h.skipped[0].key == "hostApplications[0]");
  CHECK_THAT(h.skipped[0].reason, Catch::Contains("256 bytes, over 255"));
  CHECK(h.skipped[0].reason.find(std::string(256, 'a')) == std::string::npos);
  CHECK(h.skipped[1].key == "long");
  CHECK_THAT(h.skipped[1].reason, Catch::Contains("300 bytes"));
}

TEST_CASE("NodeSLO: bad host applications do not fail the rest of the spec") {
  auto slo = decodeNodeSLOInfo(json::parse(R"({
    "metadata": {"name": "node-a"},
    "spec": {
      "resourceUsedThresholdWithBE": {"enable": true, "cpuSuppressThresholdPercent": 65},
      "hostApplications": [
        {"name": "nginx", "priority": "koord-prod", "qos": "LS"},
        {"name": "evil", "cgroupPath": {"base": "CgroupRoot", "parentDir": "..", "relativePath": "etc"}}
      ]
    }
  })"));
  REQUIRE(slo);
  CHECK(slo->name == "node-a");
  REQUIRE(slo->resource_used_threshold_with_be != nullptr);
  CHECK(slo->resource_used_threshold_with_be->at("cpuSuppressThresholdPercent") == 65);
  REQUIRE(slo->host_applications.apps.size() == 1);
  CHECK(slo->host_applications.apps[0].name == "nginx");
  REQUIRE(slo->host_applications.skipped.size() == 1);
  CHECK(slo->host_applications.skipped[0].key == "evil");

  // Not even an array: one skip, the NodeSLO still decodes.
  auto odd = decodeNodeSLOInfo(json::parse(R"({"spec": {"hostApplications": {"name": "x"}}})"));
  REQUIRE(odd);
  CHECK(odd->host_applications.apps.empty());
  REQUIRE(odd->host_applications.skipped.size() == 1);
  CHECK_THAT(odd->host_applications.skipped[0].reason, Catch::Contains("expected array"));

  auto none = decodeNodeSLOInfo(json::parse(R"({"spec": {}})"));
  REQUIRE(none);
  CHECK(none->host_applications.apps.empty());
  CHECK(none->host_applications.skipped.empty());
}
