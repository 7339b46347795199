#include "quota_profile_reconciler.h"

#include <boost/json.hpp>

#include <chrono>

#include <fmt/format.h>

#include "controller/quota_profile.h"
#include "koord/core/log.h"
#include "koord/kube/rest_client.h"
#include "manager_informers.h"

namespace koord::roles::manager {

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr auto kResync = 10s;
constexpr auto kWriteRetry = 2s;

std::string describe(const kube::ApiError& e) {
  return fmt::format("{} {}: {}", e.code, e.reason, e.message);
}

kube::ResourceRef profileRef(const apis::ElasticQuotaProfile& p) {
  return {std::string(apis::kQuotaGroup),
          std::string(apis::kQuotaVersion),
          std::string(apis::kElasticQuotaProfileResource),
          p.namespace_,
          p.name,
          ""};
}

kube::ResourceRef quotaRef(const std::string& ns, const std::string& name) {
  return {std::string(apis::kSchedulingSigsGroup),
          std::string(apis::kSchedulingSigsVersion),
          std::string(apis::kElasticQuotaResource),
          ns,
          name,
          ""};
}

}  // namespace

QuotaProfileReconciler::QuotaProfileReconciler(kube::RestClient& client,
                                               ManagerInformers& informers)
    : client_(client), informers_(informers) {}

ReconcileResult QuotaProfileReconciler::reconcile(const std::string& key) {
  const auto* profiles = informers_.quota_profiles.store();
  if (profiles == nullptr)
    return ReconcileResult::done();
  auto profile = profiles->get(key);
  if (!profile)
    return ReconcileResult::done();

  std::string tree_id = profile->treeId();
  if (tree_id.empty()) {
    tree_id = profileTreeId(profile->namespace_, profile->name);
    json::value patch = json::object{
        {"metadata", json::object{{"labels", json::object{{apis::kLabelQuotaTreeID, tree_id}}}}}};
    auto r = client_.patchSync(profileRef(*profile), kube::PatchType::kMergePatch, patch);
    if (!r) {
      if (kube::isNotFound(r.error()))
        return ReconcileResult::done();
      return ReconcileResult::fail(
          fmt::format("labelling profile {} with its tree id: {}", key, describe(r.error())));
    }
  }

  std::vector<ProfileNode> nodes;
  for (const auto& n : informers_.nodes.store().list())
    nodes.push_back({n->view.labels, n->view.allocatable, n->unschedulable, n->ready});
  ProfileTotals totals = profileTotals(*profile, nodes);

  auto ref = quotaRef(profile->namespace_, profile->quota_name);
  auto current = client_.getSync(ref);
  if (!current && !kube::isNotFound(current.error()))
    return ReconcileResult::fail(fmt::format("reading quota {}/{}: {}", profile->namespace_,
                                             profile->quota_name, describe(current.error())));
  if (!current) {
    json::object body = desiredProfileQuota(json::object{}, *profile, totals, tree_id);
    body["apiVersion"] =
        fmt::format("{}/{}", apis::kSchedulingSigsGroup, apis::kSchedulingSigsVersion);
    body["kind"] = apis::kElasticQuotaKind;
    auto collection = ref;
    collection.name.clear();
    auto r = client_.createSync(collection, std::move(body));
    if (!r) {
      KOORD_LOG_ERROR("quotaprofile {}: creating quota {}: {}", key, profile->quota_name,
                      describe(r.error()));
      return ReconcileResult::after(kWriteRetry);
    }
    KOORD_LOG_INFO("quotaprofile {}: created quota {}", key, profile->quota_name);
    return ReconcileResult::after(kResync);
  }
  if (!current->is_object())
    return ReconcileResult::fail(fmt::format("reading quota {}: not an object", ref.name));
  const json::object& stored = current->as_object();
  json::object desired = desiredProfileQuota(stored, *profile, totals, tree_id);
  if (desired == stored)
    return ReconcileResult::after(kResync);
  // The resourceVersion read above travels with the update: a quota changed meanwhile is a
  // conflict, retried shortly, not overwritten.
  auto r = client_.updateSync(ref, json::value(std::move(desired)));
  if (!r) {
    KOORD_LOG_ERROR("quotaprofile {}: updating quota {}: {}", key, profile->quota_name,
                    describe(r.error()));
    return ReconcileResult::after(kWriteRetry);
  }
  KOORD_LOG_INFO("quotaprofile {}: updated quota {}", key, profile->quota_name);
  return ReconcileResult::after(kResync);
}

}  // namespace koord::roles::manager
