// deploy/'s CRDs and PriorityClasses on the real apiserver that cluster.sh starts: the
// apiserver accepts the manifests, establishes the CRDs, and objects shaped as koord writes them
// (NodeMetric status through the subresource, a NodeSLO spec from apis::nodeSLOSpec, a
// ClusterColocationProfile, a Reservation, a PodGroup, an ElasticQuota and its profile with the
// status patches koord builds, a NodeResourceTopology) come back without losing a field to
// pruning.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/apis/elastic_quota.h"
#include "koord/apis/elastic_quota_profile.h"
#include "koord/apis/node_resource_topology.h"
#include "koord/apis/pod_group.h"
#include "koord/apis/slo_config.h"
#include "koord/kube/rest_client.h"
#include "manifests.h"
#include "yaml_json.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::kube::ApiResult;
using koord::kube::PatchType;
using koord::kube::ResourceRef;
using koord::testing::deployDir;
using koord::testing::ok;
using koord::testing::str;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using koord::testing::yamlFileToJson;
using koord::testing::yamlToJson;

namespace {

using Api = koord::testing::KubeApi;
using koord::testing::named;
using namespace koord::testing::resources;

// scheduler-plugins' kinds and the quota profile, namespaced; their objects go to "default".
const ResourceRef kPodGroups{"scheduling.sigs.k8s.io", "v1alpha1", "podgroups", "default", "", ""};
const ResourceRef kElasticQuotas{
    "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas", "default", "", ""};
const ResourceRef kElasticQuotaProfiles{
    "quota.koordinator.sh", "v1alpha1", "elasticquotaprofiles", "default", "", ""};

// Discovery of a new group can lag Established by a moment; a NotFound is retried briefly.
ApiResult<json::value> createRetrying(Api& api, const ResourceRef& ref, const json::value& body) {
  ApiResult<json::value> r = api->createSync(ref, body);
  for (int i = 0; i < 50 && !r && r.error().code == 404; ++i) {
    std::this_thread::sleep_for(200ms);
    r = api->createSync(ref, body);
  }
  return r;
}

// Deletes what a test created, also when a check failed half-way.
class Cleanup {
 public:
  explicit Cleanup(Api& api) : api_(api) {}
  ~Cleanup() {
    for (const auto& ref : refs_) {
      auto r = api_->removeSync(ref);
      if (!r && !koord::kube::isNotFound(r.error()))
        WARN("deleting " << ref.resource << "/" << ref.name << ": " << r.error().message);
    }
  }
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  void add(ResourceRef ref) { refs_.push_back(std::move(ref)); }

 private:
  Api& api_;
  std::vector<ResourceRef> refs_;
};

void applyAllCRDs(Api& api) {
  for (const char* file :
       {"slo.koordinator.sh_nodemetrics.yaml", "slo.koordinator.sh_nodeslos.yaml",
        "config.koordinator.sh_clustercolocationprofiles.yaml",
        "scheduling.koordinator.sh_devices.yaml", "scheduling.koordinator.sh_reservations.yaml",
        "scheduling.koordinator.sh_podmigrationjobs.yaml", "scheduling.sigs.k8s.io_podgroups.yaml",
        "scheduling.sigs.k8s.io_elasticquotas.yaml",
        "quota.koordinator.sh_elasticquotaprofiles.yaml",
        "topology.node.k8s.io_noderesourcetopologies.yaml",
        "analysis.koordinator.sh_recommendations.yaml",
        "scheduling.koordinator.sh_clusternetworktopologies.yaml",
        "scheduling.koordinator.sh_scheduleexplanations.yaml"}) {
    koord::testing::applyManifestFile(*api, koord::testing::crdsDir() + "/" + file);
  }
}

}  // namespace

TEST_CASE("YAML manifests convert to the JSON kubectl would send", "[yaml]") {
  auto docs = yamlToJson(R"(# two documents, one empty
---
plain: text
quoted: "5"
single: 'true'
int: 42
negative: -7
octal: 0o17
hex: 0x1f
float: 1.5
exp: 1e3
yes_is_a_string: yes
bool: false
nothing: ~
empty:
null_word: null
tagged: !!str 10
block: |
  line one
  line two
list: [a, 1, "2"]
anchor: &base {k: v}
alias: *base
---
---
- x
)");
  REQUIRE(docs.size() == 2);
  const json::object& d = docs[0].as_object();
  CHECK(d.at("plain") == "text");
  CHECK(d.at("quoted") == "5");
  CHECK(d.at("single") == "true");
  CHECK(d.at("int") == 42);
  CHECK(d.at("negative") == -7);
  CHECK(d.at("octal") == 15);
  CHECK(d.at("hex") == 31);
  CHECK(d.at("float") == 1.5);
  CHECK(d.at("exp") == 1000.0);
  CHECK(d.at("yes_is_a_string") == "yes");  // YAML 1.2, not 1.1
  CHECK(d.at("bool") == false);
  CHECK(d.at("nothing").is_null());
  CHECK(d.at("empty").is_null());
  CHECK(d.at("null_word").is_null());
  CHECK(d.at("tagged") == "10");
  CHECK(d.at("block") == "line one\nline two\n");
  CHECK(d.at("list") == json::array{"a", 1, "2"});
  CHECK(d.at("alias") == json::object{{"k", "v"}});
  CHECK(docs[1] == json::array{"x"});
  CHECK_THROWS_WITH(yamlToJson("a: [1, 2"), Catch::Contains("malformed YAML"));
}

TEST_CASE("deploy/crds are accepted, established and keep NodeMetric fields", "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  const std::string node = uniqueName("koord-crds-node");
  auto metric_ref = named(kNodeMetrics, node);
  json::value metric =
      json::object{{"apiVersion", "slo.koordinator.sh/v1alpha1"},
                   {"kind", "NodeMetric"},
                   {"metadata", {{"name", node}}},
                   {"spec",
                    {{"metricCollectPolicy",
                      {{"aggregateDurationSeconds", 300},
                       {"reportIntervalSeconds", 60},
                       {"nodeAggregatePolicy", {{"durations", json::array{"5m0s", "10m0s"}}}},
                       {"nodeMemoryCollectPolicy", "usageWithoutPageCache"}}},
                     {"notInTheSchema", true}}},
                   // Ignored on create: status has its own subresource.
                   {"status", {{"updateTime", "2024-01-01T00:00:00Z"}}}};
  auto created = ok(createRetrying(api, kNodeMetrics, metric), "create NodeMetric");
  cleanup.add(metric_ref);
  CHECK(created.at("spec").at("metricCollectPolicy") ==
        metric.at("spec").at("metricCollectPolicy"));
  CHECK_FALSE(created.at("spec").as_object().contains("notInTheSchema"));  // pruned
  CHECK(str(created, {"status", "updateTime"}).empty());

  json::value status = json::object{
      {"updateTime", "2024-05-06T07:08:09Z"},
      {"nodeMetric",
       {{"nodeUsage", {{"resources", {{"cpu", "2"}, {"memory", "4Gi"}}}}},
        {"systemUsage", {{"resources", {{"cpu", "300m"}, {"memory", 1073741824}}}}},
        {"aggregatedNodeUsages",
         json::array{
             {{"usage", {{"p90", {{"resources", {{"cpu", "1500m"}}}}}}}, {"duration", "5m0s"}}}},
        {"numaUsages",
         json::array{{{"numaNodeID", 0}, {"nodeUsage", {{"resources", {{"cpu", "1"}}}}}}}}}},
      {"podsMetric",
       json::array{{{"name", "spark-1"},
                    {"namespace", "default"},
                    {"podUsage", {{"resources", {{"cpu", "500m"}, {"memory", "1Gi"}}}}},
                    {"priority", "koord-batch"},
                    {"qos", "BE"},
                    {"extensions", {{"vendor", {{"x", 1}}}}}}}},
      {"hostApplicationMetric", json::array{{{"name", "nginx"},
                                             {"usage", {{"resources", {{"cpu", "100m"}}}}},
                                             {"priority", "koord-prod"},
                                             {"qos", "LS"}}}},
      {"prodReclaimableMetric", {{"resource", {{"resources", {{"cpu", "1"}}}}}}},
      {"prodPeakMetric", {{"resource", {{"resources", {{"memory", "2Gi"}}}}}}}};
  auto status_ref = metric_ref;
  status_ref.subresource = "status";
  auto written =
      ok(api->patchSync(status_ref, PatchType::kMergePatch, json::object{{"status", status}}),
         "patch NodeMetric status");
  CHECK(written.at("status") == status);

  auto read = ok(api->getSync(metric_ref), "get NodeMetric");
  CHECK(read.at("status") == status);
  CHECK(read.at("status").at("nodeMetric").at("systemUsage").at("resources").at("memory") ==
        1073741824);
  CHECK(read.at("spec").at("metricCollectPolicy") == metric.at("spec").at("metricCollectPolicy"));

  // The schema is enforced, not only kept: an unknown memory policy is Invalid.
  auto invalid = api->patchSync(
      metric_ref, PatchType::kMergePatch,
      json::object{{"spec", {{"metricCollectPolicy", {{"nodeMemoryCollectPolicy", "all"}}}}}});
  REQUIRE_FALSE(invalid.has_value());
  CHECK(invalid.error().code == 422);
}

TEST_CASE("a NodeSLO holds every field of koord's NodeSLO spec", "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  auto config = koord::apis::parseSloControllerConfig({
      {"resource-qos-config", R"({"clusterStrategy": {"beClass": {
          "blkioQOS": {"enable": true, "blocks": [{"name": "vg0", "type": "volumegroup",
                                                   "ioCfg": {"readIOPS": 100}}]},
          "networkQOS": {"enable": true, "ingressRequest": "50M", "ingressLimit": 80}}}})"},
      {"system-config",
       R"({"clusterStrategy": {"totalNetworkBandwidth": "10G", "schedFeatures": {"X": true}}})"},
  });
  if (!config)
    FAIL(config.error().message);
  json::object spec = koord::apis::nodeSLOSpec(*config, {{"kubernetes.io/os", "linux"}});
  spec["extensions"] = json::object{{"vendor", {{"deep", {{"er", json::array{1, 2}}}}}}};
  spec["hostApplications"] = json::array{{{"name", "nginx"},
                                          {"priority", "koord-prod"},
                                          {"qos", "LS"},
                                          {"cgroupPath",
                                           {{"base", "CgroupRoot"},
                                            {"parentDir", "host-latency-sensitive/"},
                                            {"relativePath", "nginx/"}}}}};

  const std::string node = uniqueName("koord-crds-node");
  auto ref = named(kNodeSLOs, node);
  json::value slo = json::object{{"apiVersion", "slo.koordinator.sh/v1alpha1"},
                                 {"kind", "NodeSLO"},
                                 {"metadata", {{"name", node}}},
                                 {"spec", spec}};
  ok(createRetrying(api, kNodeSLOs, slo), "create NodeSLO");
  cleanup.add(ref);
  auto read = ok(api->getSync(ref), "get NodeSLO");
  CHECK(read.at("spec") == json::value(spec));
  CHECK(read.at("spec").at("resourceQOSStrategy").at("beClass").at("cpuQOS").at("groupIdentity") ==
        -1);
  CHECK(read.at("spec").at("systemStrategy").at("totalNetworkBandwidth") == "10G");

  // The kubebuilder ranges Koordinator declares are enforced.
  auto invalid = api->patchSync(
      ref, PatchType::kMergePatch,
      json::object{
          {"spec", {{"resourceUsedThresholdWithBE", {{"cpuSuppressThresholdPercent", 101}}}}}});
  REQUIRE_FALSE(invalid.has_value());
  CHECK(invalid.error().code == 422);
}

TEST_CASE("a ClusterColocationProfile keeps selectors, probability and what it injects",
          "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  const std::string name = uniqueName("koord-crds-profile");
  auto ref = named(kColocationProfiles, name);
  json::object spec{
      {"namespaceSelector", {{"matchLabels", {{"koordinator.sh/enable-colocation", "true"}}}}},
      {"selector",
       {{"matchLabels", {{"sparkoperator.k8s.io/launched-by-spark-operator", "true"}}},
        {"matchExpressions",
         json::array{{{"key", "app"}, {"operator", "In"}, {"values", json::array{"spark"}}}}}}},
      {"probability", "50%"},
      {"qosClass", "BE"},
      {"priorityClassName", "koord-batch"},
      {"koordinatorPriority", 1000},
      {"schedulerName", "koord-scheduler"},
      {"labels", {{"koordinator.sh/mutated", "true"}}},
      {"annotations", {{"koordinator.sh/note", "from profile"}}},
      {"labelKeysMapping", {{"app", "koordinator.sh/app"}}},
      {"annotationKeysMapping", {{"owner", "koordinator.sh/owner"}}},
      {"labelSuffixes", {{"tier", "-batch"}}},
      {"patch",
       {{"spec", {{"tolerations", json::array{{{"key", "batch"}, {"operator", "Exists"}}}}}}}},
  };
  json::value profile = json::object{{"apiVersion", "config.koordinator.sh/v1alpha1"},
                                     {"kind", "ClusterColocationProfile"},
                                     {"metadata", {{"name", name}}},
                                     {"spec", spec}};
  ok(createRetrying(api, kColocationProfiles, profile), "create ClusterColocationProfile");
  cleanup.add(ref);
  auto read = ok(api->getSync(ref), "get ClusterColocationProfile");
  CHECK(read.at("spec") == json::value(spec));
  CHECK(read.at("spec").at("probability") == "50%");

  // probability is int-or-string: an integer stays an integer.
  auto as_int =
      ok(api->patchSync(ref, PatchType::kMergePatch, json::object{{"spec", {{"probability", 50}}}}),
         "patch probability");
  CHECK(as_int.at("spec").at("probability") == 50);

  auto invalid =
      api->patchSync(ref, PatchType::kMergePatch, json::object{{"spec", {{"qosClass", "GOLD"}}}});
  REQUIRE_FALSE(invalid.has_value());
  CHECK(invalid.error().code == 422);
}

TEST_CASE("a Device keeps its devices, topology, conditions and allocations", "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  const std::string name = uniqueName("koord-crds-device");
  auto ref = named(kDevices, name);
  json::object gpu{
      {"type", "gpu"},
      {"id", "GPU-1d2c"},
      {"minor", 0},
      {"health", true},
      {"labels", {{"k", "v"}}},
      {"resources",
       {{"koordinator.sh/gpu-core", "100"},
        {"koordinator.sh/gpu-memory", "80Gi"},
        {"koordinator.sh/gpu-memory-ratio", 100}}},
      {"topology",
       {{"socketID", -1}, {"nodeID", 0}, {"pcieID", "pci0000:3a"}, {"busID", "0000:3b:00.0"}}},
      {"conditions", json::array{{{"type", "Healthy"},
                                  {"status", "True"},
                                  {"reason", "DeviceHealthy"},
                                  {"message", "device is healthy"},
                                  {"lastTransitionTime", "2024-01-01T00:00:00Z"}}}}};
  json::object nic{
      {"type", "rdma"},
      {"id", "0000:5e:00.0"},
      {"minor", 0},
      {"health", true},
      {"resources", {{"koordinator.sh/rdma", "100"}}},
      {"vfGroups", json::array{{{"vfs", json::array{{{"minor", 0}, {"busID", "0000:5e:00.2"}}}}}}}};
  json::value device = json::object{
      {"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
      {"kind", "Device"},
      {"metadata", {{"name", name}}},
      {"spec", {{"devices", json::array{gpu, nic}}}},
      {"status",
       {{"allocations", json::array{{{"type", "gpu"},
                                     {"entries", json::array{{{"name", "p"},
                                                              {"namespace", "default"},
                                                              {"uuid", "u"},
                                                              {"minors", json::array{0}}}}}}}}}}};
  auto created = ok(createRetrying(api, kDevices, device), "create Device");
  cleanup.add(ref);
  CHECK(created.at("spec") == device.at("spec"));
  // No status subresource, as in Koordinator: status is written with the object.
  CHECK(created.at("status") == device.at("status"));

  // health defaults to false where a writer leaves it out.
  auto no_health =
      ok(api->patchSync(
             ref, PatchType::kMergePatch,
             json::object{{"spec", {{"devices", json::array{{{"type", "fpga"}, {"minor", 1}}}}}}}),
         "patch devices");
  CHECK(no_health.at("spec").at("devices").at(0).at("health") == false);

  // The schema is enforced: a quantity that is none is Invalid.
  auto invalid = api->patchSync(
      ref, PatchType::kMergePatch,
      json::object{
          {"spec",
           {{"devices", json::array{{{"health", true},
                                     {"resources", {{"koordinator.sh/gpu-core", "lots"}}}}}}}}});
  REQUIRE_FALSE(invalid.has_value());
  CHECK(invalid.error().code == 422);
}

TEST_CASE("a Reservation keeps its spec and status, with Koordinator's defaults", "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  const std::string name = uniqueName("koord-crds-reservation");
  auto ref = named(kReservations, name);
  json::object spec{
      {"template",
       {{"metadata", {{"namespace", "default"}, {"labels", {{"app", "web"}}}}},
        {"spec",
         {{"schedulerName", "koord-scheduler"},
          {"containers",
           json::array{{{"name", "main"},
                        {"image", "busybox"},
                        {"resources", {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}}}}}}},
      {"owners",
       json::array{{{"object", {{"kind", "Pod"}, {"namespace", "default"}, {"name", "web-0"}}}},
                   {{"controller",
                     {{"apiVersion", "apps/v1"},
                      {"kind", "StatefulSet"},
                      {"name", "web"},
                      {"uid", "0b0e2c1a"},
                      {"controller", true},
                      {"namespace", "default"}}}},
                   {{"labelSelector",
                     {{"matchLabels", {{"app", "web"}}},
                      {"matchExpressions", json::array{{{"key", "tier"},
                                                        {"operator", "In"},
                                                        {"values", json::array{"a", "b"}}}}}}}}}},
      {"ttl", "2h"},
      {"expires", "2030-01-01T00:00:00Z"},
      {"preAllocation", true},
      {"allocateOnce", false},
      {"allocatePolicy", "Aligned"},
      {"unschedulable", true},
      {"taints", json::array{{{"key", "drain"}, {"value", "1"}, {"effect", "NoSchedule"}}}},
      {"notInTheSchema", 1}};
  json::value reservation = json::object{{"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
                                         {"kind", "Reservation"},
                                         {"metadata", {{"name", name}}},
                                         {"spec", spec},
                                         // Ignored on create: status has its own subresource.
                                         {"status", {{"phase", "Available"}}}};
  auto created = ok(createRetrying(api, kReservations, reservation), "create Reservation");
  cleanup.add(ref);
  spec.erase("notInTheSchema");  // pruned; everything else kept, the template whole
  CHECK(created.at("spec") == json::value(spec));
  // The status written on create is dropped.
  CHECK(str(created, {"status", "phase"}) != "Available");

  json::value status = json::object{
      {"phase", "Available"},
      {"nodeName", "node-a"},
      {"allocatable", {{"cpu", "1"}, {"memory", 1073741824}}},
      {"allocated", {{"cpu", "500m"}}},
      {"currentOwners", json::array{{{"namespace", "default"}, {"name", "web-0"}, {"uid", "u"}}}},
      {"conditions", json::array{{{"type", "Scheduled"},
                                  {"status", "True"},
                                  {"reason", "Scheduled"},
                                  {"message", "node-a"},
                                  {"lastProbeTime", "2024-01-01T00:00:00Z"},
                                  {"lastTransitionTime", "2024-01-01T00:00:00Z"}}}}};
  auto written = ok(api->patchSync(koord::testing::subresource(kReservations, "status", name),
                                   PatchType::kMergePatch, json::object{{"status", status}}),
                    "patch Reservation status");
  CHECK(written.at("status") == status);
  CHECK(written.at("spec") == json::value(spec));

  // Left out, ttl and allocateOnce take Koordinator's defaults.
  const std::string bare_name = uniqueName("koord-crds-reservation");
  json::value bare = json::object{{"apiVersion", "scheduling.koordinator.sh/v1alpha1"},
                                  {"kind", "Reservation"},
                                  {"metadata", {{"name", bare_name}}},
                                  {"spec",
                                   {{"template", json::object{}},
                                    {"owners", json::array{{{"labelSelector", json::object{}}}}}}}};
  auto defaulted = ok(createRetrying(api, kReservations, bare), "create a bare Reservation");
  cleanup.add(named(kReservations, bare_name));
  CHECK(str(defaulted, {"spec", "ttl"}) == "24h");
  CHECK(defaulted.at("spec").at("allocateOnce") == true);

  // The schema is enforced with no webhook: each of these is Invalid (1.20 names list items
  // without their index).
  struct Bad {
    const char* what;
    json::object spec_patch;
    const char* field;
  };
  for (const Bad& bad : {
           Bad{"an unknown allocatePolicy", {{"allocatePolicy", "Greedy"}}, "spec.allocatePolicy"},
           Bad{"no owners", {{"owners", json::array{}}}, "spec.owners"},
           Bad{"an owner that names nothing",
               {{"owners", json::array{json::object{}}}},
               "at least 1 properties"},
           Bad{"an expiry that is no time", {{"expires", "tomorrow"}}, "spec.expires"},
           Bad{"a taint without an effect",
               {{"taints", json::array{{{"key", "k"}}}}},
               "spec.taints.effect"},
       }) {
    INFO(bad.what);
    auto invalid = api->patchSync(ref, PatchType::kMergePatch,
                                  json::object{{"spec", json::value(bad.spec_patch)}});
    REQUIRE_FALSE(invalid.has_value());
    CHECK(invalid.error().code == 422);
    CHECK_THAT(invalid.error().message, Catch::Contains(bad.field));
  }
  json::value no_owners = bare;
  no_owners.at("metadata").as_object()["name"] = uniqueName("koord-crds-reservation");
  no_owners.at("spec").as_object().erase("owners");
  auto refused = api->createSync(kReservations, no_owners);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == 422);
  CHECK_THAT(refused.error().message, Catch::Contains("spec.owners"));
  auto bad_phase =
      api->patchSync(koord::testing::subresource(kReservations, "status", name),
                     PatchType::kMergePatch, json::object{{"status", {{"phase", "Running"}}}});
  REQUIRE_FALSE(bad_phase.has_value());
  CHECK(bad_phase.error().code == 422);
}

TEST_CASE("a PodGroup keeps its spec and takes koord's status patch on the object itself",
          "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  const std::string name = uniqueName("koord-crds-podgroup");
  auto ref = named(kPodGroups, name, "default");
  json::object spec{{"minMember", 3},
                    {"minResources", {{"cpu", "3"}, {"memory", 3221225472}}},
                    {"scheduleTimeoutSeconds", 60},
                    {"notInTheSchema", true}};
  json::value group = json::object{
      {"apiVersion", "scheduling.sigs.k8s.io/v1alpha1"},
      {"kind", "PodGroup"},
      {"metadata",
       {{"name", name},
        {"annotations", {{"gang.scheduling.koordinator.sh/groups", R"(["default/a"])"}}}}},
      {"spec", spec},
      // Kept on create: as in Koordinator, status has no subresource.
      {"status", {{"phase", "Pending"}, {"notInTheSchema", 1}}}};
  auto created = ok(createRetrying(api, kPodGroups, group), "create PodGroup");
  cleanup.add(ref);
  spec.erase("notInTheSchema");
  CHECK(created.at("spec") == json::value(spec));
  CHECK(created.at("status") == json::value(json::object{{"phase", "Pending"}}));

  koord::apis::PodGroupStatus status;
  status.phase = koord::apis::PodGroupPhase::kScheduling;
  status.occupied_by = "default/job";
  status.scheduled = 2;
  status.running = 1;
  status.failed = 1;
  status.schedule_start_time =
      std::chrono::system_clock::time_point(std::chrono::seconds(1714557605));
  auto written = ok(api->patchSync(ref, PatchType::kMergePatch,
                                   koord::apis::podGroupStatusPatch(
                                       status, str(created, {"metadata", "resourceVersion"}))),
                    "patch PodGroup status");
  CHECK(written.at("spec") == json::value(spec));
  auto decoded = koord::apis::decodePodGroup(written);
  REQUIRE(decoded.has_value());
  CHECK(decoded->status == status);
  CHECK(decoded->namespace_ == "default");
  CHECK(decoded->min_member == 3);
  CHECK(decoded->schedule_timeout_seconds == 60);
  CHECK(decoded->annotations.at("gang.scheduling.koordinator.sh/groups") == R"(["default/a"])");
  // Zero counts are removed, as Koordinator's omitempty patch removes them.
  CHECK_FALSE(written.at("status").as_object().contains("succeeded"));

  // The schema is enforced: a count that is no integer is Invalid.
  auto invalid =
      api->patchSync(ref, PatchType::kMergePatch, json::object{{"spec", {{"minMember", "three"}}}});
  REQUIRE_FALSE(invalid.has_value());
  CHECK(invalid.error().code == 422);
}

TEST_CASE("an ElasticQuota keeps min, max, used and Koordinator's labels and annotations",
          "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  const std::string name = uniqueName("koord-crds-quota");
  auto ref = named(kElasticQuotas, name, "default");
  json::object spec{{"min", {{"cpu", "2"}, {"memory", "4Gi"}}},
                    {"max", {{"cpu", 10}, {"memory", "20Gi"}, {"nvidia.com/gpu", "4"}}},
                    {"notInTheSchema", true}};
  json::value quota =
      json::object{{"apiVersion", "scheduling.sigs.k8s.io/v1alpha1"},
                   {"kind", "ElasticQuota"},
                   {"metadata",
                    {{"name", name},
                     {"labels",
                      {{"quota.scheduling.koordinator.sh/parent", "koordinator-root-quota"},
                       {"quota.scheduling.koordinator.sh/is-parent", "false"},
                       {"quota.scheduling.koordinator.sh/allow-lent-resource", "false"}}},
                     {"annotations",
                      {{"quota.scheduling.koordinator.sh/shared-weight", R"({"cpu":"4"})"},
                       {"quota.scheduling.koordinator.sh/namespaces", R"(["default"])"}}}}},
                   {"spec", spec},
                   {"status", {{"used", {{"cpu", "1"}, {"memory", "1Gi"}}}}}};
  auto created = ok(createRetrying(api, kElasticQuotas, quota), "create ElasticQuota");
  cleanup.add(ref);
  spec.erase("notInTheSchema");
  CHECK(created.at("spec") == json::value(spec));
  auto before = koord::apis::decodeElasticQuota(created);
  REQUIRE(before.has_value());
  CHECK_FALSE(before->allow_lent_resource);
  CHECK(before->namespaces == std::vector<std::string>{"default"});
  CHECK(before->shared_weight.at("cpu") == koord::kube::Quantity::fromInt(4));
  CHECK(before->used.size() == 2);

  koord::apis::ElasticQuotaStatusUpdate update;
  update.used = koord::kube::ResourceList{{"cpu", koord::kube::Quantity::fromMilli(1500)}};
  update.runtime = koord::kube::ResourceList{{"cpu", koord::kube::Quantity::fromInt(3)}};
  update.request = koord::kube::ResourceList{};
  auto written = ok(api->patchSync(ref, PatchType::kMergePatch,
                                   koord::apis::elasticQuotaStatusPatch(*before, update)),
                    "patch ElasticQuota status and annotations");
  auto after = koord::apis::decodeElasticQuota(written);
  REQUIRE(after.has_value());
  CHECK(after->used == *update.used);  // memory removed, cpu replaced
  auto runtime =
      koord::apis::quotaResourceAnnotation(after->annotations, koord::apis::kAnnotationRuntime);
  REQUIRE(runtime.has_value());
  CHECK(*runtime == *update.runtime);
  CHECK(after->annotations.at(std::string(koord::apis::kAnnotationRequest)) == "{}");
  CHECK(after->annotations.at(std::string(koord::apis::kAnnotationSharedWeight)) ==
        R"({"cpu":"4"})");
  CHECK(written.at("spec") == json::value(spec));

  auto invalid = api->patchSync(ref, PatchType::kMergePatch,
                                json::object{{"spec", {{"max", {{"cpu", "ten"}}}}}});
  REQUIRE_FALSE(invalid.has_value());
  CHECK(invalid.error().code == 422);
}

TEST_CASE("an ElasticQuotaProfile keeps its spec; quotaName and nodeSelector are required",
          "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  const std::string name = uniqueName("koord-crds-quotaprofile");
  auto ref = named(kElasticQuotaProfiles, name, "default");
  json::object spec{
      {"quotaName", "gpu-root"},
      {"quotaLabels", {{"quota.scheduling.koordinator.sh/is-parent", "true"}}},
      {"resourceRatio", "0.9"},
      {"nodeSelector",
       {{"matchLabels", {{"pool", "gpu"}}},
        {"matchExpressions",
         json::array{{{"key", "zone"}, {"operator", "In"}, {"values", json::array{"a"}}}}}}},
      {"notInTheSchema", 1}};
  json::value profile = json::object{{"apiVersion", "quota.koordinator.sh/v1alpha1"},
                                     {"kind", "ElasticQuotaProfile"},
                                     {"metadata", {{"name", name}}},
                                     {"spec", spec}};
  auto created =
      ok(createRetrying(api, kElasticQuotaProfiles, profile), "create ElasticQuotaProfile");
  cleanup.add(ref);
  spec.erase("notInTheSchema");
  CHECK(created.at("spec") == json::value(spec));
  auto decoded = koord::apis::decodeElasticQuotaProfile(created);
  REQUIRE(decoded.has_value());
  CHECK(decoded->resourceRatio() == 0.9);
  CHECK(decoded->node_selector_compiled.matches({{"pool", "gpu"}, {"zone", "a"}}));

  for (const char* required : {"quotaName", "nodeSelector"}) {
    INFO(required);
    json::value missing = profile;
    missing.at("metadata").as_object()["name"] = uniqueName("koord-crds-quotaprofile");
    missing.at("spec").as_object().erase(required);
    auto refused = api->createSync(kElasticQuotaProfiles, missing);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == 422);
    CHECK_THAT(refused.error().message, Catch::Contains(std::string("spec.") + required));
  }
}

TEST_CASE("a NodeResourceTopology keeps its zones and Koordinator's annotations", "[cluster]") {
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);

  const ResourceRef topologies{std::string(koord::apis::kTopologyGroup),
                               std::string(koord::apis::kTopologyVersion),
                               std::string(koord::apis::kNodeResourceTopologyResource),
                               "",
                               "",
                               ""};
  koord::apis::NodeResourceTopology nrt;
  nrt.name = uniqueName("koord-crds-nrt");
  nrt.labels = {{"app.kubernetes.io/managed-by", "Koordinator"}};
  nrt.annotations = {{std::string(koord::apis::kAnnotationNodeCPUSharedPools),
                      R"([{"socket":0,"node":0,"cpuset":"0-3"}])"},
                     {std::string(koord::apis::kAnnotationNodeCPUTopology),
                      R"({"detail":[{"id":0,"core":0,"socket":0,"node":0}]})"}};
  nrt.topology_policies = {"None"};
  auto quantity = [](std::string_view text) { return koord::kube::Quantity::parse(text).value(); };
  koord::apis::Zone zone;
  zone.name = "node-0";
  zone.type = "Node";
  zone.parent = "socket-0";
  zone.costs = {{"node-1", 21}};
  zone.attributes = {{"k", "v"}};
  zone.resources = {{"cpu", quantity("4"), quantity("4"), quantity("2")},
                    {"memory", quantity("16Gi"), quantity("16Gi"), quantity("8Gi")}};
  nrt.zones = {zone};
  const json::value body = koord::apis::encodeNodeResourceTopology(nrt);
  auto created = ok(createRetrying(api, topologies, body), "create NodeResourceTopology");
  cleanup.add(named(topologies, nrt.name));
  auto back = koord::apis::decodeNodeResourceTopology(created);
  REQUIRE(back.has_value());
  CHECK(back->annotations == nrt.annotations);
  CHECK(back->topology_policies == nrt.topology_policies);
  CHECK(back->zones == nrt.zones);

  // Both lists are required, as in Koordinator's CRD.
  json::value no_zones = body;
  no_zones.as_object().erase("zones");
  no_zones.as_object()["metadata"].as_object()["name"] = uniqueName("koord-crds-nrt");
  auto refused = api->createSync(topologies, no_zones);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == 422);
}

TEST_CASE(
    "Recommendations, ClusterNetworkTopologies and ScheduleExplanations keep what "
    "Koordinator writes in them",
    "[cluster]") {
  // No koord role reads these yet; their CRDs are here so that objects made under Koordinator's
  // stay and read back as written (spec and, through the status subresource, status).
  Api api(tokenConfig());
  applyAllCRDs(api);
  Cleanup cleanup(api);
  struct Kind {
    ResourceRef ref;
    std::string kind;
    json::object spec;
    json::object status;
  };
  json::object recommendation_spec{
      {"target",
       {{"type", "workload"},
        {"workload", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}}}}};
  json::object container_status{{"containerName", "web"},
                                {"resources", {{"cpu", "250m"}, {"memory", "512Mi"}}}};
  json::object recommendation_status{
      {"updateTime", "2026-11-29T09:00:00Z"},
      {"podStatus", {{"containerStatuses", json::array{container_status}}}}};

  json::object spine_layer{{"topologyLayer", "SpineLayer"}, {"labelKey", json::array{"spine"}}};
  json::object node_layer{{"topologyLayer", "NodeTopologyLayer"},
                          {"parentTopologyLayer", "SpineLayer"}};
  json::object topology_spec{{"networkTopologySpec", json::array{spine_layer, node_layer}}};
  json::object spine_detail{
      {"topologyInfo", {{"topologyLayer", "SpineLayer"}, {"topologyName", "s1"}}},
      {"childTopologyLayer", "NodeTopologyLayer"},
      {"childTopologyNames", json::array{"n1", "n2"}},
      {"nodeNum", 2}};
  json::object topology_status{{"detailStatus", json::array{spine_detail}}};

  json::object explanation_spec{{"questionObjectKey", "default/job-0"}, {"ttl", "10m"}};
  json::object domain{{"topologyDomain", "s1"},
                      {"schedulable", false},
                      {"scheduleExplanation", {{"failedMessage", "Insufficient cpu"}}}};
  json::object explanation_status{{"schedulable", false},
                                  {"schedulableAfterPreemption", true},
                                  {"failedMessage", "0/3 nodes are available"},
                                  {"detailedExplanation", json::array{domain}}};

  const std::vector<Kind> kinds = {
      {{"analysis.koordinator.sh", "v1alpha1", "recommendations", "default", "", ""},
       "Recommendation",
       recommendation_spec,
       recommendation_status},
      {{"scheduling.koordinator.sh", "v1alpha1", "clusternetworktopologies", "", "", ""},
       "ClusterNetworkTopology",
       topology_spec,
       topology_status},
      {{"scheduling.koordinator.sh", "v1alpha1", "scheduleexplanations", "default", "", ""},
       "ScheduleExplanation",
       explanation_spec,
       explanation_status},
  };
  for (const Kind& k : kinds) {
    INFO(k.kind);
    const std::string name = uniqueName("koord-crds-koordinator");
    json::object metadata{{"name", name}};
    if (!k.ref.namespace_.empty())
      metadata["namespace"] = k.ref.namespace_;
    json::value body = json::object{{"apiVersion", k.ref.group + "/" + k.ref.version},
                                    {"kind", k.kind},
                                    {"metadata", metadata},
                                    {"spec", k.spec}};
    auto created = ok(createRetrying(api, k.ref, body), "create");
    const ResourceRef ref = named(k.ref, name, k.ref.namespace_);
    cleanup.add(ref);
    CHECK(created.at("spec") == json::value(k.spec));
    ResourceRef status_ref = ref;
    status_ref.subresource = "status";
    auto patched =
        ok(api->patchSync(status_ref, PatchType::kMergePatch, json::object{{"status", k.status}}),
           "patch the status");
    CHECK(patched.at("status") == json::value(k.status));
  }
}

TEST_CASE("deploy/priority-classes.yaml gives Koordinator's four classes", "[cluster]") {
  Api api(tokenConfig());
  auto docs = yamlFileToJson(koord::testing::chartFilesDir() + "/priority-classes.yaml");
  REQUIRE(docs.size() == 4);
  for (const auto& doc : docs) {
    // Shared with whatever else runs on this cluster, so left in place afterwards.
    auto r = api->createSync(kPriorityClasses, doc);
    if (!r && !koord::kube::isAlreadyExists(r.error()))
      FAIL("create " << str(doc, {"metadata", "name"}) << ": " << r.error().message);
  }
  struct Want {
    const char* name;
    std::int64_t value;
  };
  for (const auto& want : {Want{"koord-prod", 9000}, Want{"koord-mid", 7000},
                           Want{"koord-batch", 5000}, Want{"koord-free", 3000}}) {
    INFO(want.name);
    auto pc = ok(api->getSync(named(kPriorityClasses, want.name)), "get PriorityClass");
    CHECK(pc.at("value") == want.value);
    CHECK(str(pc, {"preemptionPolicy"}) == "PreemptLowerPriority");
    CHECK_FALSE(str(pc, {"description"}).empty());
    const json::value* global_default = pc.as_object().if_contains("globalDefault");
    CHECK((global_default == nullptr || *global_default == false));
  }
}
