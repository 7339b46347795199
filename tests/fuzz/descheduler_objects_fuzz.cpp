// The descheduler's projections of the API server's objects, which any pod, node or PDB writer
// (and whoever creates PodMigrationJobs) shapes: decodePod, decodeNode,
// decodePodDisruptionBudget and apis::decodePodMigrationJob. Byte 0 picks the projection, the
// rest is the object's JSON. Beyond not crashing, each checks what the descheduler relies on:
// bounded lists and clamped counts, a Koordinator QoS that follows from the label or the
// Kubernetes one, compiled selectors that can be matched, an eviction order under which a pod
// equals itself, and a PodMigrationJob whose status patch can be written.
#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "api_object_input.h"
#include "framework/object_decode.h"
#include "framework/pod_sort.h"
#include "koord/apis/pod_migration_job.h"

namespace {

namespace json = boost::json;
namespace desched = koord::roles::descheduler;

void check(bool ok) {
  if (!ok)
    std::abort();
}

void pod(const json::value& v) {
  auto p = desched::decodePod(v);
  if (!p)
    return;
  check(p->container_statuses.size() <= 2 * desched::kMaxContainersPerPod);
  check(p->container_images.size() <= desched::kMaxContainersPerPod);
  for (const auto& c : p->container_statuses)
    check(c.restart_count >= 0);
  for (const auto& w : p->preferred_anti_affinity)
    check(w.weight >= 0 && w.weight <= 100);
  for (const auto& c : p->topology_spread) {
    check(c.max_skew >= 1);
    (void)c.selector.matches(p->labels);
  }
  for (const auto* terms : {&p->required_affinity, &p->required_anti_affinity}) {
    for (const auto& t : *terms)
      (void)t.selector.matches(p->labels);
  }
  check(p->qos == koord::apis::podQoSClassWithDefault(p->labels, p->kube_qos));
  // The eviction order compares a pod with itself as equal, and sorts with a twin.
  check(!desched::evictBefore(*p, *p));
  const desched::Pod* self = &*p;
  std::vector<const desched::Pod*> pods{self, self};
  desched::sortPodsLowToHigh(pods);
  check(pods[0] == self && pods[1] == self);
}

void pdb(const json::value& v) {
  auto b = desched::decodePodDisruptionBudget(v);
  if (!b)
    return;
  check(b->disruptions_allowed >= 0);
  (void)b->selector.matches(koord::kube::Labels{{"app", "x"}});
}

void migrationJob(const json::value& v) {
  auto job = koord::apis::decodePodMigrationJob(v);
  if (!job)
    return;
  check(job->status.conditions.size() <= koord::apis::kMaxPodMigrationJobListItems);
  check(job->status.preempted_pods_ref.size() <= koord::apis::kMaxPodMigrationJobListItems);
  // What the controller writes back about the job must serialize.
  (void)json::serialize(
      koord::apis::podMigrationJobStatusPatch(job->status, job->resource_version));
  if (job->pod_ref)
    (void)json::serialize(koord::apis::toJson(*job->pod_ref));
  if (job->delete_options)
    (void)json::serialize(koord::apis::toJson(*job->delete_options));
}

void node(const json::value& v) {
  (void)desched::decodeNode(v);
}

// In the order of the selector byte.
constexpr koord::fuzz::ApiObjectCheck kChecks[] = {pod, node, pdb, migrationJob};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return koord::fuzz::runApiObjectCheck(data, size, kChecks);
}
