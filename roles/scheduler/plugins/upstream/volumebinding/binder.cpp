#include "plugins/upstream/volumebinding/binder.h"

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <utility>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::scheduler::upstream::volumebinding {
namespace {

namespace json = boost::json;
using storage::PersistentVolume;
using storage::PersistentVolumeClaim;

kube::ResourceRef volumeRef(const std::string& name) {
  return {"", "v1", "persistentvolumes", "", name, ""};
}

kube::ResourceRef claimRef(const PersistentVolumeClaim& claim) {
  return {"", "v1", "persistentvolumeclaims", claim.namespace_, claim.name, ""};
}

// Whether the informer's object may predate our write: its version is not past the one the
// write was made against (changed) or the one we read (unchanged). Versions that do not read
// as integers never hold the wait up.
bool stale(const std::string& api_version, const std::string& written_against, bool changed) {
  auto api = parseResourceVersion(api_version);
  auto ours = parseResourceVersion(written_against);
  if (!api || !ours)
    return false;
  return changed ? *api <= *ours : *api < *ours;
}

// Whether `pv`'s node affinity holds on the node; `known` carries a compiled affinity that is
// reused when the PV's is still the same.
bool fitsNode(const PersistentVolume& pv, const VolumeRef* known, const kube::Labels& labels) {
  if (!pv.node_affinity)
    return true;
  if (known != nullptr && known->pv && known->pv->node_affinity == pv.node_affinity)
    return known->fits(labels);
  return NodeLabelMatcher::volumeAffinity(*pv.node_affinity).matches(labels);
}

}  // namespace

struct VolumeBinder::Op {
  std::string pod;
  std::shared_ptr<const PodVolumes> volumes;
  StatusCallback done;
  bool finished = false;  // under VolumeBinder::mu_
};

VolumeBinder::VolumeBinder(VolumeCache& cache, const ClusterView& cluster,
                           std::chrono::milliseconds timeout)
    : cache_(cache), cluster_(cluster), timeout_(timeout) {}

json::value VolumeBinder::bindVolumePatch(const StaticBinding& binding) {
  const PersistentVolume& pv = *binding.volume.pv;
  const PersistentVolumeClaim& claim = *binding.claim;
  json::object metadata{{"resourceVersion", pv.resource_version}};
  if (auto it = pv.annotations.find(storage::kAnnBoundByController); it != pv.annotations.end())
    metadata["annotations"] = json::object{{storage::kAnnBoundByController, it->second}};
  json::object ref{
      {"kind", "PersistentVolumeClaim"},
      {"apiVersion", "v1"},
      {"namespace", claim.namespace_},
      {"name", claim.name},
      {"uid", claim.uid},
      {"resourceVersion", claim.resource_version},
  };
  return json::object{{"metadata", std::move(metadata)},
                      {"spec", json::object{{"claimRef", std::move(ref)}}}};
}

json::value VolumeBinder::selectNodePatch(const PersistentVolumeClaim& claim,
                                          const std::string& node) {
  return json::object{
      {"metadata", json::object{{"resourceVersion", claim.resource_version},
                                {"annotations", json::object{{storage::kAnnSelectedNode, node}}}}}};
}

void VolumeBinder::bind(std::string pod_key, std::shared_ptr<const PodVolumes> volumes,
                        StatusCallback done) {
  auto op = std::make_shared<Op>();
  op->pod = std::move(pod_key);
  op->volumes = std::move(volumes);
  op->done = std::move(done);
  {
    std::lock_guard lock(mu_);
    ++in_flight_;
  }
  sendNext(op, 0);
}

void VolumeBinder::sendNext(const std::shared_ptr<Op>& op, std::size_t i) {
  const PodVolumes& v = *op->volumes;
  const std::size_t bindings = v.static_bindings.size();
  // A volume already bound to its claim needs no write (upstream's Update of an unchanged PV).
  while (i < bindings && !v.static_bindings[i].changed)
    ++i;
  std::weak_ptr<VolumeBinder> self = weak_from_this();
  if (i < bindings) {
    const StaticBinding& b = v.static_bindings[i];
    KOORD_LOG_INFO("volumebinding: pod {}: binding volume {} to claim {}", op->pod,
                   b.volume.pv->name, claimKey(*b.claim));
    cluster_.mergePatch(volumeRef(b.volume.pv->name), bindVolumePatch(b),
                        [self, op, i](kube::Expected<void> r) {
                          auto binder = self.lock();
                          if (binder == nullptr)
                            return;
                          if (!r) {
                            const PodVolumes& pv = *op->volumes;
                            for (std::size_t k = i; k < pv.static_bindings.size(); ++k)
                              binder->cache_.restoreVolume(pv.static_bindings[k].volume.pv->name);
                            for (const auto& c : pv.dynamic_provisions)
                              binder->cache_.restoreClaim(claimKey(*c));
                            binder->finish(op, Status::error(r.error().message));
                            return;
                          }
                          binder->sendNext(op, i + 1);
                        });
    return;
  }
  const std::size_t j = i - bindings;
  if (j < v.dynamic_provisions.size()) {
    const PersistentVolumeClaim& claim = *v.dynamic_provisions[j];
    KOORD_LOG_INFO("volumebinding: pod {}: asking for claim {} to be provisioned on {}", op->pod,
                   claimKey(claim), v.node->name);
    cluster_.mergePatch(claimRef(claim), selectNodePatch(claim, v.node->name),
                        [self, op, i, j](kube::Expected<void> r) {
                          auto binder = self.lock();
                          if (binder == nullptr)
                            return;
                          if (!r) {
                            const PodVolumes& pv = *op->volumes;
                            for (std::size_t k = j; k < pv.dynamic_provisions.size(); ++k)
                              binder->cache_.restoreClaim(claimKey(*pv.dynamic_provisions[k]));
                            binder->finish(op, Status::error(r.error().message));
                            return;
                          }
                          binder->sendNext(op, i + 1);
                        });
    return;
  }
  startWaiting(op);
}

void VolumeBinder::startWaiting(const std::shared_ptr<Op>& op) {
  {
    std::lock_guard lock(mu_);
    if (op->finished)
      return;
    waiting_.push_back(op);
  }
  if (timeout_.count() > 0) {
    std::weak_ptr<VolumeBinder> self = weak_from_this();
    std::weak_ptr<Op> weak_op = op;
    const bool armed = cluster_.runAfter(timeout_, [self, weak_op] {
      auto binder = self.lock();
      auto o = weak_op.lock();
      if (binder != nullptr && o != nullptr)
        binder->finish(o, Status::error(std::string(kBindTimeoutMessage)));
    });
    if (!armed) {
      static std::atomic<bool> said{false};
      if (!said.exchange(true))
        KOORD_LOG_WARNING(
            "volumebinding: this scheduler has no timer: volume binds wait without a timeout");
    }
  }
  recheck(op);
}

VolumeBinder::Check VolumeBinder::check(const Op& op, std::string& why) const {
  const PodVolumes& v = *op.volumes;
  const Node& node = *v.node;
  for (const StaticBinding& b : v.static_bindings) {
    const std::string& name = b.volume.pv->name;
    auto pv = cache_.apiVolume(name);
    if (pv == nullptr) {
      why = fmt::format("failed to check binding: could not find v1.PersistentVolume {:?}", name);
      return Check::kFailed;
    }
    const std::string key = claimKey(*b.claim);
    auto claim = cache_.apiClaim(key);
    if (claim == nullptr) {
      why =
          fmt::format("failed to check binding: could not find v1.PersistentVolumeClaim {:?}", key);
      return Check::kFailed;
    }
    if (stale(pv->resource_version, b.volume.pv->resource_version, b.changed))
      return Check::kWait;
    if (!fitsNode(*pv, &b.volume, node.labels)) {
      why = fmt::format(
          "pv {:?} node affinity doesn't match node {:?}: no matching "
          "NodeSelectorTerms",
          name, node.name);
      return Check::kFailed;
    }
    if (!pv->claim_ref || pv->claim_ref->uid.empty()) {
      why = fmt::format("ClaimRef got reset for pv {:?}", name);
      return Check::kFailed;
    }
    if (!claimFullyBound(*claim))
      return Check::kWait;
  }
  for (const auto& provisioned : v.dynamic_provisions) {
    const std::string key = claimKey(*provisioned);
    auto claim = cache_.apiClaim(key);
    if (claim == nullptr) {
      why = fmt::format(
          "failed to check provisioning pvc: could not find v1.PersistentVolumeClaim {:?}", key);
      return Check::kFailed;
    }
    if (stale(claim->resource_version, provisioned->resource_version, true))
      return Check::kWait;
    // The provisioner drops the annotation when it gives up, to have the pod scheduled again.
    auto selected = claim->annotations.find(storage::kAnnSelectedNode);
    if (selected == claim->annotations.end() || selected->second != node.name) {
      why = fmt::format("provisioning failed for PVC {:?}", claim->name);
      return Check::kFailed;
    }
    if (!claim->volume_name.empty()) {
      auto pv = cache_.apiVolume(claim->volume_name);
      if (pv == nullptr)
        return Check::kWait;  // not seen yet; a deleted one unbinds the claim in time
      if (!fitsNode(*pv, nullptr, node.labels)) {
        why = fmt::format(
            "pv {:?} node affinity doesn't match node {:?}: no matching "
            "NodeSelectorTerms",
            pv->name, node.name);
        return Check::kFailed;
      }
    }
    if (!claimFullyBound(*claim))
      return Check::kWait;
  }
  return Check::kBound;
}

void VolumeBinder::recheck(const std::shared_ptr<Op>& op) {
  std::string why;
  switch (check(*op, why)) {
    case Check::kWait:
      return;
    case Check::kBound:
      finish(op, Status::success());
      return;
    case Check::kFailed:
      finish(op, Status::error("binding volumes: " + why));
      return;
  }
}

void VolumeBinder::objectChanged() {
  std::vector<std::shared_ptr<Op>> ops;
  {
    std::lock_guard lock(mu_);
    if (waiting_.empty())
      return;
    ops = waiting_;
  }
  for (const auto& op : ops)
    recheck(op);
}

void VolumeBinder::finish(const std::shared_ptr<Op>& op, Status status) {
  {
    std::lock_guard lock(mu_);
    if (op->finished)
      return;
    op->finished = true;
    --in_flight_;
    std::erase(waiting_, op);
  }
  if (!status.ok())
    KOORD_LOG_INFO("volumebinding: pod {}: binding volumes failed: {}", op->pod, status.message());
  op->done(std::move(status));
}

std::size_t VolumeBinder::inFlight() const {
  std::lock_guard lock(mu_);
  return in_flight_;
}

}  // namespace koord::roles::scheduler::upstream::volumebinding
