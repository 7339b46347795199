#include <boost/json.hpp>

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "catch_expected.h"
#include "framework/pod_info.h"

using namespace koord::roles::scheduler;
namespace json = boost::json;
namespace kube = koord::kube;
namespace apis = koord::apis;

namespace {

constexpr std::int64_t kMi = 1024 * 1024;
constexpr std::int64_t kGi = 1024 * kMi;

// A Deployment's pod as the API server returns it, with every field the projection reads.
const char* const kRealisticPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "namespace": "shop", "name": "web-7d9f-abcde", "uid": "1f0c6a4e-8d7b-4c5e-9a1f-2b3c4d5e6f70",
    "resourceVersion": "4711", "creationTimestamp": "2024-05-01T10:00:00Z",
    "labels": {"app": "web", "koordinator.sh/qosClass": "LS"},
    "annotations": {
      "kubectl.kubernetes.io/last-applied-configuration": "{\"big\": true}",
      "scheduling.koordinator.sh/load-estimated-scaling-factors": "{\"cpu\": 80}"
    },
    "ownerReferences": [
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "not-a-controller", "uid": "u1"},
      {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f", "uid": "u2",
       "controller": true, "blockOwnerDeletion": true}
    ]
  },
  "spec": {
    "schedulerName": "koord-scheduler", "priority": 9100, "preemptionPolicy": "Never",
    "nodeName": "", "nodeSelector": {"kubernetes.io/os": "linux"},
    "overhead": {"cpu": "250m", "memory": "120Mi"},
    "initContainers": [
      {"name": "migrate", "resources": {"requests": {"cpu": "2", "memory": "256Mi"},
                                        "limits": {"cpu": "2", "memory": "256Mi"}}},
      {"name": "warm", "resources": {"requests": {"memory": "1Gi", "example.com/foo": "2"}},
       "ports": [{"containerPort": 70, "hostPort": 7070}]}
    ],
    "containers": [
      {"name": "app",
       "resources": {"requests": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1Gi"},
                     "limits": {"cpu": "1", "memory": "2Gi"}},
       "ports": [{"containerPort": 8080, "hostPort": 80},
                 {"containerPort": 9090},
                 {"containerPort": 53, "hostPort": 5353, "protocol": "UDP", "hostIP": "10.0.0.5"}]},
      {"name": "log", "resources": {"requests": {"cpu": "100m", "example.com/foo": "1"}}}
    ],
    "affinity": {
      "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 10, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}}]
      },
      "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "cache"}},
           "topologyKey": "topology.kubernetes.io/zone"}],
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 50, "podAffinityTerm": {"labelSelector": {}, "namespaces": ["b", "a", "b"],
                                             "topologyKey": "kubernetes.io/hostname"}}]
      },
      "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
           "topologyKey": "kubernetes.io/hostname"}],
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 5, "podAffinityTerm": {"topologyKey": "zone"}}]
      }
    },
    "tolerations": [
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 300},
      {"key": "dedicated", "value": "web", "effect": "NoSchedule"}
    ],
    "topologySpreadConstraints": [
      {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
       "labelSelector": {"matchLabels": {"app": "web"}}},
      {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}
    ]
  },
  "status": {"phase": "Pending", "nominatedNodeName": "node-3", "qosClass": "Burstable",
             "startTime": "2024-05-01T10:00:03Z",
             "conditions": [
               {"type": "PodScheduled", "status": "True",
                "lastTransitionTime": "2024-05-01T10:00:01Z"},
               {"type": "Initialized", "status": "False",
                "lastTransitionTime": "2024-05-01T10:00:02Z"},
               {"type": "Ready", "status": "True", "lastTransitionTime": "not read"}]}
})";

kube::Expected<PodInfo> decode(std::string_view text) {
  return decodePodInfo(json::parse(text));
}

}  // namespace

TEST_CASE("a realistic pod: metadata and scheduling fields") {
  auto pod = decode(kRealisticPod);
  REQUIRE(pod);
  CHECK(pod->namespace_ == "shop");
  CHECK(pod->name == "web-7d9f-abcde");
  CHECK(pod->key() == "shop/web-7d9f-abcde");
  CHECK(pod->uid == "1f0c6a4e-8d7b-4c5e-9a1f-2b3c4d5e6f70");
  CHECK(pod->resource_version == "4711");
  CHECK(pod->labels == kube::Labels{{"app", "web"}, {"koordinator.sh/qosClass", "LS"}});
  // Only the annotation a plugin reads survives.
  CHECK(
      pod->annotations ==
      kube::Labels{{"scheduling.koordinator.sh/load-estimated-scaling-factors", "{\"cpu\": 80}"}});
  CHECK(pod->creation_timestamp ==
        std::chrono::sys_days(std::chrono::year(2024) / 5 / 1) + std::chrono::hours(10));
  CHECK_FALSE(pod->terminating);
  CHECK(pod->controller_kind == "ReplicaSet");
  CHECK(pod->controller_name == "web-7d9f");
  CHECK_FALSE(pod->isDaemonSetPod());

  CHECK(pod->scheduler_name == "koord-scheduler");
  CHECK(pod->node_name.empty());
  CHECK_FALSE(pod->assigned());
  CHECK(pod->nominated_node_name == "node-3");
  REQUIRE(pod->start_time.has_value());
  CHECK(*pod->start_time - pod->creation_timestamp == std::chrono::seconds(3));
  REQUIRE(pod->scheduled_at.has_value());
  CHECK(*pod->scheduled_at - pod->creation_timestamp == std::chrono::seconds(1));
  CHECK_FALSE(pod->initialized_at.has_value());  // not True
  CHECK(pod->priority == 9100);
  CHECK(pod->preempt_never);
  CHECK(pod->phase == PodPhase::kPending);
  CHECK(pod->node_selector == kube::Labels{{"kubernetes.io/os", "linux"}});

  CHECK(pod->qos == apis::QoSClass::kLS);                    // the label wins over Burstable
  CHECK(pod->priority_class == apis::PriorityClass::kProd);  // 9100 is in koord-prod's band
}

TEST_CASE("a realistic pod: requests, non-zero requests, limits and host ports") {
  auto pod = decode(kRealisticPod);
  REQUIRE(pod);
  // cpu: max(500m + 100m, init 2) + 250m overhead; memory: max(1Gi, init 256Mi, init 1Gi) +
  // 120Mi; foo: max(1, init 2).
  Resource want;
  want.milli_cpu = 2250;
  want.memory = 1 * kGi + 120 * kMi;
  want.ephemeral_storage = 1 * kGi;
  want.setScalar("example.com/foo", 2);
  CHECK(pod->requests == want);

  // The log container has no memory request: 200Mi for scoring, which lifts the sum above the
  // 1Gi init container.
  Resource non_zero = want;
  non_zero.memory = 1 * kGi + 200 * kMi + 120 * kMi;
  CHECK(pod->non_zero_requests == non_zero);

  // Limits: max(1 + nothing, init 2) cpu and max(2Gi, 256Mi) memory, each plus the overhead.
  Resource limits;
  limits.milli_cpu = 2250;
  limits.memory = 2 * kGi + 120 * kMi;
  CHECK(pod->limits == limits);

  // The regular init container's port is not held while the pod runs.
  REQUIRE(pod->host_ports.size() == 2);
  CHECK(pod->host_ports[0] == HostPort{"0.0.0.0", "TCP", 80});
  CHECK(pod->host_ports[1] == HostPort{"10.0.0.5", "UDP", 5353});
}

TEST_CASE("a realistic pod: node affinity, pod (anti-)affinity, tolerations, spreading") {
  auto pod = decode(kRealisticPod);
  REQUIRE(pod);
  REQUIRE(pod->node_affinity.has_value());
  REQUIRE(pod->node_affinity->required.has_value());
  REQUIRE(pod->node_affinity->required->node_selector_terms.size() == 1);
  const auto& req = pod->node_affinity->required->node_selector_terms[0].match_expressions;
  REQUIRE(req.size() == 1);
  CHECK(req[0] ==
        kube::NodeSelectorRequirement{"zone", kube::NodeSelectorOperator::kIn, {"a", "b"}});
  REQUIRE(pod->node_affinity->preferred.size() == 1);
  CHECK(pod->node_affinity->preferred[0].weight == 10);
  CHECK(pod->node_affinity->preferred[0].preference.match_expressions[0].op ==
        kube::NodeSelectorOperator::kExists);

  REQUIRE(pod->pod_affinity.required.size() == 1);
  const auto& cache = pod->pod_affinity.required[0];
  CHECK(cache.topology_key == "topology.kubernetes.io/zone");
  CHECK(cache.namespaces == std::vector<std::string>{"shop"});  // empty: the pod's own
  CHECK(cache.label_selector.matches({{"app", "cache"}}));
  CHECK_FALSE(cache.label_selector.matches({{"app", "web"}}));
  REQUIRE(pod->pod_affinity.preferred.size() == 1);
  CHECK(pod->pod_affinity.preferred[0].weight == 50);
  CHECK(pod->pod_affinity.preferred[0].term.namespaces == std::vector<std::string>{"a", "b"});
  CHECK(pod->pod_affinity.preferred[0].term.label_selector.empty());  // {} matches everything
  CHECK(pod->pod_affinity.preferred[0].term.topology_key == "kubernetes.io/hostname");

  REQUIRE(pod->pod_anti_affinity.required.size() == 1);
  CHECK(pod->pod_anti_affinity.required[0].label_selector.matches({{"app", "web"}}));
  CHECK_FALSE(pod->pod_anti_affinity.required[0].label_selector.matches({{"app", "db"}}));
  REQUIRE(pod->pod_anti_affinity.preferred.size() == 1);
  CHECK(pod->pod_anti_affinity.preferred[0].weight == 5);
  // No labelSelector is a nil selector: it matches no pod, not every pod.
  CHECK(pod->pod_anti_affinity.preferred[0].term.label_selector.matchesNothing());
  CHECK_FALSE(pod->pod_anti_affinity.preferred[0].term.label_selector.matches({}));

  REQUIRE(pod->tolerations.size() == 2);
  CHECK(pod->tolerations[0] == kube::Toleration{"node.kubernetes.io/not-ready",
                                                kube::TolerationOperator::kExists, "",
                                                kube::TaintEffect::kNoExecute, 300});
  CHECK(pod->tolerations[1] == kube::Toleration{"dedicated", kube::TolerationOperator::kEqual,
                                                "web", kube::TaintEffect::kNoSchedule,
                                                std::nullopt});

  REQUIRE(pod->topology_spread_constraints.size() == 2);
  const auto& zone = pod->topology_spread_constraints[0];
  CHECK(zone.max_skew == 2);
  CHECK(zone.topology_key == "zone");
  CHECK(zone.when_unsatisfiable == UnsatisfiableConstraintAction::kScheduleAnyway);
  CHECK(zone.label_selector.matches({{"app", "web"}}));
  const auto& host = pod->topology_spread_constraints[1];
  CHECK(host.max_skew == 1);
  CHECK(host.when_unsatisfiable == UnsatisfiableConstraintAction::kDoNotSchedule);
  CHECK(host.label_selector.matchesNothing());
}

TEST_CASE("a minimal pod takes the API's defaults") {
  auto pod = decode(R"({"metadata": {"namespace": "default", "name": "p"},
                        "spec": {"containers": [{"name": "c"}]}})");
  REQUIRE(pod);
  CHECK(pod->scheduler_name == "default-scheduler");
  CHECK(pod->priority == 0);
  CHECK_FALSE(pod->preempt_never);
  CHECK(pod->phase == PodPhase::kPending);
  CHECK(pod->creation_timestamp == std::chrono::system_clock::time_point{});
  CHECK(pod->controller_kind.empty());
  CHECK_FALSE(pod->node_affinity.has_value());
  CHECK(pod->pod_affinity.empty());
  CHECK(pod->pod_anti_affinity.empty());
  CHECK(pod->annotations.empty());
  CHECK(pod->requests == Resource{});
  // No requests and no status: BestEffort, so BE; no priority, no label: no class.
  CHECK(pod->qos == apis::QoSClass::kBE);
  CHECK(pod->priority_class == apis::PriorityClass::kNone);
}

TEST_CASE("status and metadata that change how the pod counts") {
  auto pod = decode(R"({
    "metadata": {"namespace": "kube-system", "name": "ds-1",
                 "creationTimestamp": "2024-05-01T12:30:00.5+02:00",
                 "deletionTimestamp": "2024-05-02T00:00:00Z",
                 "labels": {"koordinator.sh/priority-class": "koord-batch"},
                 "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "controller": true}]},
    "spec": {"nodeName": "node-1", "priority": 9500, "containers": [
      {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                  "limits": {"cpu": "1", "memory": "1Gi"}}}]},
    "status": {"phase": "Succeeded"}})");
  REQUIRE(pod);
  CHECK(pod->creation_timestamp == std::chrono::sys_days(std::chrono::year(2024) / 5 / 1) +
                                       std::chrono::hours(10) + std::chrono::minutes(30) +
                                       std::chrono::milliseconds(500));
  CHECK(pod->terminating);
  CHECK(pod->isDaemonSetPod());
  CHECK(pod->assigned());
  CHECK(pod->finished());
  // Computed Guaranteed (no status.qosClass) -> LSR; the label beats spec.priority's band.
  CHECK(pod->qos == apis::QoSClass::kLSR);
  CHECK(pod->priority_class == apis::PriorityClass::kBatch);
}

TEST_CASE("non-zero requests default only absent cpu and memory, per container") {
  auto pod = decode(R"({"metadata": {"name": "p"}, "spec": {
    "containers": [
      {"name": "none"},
      {"name": "zero-cpu", "resources": {"requests": {"cpu": "0"}}},
      {"name": "batch", "resources": {"requests": {"kubernetes.io/batch-cpu": "500"}}}],
    "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "250m"}}}]}})");
  REQUIRE(pod);
  CHECK(pod->requests.milli_cpu == 250);  // the init container is the floor
  CHECK(pod->requests.memory == 0);
  CHECK(pod->requests.scalarValue("kubernetes.io/batch-cpu") == 500);
  // cpu: 100 + 0 (an explicit zero is kept) + 100 = 200, below the init container's 250m;
  // memory: 3 x 200Mi, above the init container's 200Mi.
  CHECK(pod->non_zero_requests.milli_cpu == 250);
  CHECK(pod->non_zero_requests.memory == 3 * kDefaultMemoryRequest);
  CHECK(pod->non_zero_requests.scalarValue("kubernetes.io/batch-cpu") == 500);

  auto sum = decode(R"({"spec": {"containers": [{"name": "a"}, {"name": "b"},
    {"name": "c", "resources": {"requests": {"cpu": "0"}}}]}})");
  REQUIRE(sum);
  CHECK(sum->non_zero_requests.milli_cpu == 2 * kDefaultMilliCPURequest);
  CHECK(sum->non_zero_requests.memory == 3 * kDefaultMemoryRequest);
  CHECK(sum->requests == Resource{});
}

TEST_CASE("sidecars run beside the containers and under later init containers") {
  auto pod = decode(R"({"metadata": {"name": "p"}, "spec": {
    "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                 "limits": {"cpu": "1"}}}],
    "initContainers": [
      {"name": "setup", "resources": {"requests": {"cpu": "3", "memory": "100Mi"}},
       "ports": [{"containerPort": 7000, "hostPort": 7000}]},
      {"name": "proxy", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "500m", "memory": "500Mi"}, "limits": {"cpu": "500m"}},
       "ports": [{"containerPort": 9000, "hostPort": 9000}]},
      {"name": "migrate", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}},
      {"name": "logs", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "200m", "memory": "100Mi"}}}]}})");
  REQUIRE(pod);
  // Running together: app + proxy + logs = 1700m / 1Gi+600Mi. Floors: setup alone 3000m;
  // migrate with proxy beside it 1500m / 2Gi+500Mi; each sidecar with those before it.
  CHECK(pod->requests.milli_cpu == 3000);
  CHECK(pod->requests.memory == 2 * kGi + 500 * kMi);
  // Limits follow the same shape: app 1 + proxy 500m; the regular init containers limit none.
  CHECK(pod->limits.milli_cpu == 1500);
  CHECK(pod->limits.memory == 0);
  // The sidecar's host port is held for the pod's life, the setup container's is not.
  REQUIRE(pod->host_ports.size() == 1);
  CHECK(pod->host_ports[0].port == 9000);

  // A sum above every floor: sidecars add to the containers, not only to the floor.
  auto summed = decode(R"({"spec": {
    "containers": [{"name": "app", "resources": {"requests": {"cpu": "2"}}}],
    "initContainers": [{"name": "s", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "1"}}}]}})");
  REQUIRE(summed);
  CHECK(summed->requests.milli_cpu == 3000);
}

TEST_CASE("overhead is added to limits only where a container sets one") {
  auto pod = decode(R"({"spec": {"overhead": {"cpu": "100m", "memory": "64Mi"},
    "containers": [{"name": "c", "resources": {"limits": {"memory": "1Gi"}}}]}})");
  REQUIRE(pod);
  CHECK(pod->limits.memory == 1 * kGi + 64 * kMi);
  CHECK(pod->limits.milli_cpu == 0);  // no cpu limit: still unlimited
  CHECK(pod->requests.milli_cpu == 100);
  CHECK(pod->requests.memory == 64 * kMi);
  CHECK(pod->non_zero_requests.milli_cpu == kDefaultMilliCPURequest + 100);
}

TEST_CASE("bad pods are refused with the field's path") {
  struct Case {
    const char* name;
    const char* pod;
    const char* error;
  };
  const Case cases[] = {
      {"not an object", R"([])", "Pod: expected object"},
      {"bad quantity",
       R"({"spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "lots"}}}]}})",
       "spec.containers[1].resources.requests[cpu]: "},
      {"negative request",
       R"({"spec": {"initContainers": [{"name": "a", "resources": {"requests": {"memory": "-1Gi"}}}]}})",
       "spec.initContainers[0].resources.requests[memory]: must be greater than or equal to 0"},
      {"non-standard container resource",
       R"({"spec": {"containers": [{"name": "a", "resources": {"limits": {"foo": "1"}}}]}})",
       "spec.containers[0].resources.limits[foo]: must be a standard resource for containers"},
      {"absurd request",
       R"({"spec": {"containers": [{"name": "a", "resources": {"requests": {"memory": "900E"}}}]}})",
       "spec.containers[0].resources.requests[memory]: 900E is beyond the scheduler's limit"},
      {"bad overhead", R"({"spec": {"overhead": {"cpu": true}}})", "spec.overhead[cpu]: "},
      {"containers not a list", R"({"spec": {"containers": {}}})",
       "spec.containers: expected array, got object"},
      {"unknown init restartPolicy",
       R"({"spec": {"initContainers": [{"name": "a", "restartPolicy": "OnFailure"}]}})",
       "spec.initContainers[0].restartPolicy: unsupported value \"OnFailure\""},
      {"hostPort out of range",
       R"({"spec": {"containers": [{"name": "a", "ports": [{"hostPort": 70000}]}]}})",
       "spec.containers[0].ports[0].hostPort: 70000 is not between 0 and 65535"},
      {"unknown protocol",
       R"({"spec": {"containers": [{"name": "a", "ports": [{"hostPort": 80, "protocol": "HTTP"}]}]}})",
       "spec.containers[0].ports[0].protocol: unsupported value \"HTTP\""},
      {"priority not a number", R"({"spec": {"priority": "high"}})",
       "spec.priority: expected integer, got string"},
      {"priority beyond int32", R"({"spec": {"priority": 3000000000}})",
       "spec.priority: 3000000000 overflows int32"},
      {"unknown preemptionPolicy", R"({"spec": {"preemptionPolicy": "Sometimes"}})",
       "spec.preemptionPolicy: unsupported value \"Sometimes\""},
      {"unknown whenUnsatisfiable",
       R"({"spec": {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "Foo"}]}})",
       "spec.topologySpreadConstraints[0].whenUnsatisfiable: unsupported value \"Foo\""},
      {"zero maxSkew",
       R"({"spec": {"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}]}})",
       "spec.topologySpreadConstraints[0].maxSkew: 0 must be greater than zero"},
      {"unknown label selector operator",
       R"({"spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
           {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bar"}]}, "topologyKey": "z"}]}}}})",
       "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
       "matchExpressions[0].operator: unsupported value \"Bar\""},
      {"invalid label selector key",
       R"({"spec": {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
           {"weight": 1, "podAffinityTerm": {"labelSelector": {"matchLabels": {"bad key": "x"}}}}]}}}})",
       "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
       "podAffinityTerm.labelSelector.matchLabels: "},
      {"weight not a number",
       R"({"spec": {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
           {"weight": "heavy"}]}}}})",
       "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "expected integer"},
      {"unknown node selector operator",
       R"({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
           "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Bar"}]}]}}}}})",
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].operator: unsupported value \"Bar\""},
      {"unknown toleration operator",
       R"({"spec": {"tolerations": [{"key": "a"}, {"key": "b", "operator": "Bar"}]}})",
       "spec.tolerations[1].operator: unsupported value \"Bar\""},
      {"nodeSelector value not a string", R"({"spec": {"nodeSelector": {"zone": 1}}})",
       "spec.nodeSelector[zone]: expected string"},
      {"label not a string", R"({"metadata": {"labels": {"app": 1}}})",
       "metadata.labels[app]: expected string"},
      {"kept annotation not a string",
       R"({"metadata": {"annotations": {"scheduling.koordinator.sh/load-estimated-scaling-factors": {}}}})",
       "metadata.annotations[scheduling.koordinator.sh/load-estimated-scaling-factors]: "
       "expected string"},
      {"bad creationTimestamp", R"({"metadata": {"creationTimestamp": "yesterday"}})",
       "metadata.creationTimestamp: \"yesterday\" is not an RFC 3339 time"},
      {"creationTimestamp without a zone",
       R"({"metadata": {"creationTimestamp": "2024-05-01T10:00:00"}})",
       "metadata.creationTimestamp: "},
      {"controller not a boolean",
       R"({"metadata": {"ownerReferences": [{"kind": "ReplicaSet", "controller": "yes"}]}})",
       "metadata.ownerReferences[0].controller: expected boolean"},
      {"bad condition time",
       R"({"status": {"conditions": [{"type": "Initialized", "status": "True",
                                        "lastTransitionTime": "later"}]}})",
       "status.conditions[0].lastTransitionTime: \"later\" is not an RFC 3339 time"},
      {"bad startTime", R"({"status": {"startTime": "soon"}})",
       "status.startTime: \"soon\" is not an RFC 3339 time"},
      {"unknown phase", R"({"status": {"phase": "Sleeping"}})",
       "status.phase: unsupported value \"Sleeping\""},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto pod = decode(c.pod);
      REQUIRE_FALSE(pod);
      CHECK_THAT(pod.error().message, Catch::StartsWith(c.error));
    }
  }
}

TEST_CASE("pod decode: volumes keep the source kinds the volume plugins tell apart", "[volumes]") {
  auto pod = decode(R"({
    "metadata": {"namespace": "ns", "name": "web-0"},
    "spec": {"volumes": [
      {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0", "readOnly": true}},
      {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
      {"name": "pd", "gcePersistentDisk": {"pdName": "disk-1", "fsType": "ext4"}},
      {"name": "ebs", "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1", "readOnly": true}},
      {"name": "azure", "azureDisk": {"diskName": "d1", "diskURI": "uri"}},
      {"name": "cinder", "cinder": {"volumeID": "c1"}},
      {"name": "iscsi", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2016-12.server:t1",
                                   "lun": 0, "readOnly": true}},
      {"name": "rbd", "rbd": {"monitors": ["a:6789", "b:6789"], "image": "img"}},
      {"name": "rbd-pool", "rbd": {"monitors": ["c:6789"], "image": "img2", "pool": "fast"}},
      {"name": "inline-csi", "csi": {"driver": "ebs.csi.aws.com"}},
      {"name": "cache", "emptyDir": {}},
      {"name": "config", "configMap": {"name": "cfg"}}
    ]}
  })");
  REQUIRE(pod);
  using K = VolumeSourceKind;
  struct Want {
    const char* name;
    K kind;
    const char* id;
    bool read_only;
  };
  const Want want[] = {
      {"data", K::kPersistentVolumeClaim, "data-web-0", true},
      {"scratch", K::kEphemeral, "web-0-scratch", false},
      {"pd", K::kGCEPersistentDisk, "disk-1", false},
      {"ebs", K::kAWSElasticBlockStore, "aws://us-east-1a/vol-1", true},
      {"azure", K::kAzureDisk, "d1", false},
      {"cinder", K::kCinder, "c1", false},
      {"iscsi", K::kISCSI, "iqn.2016-12.server:t1", true},
      {"rbd", K::kRBD, "img", false},
      {"rbd-pool", K::kRBD, "img2", false},
      {"inline-csi", K::kCSI, "ebs.csi.aws.com", false},
      {"cache", K::kOther, "", false},
      {"config", K::kOther, "", false},
  };
  REQUIRE(pod->volumes.size() == std::size(want));
  for (std::size_t i = 0; i < std::size(want); ++i) {
    INFO(want[i].name);
    const PodVolume& v = pod->volumes[i];
    CHECK(v.name == want[i].name);
    CHECK(v.kind == want[i].kind);
    CHECK(v.id == want[i].id);
    CHECK(v.read_only == want[i].read_only);
  }
  CHECK(pod->volumes[0].usesClaim());
  CHECK(pod->volumes[1].usesClaim());
  CHECK_FALSE(pod->volumes[2].usesClaim());
  // The API's default pool.
  CHECK(pod->volumes[7].monitors == std::vector<std::string>{"a:6789", "b:6789"});
  CHECK(pod->volumes[7].pool == "rbd");
  CHECK(pod->volumes[8].pool == "fast");
}

TEST_CASE("pod decode: bad volumes are refused with the field's path", "[volumes]") {
  struct Case {
    const char* name;
    const char* pod;
    const char* error;
  };
  const Case cases[] = {
      {"volumes not a list", R"({"spec": {"volumes": {}}})", "spec.volumes: expected array"},
      {"volume not an object", R"({"spec": {"volumes": [1]}})", "spec.volumes"},
      {"name not a string", R"({"spec": {"volumes": [{"name": 1}]}})",
       "spec.volumes[0].name: expected string"},
      {"source not an object",
       R"({"spec": {"volumes": [{"name": "a", "gcePersistentDisk": "pd"}]}})",
       "spec.volumes[0].gcePersistentDisk: expected object"},
      {"claimName not a string",
       R"({"spec": {"volumes": [{"name": "a"}, {"name": "b", "persistentVolumeClaim": {"claimName": 3}}]}})",
       "spec.volumes[1].persistentVolumeClaim.claimName: expected string"},
      {"readOnly not a boolean",
       R"({"spec": {"volumes": [{"name": "a", "awsElasticBlockStore": {"volumeID": "v", "readOnly": "yes"}}]}})",
       "spec.volumes[0].awsElasticBlockStore.readOnly: expected boolean"},
      {"monitors not a list",
       R"({"spec": {"volumes": [{"name": "a", "rbd": {"image": "i", "monitors": "m"}}]}})",
       "spec.volumes[0].rbd.monitors: expected array"},
      {"pool not a string",
       R"({"spec": {"volumes": [{"name": "a", "rbd": {"image": "i", "pool": 1}}]}})",
       "spec.volumes[0].rbd.pool: expected string"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto pod = decode(c.pod);
    REQUIRE_FALSE(pod);
    CHECK_THAT(pod.error().message, Catch::StartsWith(c.error));
  }
}

TEST_CASE("pod decode: at most kMaxPodVolumes volumes", "[volumes]") {
  auto podWithVolumes = [](std::size_t n) {
    json::array volumes;
    for (std::size_t i = 0; i < n; ++i) {
      json::object v;
      v["name"] = "v" + std::to_string(i);
      v["emptyDir"] = json::object();
      volumes.push_back(std::move(v));
    }
    json::object spec;
    spec["volumes"] = std::move(volumes);
    json::object root;
    root["spec"] = std::move(spec);
    return json::value(std::move(root));
  };
  auto at_bound = decodePodInfo(podWithVolumes(kMaxPodVolumes));
  REQUIRE(at_bound);
  CHECK(at_bound->volumes.size() == kMaxPodVolumes);
  auto over = decodePodInfo(podWithVolumes(kMaxPodVolumes + 1));
  REQUIRE_FALSE(over);
  CHECK(over.error().message == "spec.volumes: 1025 volumes, more than the scheduler's 1024");
}

TEST_CASE("pod decode: at most kMaxSchedulingGates gates and kMaxPodContainers containers",
          "[volumes]") {
  // A list of n objects under spec.<field>, each {"name": ..., "image": ...}.
  auto podWith = [](const char* field, std::size_t n) {
    json::array items;
    for (std::size_t i = 0; i < n; ++i) {
      json::object item;
      item["name"] = "x" + std::to_string(i);
      item["image"] = "busybox";
      items.push_back(std::move(item));
    }
    json::object spec;
    spec[field] = std::move(items);
    json::object root;
    root["spec"] = std::move(spec);
    return json::value(std::move(root));
  };
  auto gates = decodePodInfo(podWith("schedulingGates", kMaxSchedulingGates));
  REQUIRE(gates);
  CHECK(gates->scheduling_gates.size() == kMaxSchedulingGates);
  auto too_many_gates = decodePodInfo(podWith("schedulingGates", kMaxSchedulingGates + 1));
  REQUIRE_FALSE(too_many_gates);
  CHECK(too_many_gates.error().message ==
        "spec.schedulingGates: 1025 gates, more than the scheduler's 1024");

  auto containers = decodePodInfo(podWith("containers", kMaxPodContainers));
  REQUIRE(containers);
  CHECK(containers->container_images.size() == kMaxPodContainers);
  auto too_many = decodePodInfo(podWith("containers", kMaxPodContainers + 1));
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message ==
        "spec.containers: 1025 containers, more than the scheduler's 1024");
}
