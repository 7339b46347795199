// The objects job scheduling reads from users: a PodGroup into its gang, a pod's gang
// annotations through the whole gang state machine, and an ElasticQuota into the quota tree.
// Byte 0 picks one, the rest is the object's JSON. Each must leave the state it touched
// consistent: no member left waiting, an annotation gang forgotten with its last member, a quota
// removed again without residue.
#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "api_object_input.h"
#include "framework/pod_info.h"
#include "koord/apis/elastic_quota.h"
#include "koord/apis/gang.h"
#include "koord/apis/pod_group.h"
#include "plugins/coscheduling/gang_cache.h"
#include "plugins/elasticquota/group_quota_manager.h"
#include "plugins/elasticquota/quota_info.h"

namespace {

namespace json = boost::json;
namespace sched = koord::roles::scheduler;
using namespace std::chrono_literals;

void check(bool ok) {
  if (!ok)
    std::abort();
}

void podGroup(const json::value& v) {
  auto g = koord::apis::decodePodGroup(v);
  if (!g)
    return;
  check(g->waitTime(600s).count() >= 0);
  auto spec = koord::apis::gangSpecFromPodGroup(*g, 600s);
  if (!spec)
    return;
  check(!spec->groups.empty() && !spec->group_id.empty());
  check(spec->groups.size() <= koord::apis::kMaxGangGroups);
  sched::coscheduling::GangCache cache(600s);
  cache.onPodGroupAdd(*g);
  cache.onPodGroupUpdate(*g);
  cache.onPodGroupDelete(*g);
  check(!cache.gang(g->id()).has_value());
}

void gangPod(const json::value& v) {
  auto pod = sched::decodePodInfo(v);
  if (!pod)
    return;
  if (!pod->gang_id.empty())
    check(pod->gang_error.empty() &&
          pod->gang_id.size() <= pod->namespace_.size() + 1 + koord::apis::kMaxGangNameBytes);
  sched::coscheduling::GangCache cache(600s);
  cache.onPodAdd(*pod);
  cache.onPodUpdate(*pod);
  (void)cache.preFilter(*pod, false);
  (void)cache.permit(*pod);
  (void)cache.unreserve(*pod);
  check(cache.waitingCount() == 0);
  (void)cache.permit(*pod);
  cache.postBind(*pod);
  check(cache.waitingCount() == 0);
  cache.onPodDelete(*pod);
  check(cache.waitingCount() == 0);
  // A gang of the pod's own annotations leaves with its only member.
  if (!pod->gang_id.empty() && !pod->labels.contains(std::string(koord::apis::kLabelPodGroup)))
    check(!cache.gang(pod->gang_id).has_value());
}

void elasticQuota(const json::value& v) {
  auto q = koord::apis::decodeElasticQuota(v);
  if (!q)
    return;
  sched::elasticquota::GroupQuotaManager manager{sched::elasticquota::ElasticQuotaArgs{}};
  const bool added = manager.updateQuota(*q).has_value();
  (void)manager.summary(q->name);
  (void)manager.treeProblems();
  sched::elasticquota::QuotaPod pod;
  pod.namespace_ = q->namespace_;
  pod.name = "p";
  pod.request = {{"cpu", 1000}};
  pod.assigned = true;
  const std::string quota = manager.podQuotaName(q->namespace_, {});
  manager.onPodAdd(quota, pod);
  (void)manager.preFilter(quota, pod);
  manager.onPodDelete(pod.namespace_, pod.name);
  if (added && manager.hasQuota(q->name) &&
      manager.deleteQuota(q->name).has_value())  // the built-in ones refuse
    check(!manager.hasQuota(q->name));
}

const koord::fuzz::ApiObjectCheck kChecks[] = {podGroup, gangPod, elasticQuota};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return koord::fuzz::runApiObjectCheck(data, size, kChecks);
}
