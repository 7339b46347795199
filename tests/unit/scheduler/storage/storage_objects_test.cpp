// The storage projections the volume plugins share: each object decoded from the API's JSON,
// errors naming the field, and the bounds on lists read from outside.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>

#include "catch_expected.h"
#include "plugins/upstream/storage/storage_objects.h"

namespace koord::roles::scheduler::storage {
namespace {

namespace json = boost::json;

TEST_CASE("storage: a PersistentVolume decodes to what the volume plugins read",
          "[scheduler][storage]") {
  auto pv = decodePersistentVolume(json::parse(R"({
    "metadata": {"name": "pv1", "uid": "u1", "resourceVersion": "42",
                 "labels": {"tier": "hot"},
                 "annotations": {"pv.kubernetes.io/bound-by-controller": "yes",
                                 "kubectl.kubernetes.io/last-applied-configuration": "{}"},
                 "deletionTimestamp": "2024-01-01T00:00:00Z"},
    "spec": {"capacity": {"storage": "10Gi"},
             "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
             "storageClassName": "local", "volumeMode": "Block",
             "claimRef": {"namespace": "ns", "name": "data", "uid": "c1"},
             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}},
             "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}},
    "status": {"phase": "Bound"}})"));
  REQUIRE(pv);
  CHECK(pv->name == "pv1");
  CHECK(pv->resource_version == "42");
  CHECK(pv->labels.at("tier") == "hot");
  CHECK(pv->annotations.size() == 1);  // only the kept ones
  CHECK(pv->terminating);
  CHECK(pv->capacity == 10LL * 1024 * 1024 * 1024);
  CHECK(pv->access_modes == (static_cast<AccessModes>(AccessMode::kReadWriteOnce) |
                             static_cast<AccessModes>(AccessMode::kReadOnlyMany)));
  CHECK(pv->storage_class == "local");
  CHECK(pv->volume_mode == VolumeMode::kBlock);
  REQUIRE(pv->claim_ref);
  CHECK(pv->claim_ref->namespace_ == "ns");
  CHECK(pv->claim_ref->name == "data");
  CHECK(pv->claim_ref->uid == "c1");
  REQUIRE(pv->node_affinity);
  CHECK(pv->node_affinity->matches({{"kubernetes.io/hostname", "n1"}}, "n1"));
  CHECK_FALSE(pv->node_affinity->matches({{"kubernetes.io/hostname", "n2"}}, "n2"));
  CHECK(pv->kind == VolumeSourceKind::kCSI);
  CHECK(pv->id == "ebs.csi.aws.com");
  CHECK(pv->volume_handle == "vol-1");
  CHECK(pv->phase == "Bound");
}

TEST_CASE("storage: the beta class annotation wins over storageClassName", "[scheduler][storage]") {
  auto pv = decodePersistentVolume(json::parse(R"({
    "metadata": {"name": "pv1",
                 "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"}},
    "spec": {"storageClassName": "field"}})"));
  REQUIRE(pv);
  CHECK(pv->storage_class == "beta");
  auto claim = decodePersistentVolumeClaim(json::parse(R"({
    "metadata": {"name": "c", "namespace": "ns",
                 "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"}},
    "spec": {"storageClassName": "field"}})"));
  REQUIRE(claim);
  CHECK(claim->storage_class == "beta");
  // A minimal PV: no affinity, no claim, Filesystem, nothing requested.
  auto bare = decodePersistentVolume(json::parse(R"({"metadata": {"name": "bare"}})"));
  REQUIRE(bare);
  CHECK_FALSE(bare->node_affinity);
  CHECK_FALSE(bare->claim_ref);
  CHECK(bare->volume_mode == VolumeMode::kFilesystem);
  CHECK(bare->capacity == 0);
}

TEST_CASE("storage: a PersistentVolumeClaim decodes to what the volume plugins read",
          "[scheduler][storage]") {
  auto claim = decodePersistentVolumeClaim(json::parse(R"({
    "metadata": {"name": "data", "namespace": "ns", "uid": "c1", "resourceVersion": "7",
                 "annotations": {"volume.kubernetes.io/selected-node": "n1",
                                 "pv.kubernetes.io/bind-completed": "yes",
                                 "other": "dropped"},
                 "ownerReferences": [
                   {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "p1",
                    "controller": true}]},
    "spec": {"accessModes": ["ReadWriteMany"],
             "resources": {"requests": {"storage": "1500Mi"}},
             "storageClassName": "local", "volumeName": "pv1",
             "selector": {"matchLabels": {"tier": "hot"}}},
    "status": {"phase": "Bound"}})"));
  REQUIRE(claim);
  CHECK(claim->key() == "ns/data");
  CHECK(claim->uid == "c1");
  CHECK(claim->resource_version == "7");
  CHECK(claim->annotation(kAnnSelectedNode) == "n1");
  CHECK(claim->annotation(kAnnBindCompleted) == "yes");
  CHECK(claim->annotation("other").empty());
  CHECK(claim->controller_uid == "p1");
  CHECK(claim->access_modes == static_cast<AccessModes>(AccessMode::kReadWriteMany));
  CHECK(claim->request == 1500LL * 1024 * 1024);
  CHECK(claim->storage_class == "local");
  CHECK(claim->volume_name == "pv1");
  REQUIRE(claim->selector);
  CHECK(claim->selector->matches({{"tier", "hot"}}));
  CHECK_FALSE(claim->selector->matches({{"tier", "cold"}}));
  CHECK(claim->phase == ClaimPhase::kBound);
  CHECK_FALSE(claim->terminating);
}

TEST_CASE("storage: a StorageClass and a CSINode decode", "[scheduler][storage]") {
  auto sc = decodeStorageClass(json::parse(R"({
    "metadata": {"name": "zonal"}, "provisioner": "ebs.csi.aws.com",
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowedTopologies": [{"matchLabelExpressions": [
        {"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}]})"));
  REQUIRE(sc);
  CHECK(sc->name == "zonal");
  CHECK(sc->provisioner == "ebs.csi.aws.com");
  CHECK(sc->binding_mode == VolumeBindingMode::kWaitForFirstConsumer);
  REQUIRE(sc->allowed_topologies.size() == 1);
  CHECK(sc->allowed_topologies[0].matches({{"topology.kubernetes.io/zone", "b"}}, ""));
  CHECK_FALSE(sc->allowed_topologies[0].matches({{"topology.kubernetes.io/zone", "c"}}, ""));
  auto immediate = decodeStorageClass(json::parse(R"({"metadata": {"name": "s"}})"));
  REQUIRE(immediate);
  CHECK(immediate->binding_mode == VolumeBindingMode::kImmediate);

  auto node = decodeCSINode(json::parse(R"({
    "metadata": {"name": "n1",
                 "annotations": {"storage.alpha.kubernetes.io/migrated-plugins":
                                 "kubernetes.io/aws-ebs,,kubernetes.io/gce-pd"}},
    "spec": {"drivers": [
      {"name": "ebs.csi.aws.com", "nodeID": "i-1", "topologyKeys": ["zone"],
       "allocatable": {"count": 25}},
      {"name": "other", "nodeID": "x"}]}})"));
  REQUIRE(node);
  CHECK(node->name == "n1");
  CHECK(node->migrated_plugins ==
        std::vector<std::string>{"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"});
  REQUIRE(node->drivers.size() == 2);
  CHECK(node->drivers[0].name == "ebs.csi.aws.com");
  CHECK(node->drivers[0].node_id == "i-1");
  CHECK(node->drivers[0].topology_keys == std::vector<std::string>{"zone"});
  CHECK(node->drivers[0].allocatable_count == 25);
  CHECK_FALSE(node->drivers[1].allocatable_count);
}

TEST_CASE("storage: bad objects give errors naming the field", "[scheduler][storage]") {
  struct Row {
    std::string kind;
    std::string text;
    std::string error;
  };
  const std::vector<Row> rows = {
      {"pv", R"([])", "PersistentVolume: expected object"},
      {"pv", R"({"spec": {"capacity": {"storage": "ten"}}})", "spec.capacity[storage]"},
      {"pv", R"({"spec": {"capacity": {"storage": "-1Gi"}}})",
       "spec.capacity[storage]: must be greater than or equal to 0"},
      {"pv", R"({"spec": {"accessModes": ["ReadWriteSometimes"]}})",
       R"(spec.accessModes[0]: unsupported value "ReadWriteSometimes")"},
      {"pv", R"({"spec": {"volumeMode": "Tape"}})", R"(spec.volumeMode: unsupported value "Tape")"},
      {"pv", R"({"spec": {"claimRef": {"name": 3}}})", "spec.claimRef.name"},
      {"pv", R"({"spec": {"csi": {"driver": "d", "volumeHandle": 1}}})", "spec.csi.volumeHandle"},
      {"pv", R"({"status": {"phase": 1}})", "status.phase"},
      {"pvc", R"({"spec": {"resources": {"requests": {"storage": "x"}}}})",
       "spec.resources.requests[storage]"},
      {"pvc", R"({"spec": {"volumeName": []}})", "spec.volumeName"},
      {"pvc", R"({"spec": {"selector": {"matchLabels": {"a": 1}}}})", "spec.selector"},
      {"pvc", R"({"status": {"phase": "Floating"}})",
       R"(status.phase: unsupported value "Floating")"},
      {"sc", R"({"volumeBindingMode": "Later"})",
       R"(volumeBindingMode: unsupported value "Later")"},
      {"sc", R"({"allowedTopologies": [{"matchLabelExpressions": [{"key": 1}]}]})",
       "allowedTopologies[0].matchLabelExpressions[0].key"},
      {"csinode", R"({"spec": {"drivers": [{"name": "d", "allocatable": {"count": -1}}]}})",
       "spec.drivers[0].allocatable.count: must be greater than or equal to 0"},
      {"csinode", R"({"spec": {"drivers": [{"name": "d", "allocatable": {"count": 3000000000}}]}})",
       "spec.drivers[0].allocatable.count"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.kind, row.text);
    const json::value v = json::parse(row.text);
    std::string message;
    if (row.kind == "pv") {
      auto r = decodePersistentVolume(v);
      REQUIRE_FALSE(r);
      message = r.error().message;
    } else if (row.kind == "pvc") {
      auto r = decodePersistentVolumeClaim(v);
      REQUIRE_FALSE(r);
      message = r.error().message;
    } else if (row.kind == "sc") {
      auto r = decodeStorageClass(v);
      REQUIRE_FALSE(r);
      message = r.error().message;
    } else {
      auto r = decodeCSINode(v);
      REQUIRE_FALSE(r);
      message = r.error().message;
    }
    CHECK_THAT(message, Catch::Contains(row.error));
  }
}

TEST_CASE("storage: lists read from objects are bounded", "[scheduler][storage]") {
  json::array modes;
  for (std::size_t i = 0; i <= kMaxAccessModes; ++i)
    modes.emplace_back("ReadWriteOnce");
  auto pv = decodePersistentVolume(json::value{{"spec", {{"accessModes", modes}}}});
  REQUIRE_FALSE(pv);
  CHECK_THAT(pv.error().message, Catch::Contains("spec.accessModes: 17 modes, more than 16"));

  json::array terms;
  for (std::size_t i = 0; i <= kMaxTopologyTerms; ++i)
    terms.push_back(json::object{{"matchLabelExpressions", json::array{}}});
  auto sc = decodeStorageClass(json::value{{"allowedTopologies", terms}});
  REQUIRE_FALSE(sc);
  CHECK_THAT(sc.error().message, Catch::Contains("allowedTopologies: 257 terms, more than 256"));

  json::array drivers;
  for (std::size_t i = 0; i <= kMaxCSINodeDrivers; ++i)
    drivers.push_back(json::object{{"name", "d" + std::to_string(i)}});
  auto node = decodeCSINode(json::value{{"spec", {{"drivers", drivers}}}});
  REQUIRE_FALSE(node);
  CHECK_THAT(node.error().message, Catch::Contains("spec.drivers: 257 drivers, more than 256"));

  // At the bound itself, each decodes.
  modes.pop_back();
  CHECK(decodePersistentVolume(json::value{{"spec", {{"accessModes", modes}}}}));
}

}  // namespace
}  // namespace koord::roles::scheduler::storage
