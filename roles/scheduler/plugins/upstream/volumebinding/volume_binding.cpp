#include "plugins/upstream/volumebinding/volume_binding.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "plugins/upstream/storage/storage_informers.h"

namespace koord::roles::scheduler::upstream::volumebinding {

const StateKey kStateKey{"VolumeBinding"};

namespace {

using storage::PersistentVolume;
using storage::PersistentVolumeClaim;
using storage::StorageClass;

// Beyond any bind worth waiting for; keeps the milliseconds from overflowing.
constexpr std::chrono::hours kLongestBindTimeout{24 * 365};

struct PodClaim {
  std::string_view name;
  bool ephemeral = false;
};

// The claims the pod's volumes name, each once (two volumes of one claim bind it once), in
// the pod's order.
std::vector<PodClaim> podClaims(const PodInfo& pod) {
  std::vector<PodClaim> out;
  for (const PodVolume& v : pod.volumes) {
    if (!v.usesClaim())
      continue;
    if (std::any_of(out.begin(), out.end(), [&](const PodClaim& c) { return c.name == v.id; }))
      continue;
    out.push_back({v.id, v.kind == VolumeSourceKind::kEphemeral});
  }
  return out;
}

std::string keyOf(const PodInfo& pod, std::string_view claim) {
  std::string key;
  key.reserve(pod.namespace_.size() + 1 + claim.size());
  key.append(pod.namespace_).append("/").append(claim);
  return key;
}

// GetBindVolumeToClaim: `pv` bound to `claim`, and whether that changed anything. A volume the
// user did not pre-bind to the claim is marked bound-by-controller, as the PV controller does.
std::pair<std::shared_ptr<const PersistentVolume>, bool> bindVolumeToClaim(
    const std::shared_ptr<const PersistentVolume>& pv, const PersistentVolumeClaim& claim) {
  const bool by_controller = !volumeBoundToClaim(*pv, claim);
  auto copy = std::make_shared<PersistentVolume>(*pv);
  bool changed = false;
  if (!pv->claim_ref || pv->claim_ref->name != claim.name ||
      pv->claim_ref->namespace_ != claim.namespace_ || pv->claim_ref->uid != claim.uid) {
    copy->claim_ref = storage::ClaimRef{claim.namespace_, claim.name, claim.uid};
    changed = true;
  }
  if (by_controller && !copy->annotations.contains(storage::kAnnBoundByController)) {
    copy->annotations.emplace(std::string(storage::kAnnBoundByController), "yes");
    changed = true;
  }
  if (!changed)
    return {pv, false};
  return {std::move(copy), true};
}

Status stateMissing() {
  return Status::error(fmt::format("reading {:?} from cycleState: not found", kName));
}

}  // namespace

VolumeBinding::VolumeBinding(std::shared_ptr<const VolumeBindingArgs> args, FrameworkHandle& handle)
    : args_(args ? std::move(args) : std::make_shared<const VolumeBindingArgs>()), handle_(handle) {
  const ClusterView& cluster = handle.cluster();
  const auto* volumes = cluster.source<PersistentVolume>(storage::kPersistentVolumes);
  const auto* claims = cluster.source<PersistentVolumeClaim>(storage::kPersistentVolumeClaims);
  classes_ = cluster.source<StorageClass>(storage::kStorageClasses);
  const auto* csi_nodes = cluster.source<storage::CSINode>(storage::kCSINodes);
  // The cache subscribes first, so that the handlers below see it up to date.
  cache_ = std::make_unique<VolumeCache>(volumes, claims);
  const auto timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::min<std::chrono::seconds>(
          std::chrono::seconds(args_->bind_timeout_seconds), kLongestBindTimeout));
  binder_ = std::make_shared<VolumeBinder>(*cache_, cluster, timeout);

  // As kube-scheduler 1.20's event handlers: a PV or claim added or changed, a CSINode added or
  // changed, or a WaitForFirstConsumer class added may let unschedulable pods in.
  if (volumes != nullptr) {
    volumes->subscribe({
        [this](const std::shared_ptr<const PersistentVolume>&) {
          binder_->objectChanged();
          handle_.requeueUnschedulable();
        },
        [this](const PersistentVolume&, const std::shared_ptr<const PersistentVolume>&) {
          binder_->objectChanged();
          handle_.requeueUnschedulable();
        },
        [this](const PersistentVolume&) { binder_->objectChanged(); },
    });
  }
  if (claims != nullptr) {
    claims->subscribe({
        [this](const std::shared_ptr<const PersistentVolumeClaim>&) {
          binder_->objectChanged();
          handle_.requeueUnschedulable();
        },
        [this](const PersistentVolumeClaim&, const std::shared_ptr<const PersistentVolumeClaim>&) {
          binder_->objectChanged();
          handle_.requeueUnschedulable();
        },
        [this](const PersistentVolumeClaim&) { binder_->objectChanged(); },
    });
  }
  if (classes_ != nullptr) {
    classes_->subscribe({
        [this](const std::shared_ptr<const StorageClass>& sc) {
          if (sc->binding_mode == storage::VolumeBindingMode::kWaitForFirstConsumer)
            handle_.requeueUnschedulable();
        },
        {},
        {},
    });
  }
  if (csi_nodes != nullptr) {
    csi_nodes->subscribe({
        [this](const std::shared_ptr<const storage::CSINode>&) { handle_.requeueUnschedulable(); },
        [this](const storage::CSINode&, const std::shared_ptr<const storage::CSINode>&) {
          handle_.requeueUnschedulable();
        },
        {},
    });
  }
}

void VolumeBinding::fillCandidates(ClaimToBind& c) const {
  const PersistentVolumeClaim& claim = *c.claim;
  // A volume bound or pre-bound to the claim is the claim's, larger or not; only the claim's
  // class is looked at, as upstream lists volumes by class.
  for (VolumeRef& v : cache_->volumesClaimedBy(claimKey(claim))) {
    if (v.pv->storage_class == claim.storage_class &&
        volumeFitsClaim(*v.pv, claim) == VolumeFit::kBoundToClaim) {
      c.bound_volume = std::move(v);
      return;
    }
  }
  cache_->forEachFreeVolume(claim.storage_class, claim.request, [&](const VolumeRef& v) {
    if (volumeFitsClaim(*v.pv, claim) == VolumeFit::kAvailable)
      c.candidates.push_back(v);
    return true;
  });
}

Status VolumeBinding::preFilter(CycleState& state, const PodInfo& pod) {
  if (std::none_of(pod.volumes.begin(), pod.volumes.end(),
                   [](const PodVolume& v) { return v.usesClaim(); }))
    return Status::skip();
  const std::vector<PodClaim> claims = podClaims(pod);
  // podHasPVCs: what the informer holds (the lister), before anything is assumed.
  for (const PodClaim& c : claims) {
    auto api = cache_->apiClaim(keyOf(pod, c.name));
    if (api == nullptr)
      return Status::unresolvable(fmt::format("persistentvolumeclaim {:?} not found", c.name));
    if (api->terminating)
      return Status::unresolvable(
          fmt::format("persistentvolumeclaim {:?} is being deleted", c.name));
    if (c.ephemeral && api->controller_uid != pod.uid)
      return Status::unresolvable(
          fmt::format("persistentvolumeclaim {:?} was not created for the pod", c.name));
  }

  auto data = std::make_unique<VolumeBindingState>();
  VolumeBindingState::Shared& s = *data->shared;
  bool immediate = false;
  for (const PodClaim& c : claims) {
    const std::string key = keyOf(pod, c.name);
    auto claim = cache_->claim(key);
    if (claim == nullptr)
      return Status::error(fmt::format(
          "error getting PVC {:?}: could not find v1.PersistentVolumeClaim {:?}", key, key));
    if (claimFullyBound(*claim)) {
      s.bound.push_back({claim->volume_name, cache_->volume(claim->volume_name)});
      continue;
    }
    // IsDelayBindingMode: a claim without a class, or whose class does not exist, binds at once.
    std::shared_ptr<const StorageClass> cls;
    if (!claim->storage_class.empty() && classes_ != nullptr)
      cls = classes_->get(claim->storage_class);
    const bool delay =
        cls != nullptr && cls->binding_mode == storage::VolumeBindingMode::kWaitForFirstConsumer;
    // A claim pre-bound to a volume by name is the PV controller's to bind, whatever its class.
    if (!delay || !claim->volume_name.empty()) {
      immediate = true;
      continue;
    }
    ClaimToBind t;
    t.claim = std::move(claim);
    t.storage_class = std::move(cls);
    s.to_bind.push_back(std::move(t));
  }
  if (immediate)
    return Status::unresolvable(std::string(kReasonUnboundImmediate));

  for (std::size_t i = 0; i < s.to_bind.size(); ++i) {
    ClaimToBind& t = s.to_bind[i];
    const StorageClass& cls = *t.storage_class;
    t.provisionable = !cls.provisioner.empty() && cls.provisioner != kNoProvisioner;
    if (t.provisionable)
      t.topology = NodeLabelMatcher::allowedTopologies(cls.allowed_topologies);
    if (auto it = t.claim->annotations.find(storage::kAnnSelectedNode);
        it != t.claim->annotations.end()) {
      t.selected_node = it->second;
      continue;
    }
    fillCandidates(t);
    s.match_order.push_back(i);
  }
  std::stable_sort(s.match_order.begin(), s.match_order.end(), [&](std::size_t a, std::size_t b) {
    return s.to_bind[a].claim->request < s.to_bind[b].claim->request;
  });

  // Nothing to find per node when every claim is bound to an existing volume that fits every
  // node: Filter would pass them all, so it is left out.
  const bool node_free =
      s.to_bind.empty() && std::all_of(s.bound.begin(), s.bound.end(), [](const BoundClaim& b) {
        return b.volume && b.volume->affinity == nullptr;
      });
  state.write(kStateKey, std::move(data));
  return node_free ? Status::skip() : Status::success();
}

Status VolumeBinding::filter(const CycleState& state, const PodInfo& /*pod*/,
                             const NodeInfo& info) const {
  const auto* data = state.read<VolumeBindingState>(kStateKey);
  if (data == nullptr)
    return stateMissing();
  const Node* node = info.node.get();
  if (node == nullptr)
    return Status::error("node not found");
  const VolumeBindingState::Shared& s = *data->shared;

  bool bound_ok = true;
  for (const BoundClaim& b : s.bound) {
    if (!b.volume)
      return Status::error(fmt::format("could not find v1.PersistentVolume {:?}", b.volume_name));
    if (!b.volume->fits(node->labels)) {
      bound_ok = false;
      break;
    }
  }

  bool unbound_ok = true;
  PodVolumes found;
  if (!s.to_bind.empty()) {
    // A claim being provisioned for another node: only that node will do.
    for (const ClaimToBind& t : s.to_bind) {
      if (t.selected_node && *t.selected_node != node->name) {
        unbound_ok = false;
        break;
      }
    }
    std::vector<const ClaimToBind*> to_provision;
    if (unbound_ok) {
      for (const ClaimToBind& t : s.to_bind) {
        if (t.selected_node)
          to_provision.push_back(&t);
      }
      for (std::size_t i : s.match_order) {
        const ClaimToBind& t = s.to_bind[i];
        const VolumeRef* pick = nullptr;
        if (t.bound_volume) {
          if (t.bound_volume->fits(node->labels))
            pick = &*t.bound_volume;
        } else {
          for (const VolumeRef& v : t.candidates) {
            // Each volume binds one claim of the pod.
            const bool taken =
                std::any_of(found.static_bindings.begin(), found.static_bindings.end(),
                            [&](const StaticBinding& b) { return b.volume.pv == v.pv; });
            if (!taken && v.fits(node->labels)) {
              pick = &v;
              break;
            }
          }
        }
        if (pick != nullptr)
          found.static_bindings.push_back({*pick, t.claim, false});
        else
          to_provision.push_back(&t);
      }
      // checkVolumeProvisions: the first claim that cannot be provisioned here decides.
      for (const ClaimToBind* t : to_provision) {
        if (t->claim->storage_class.empty())
          return Status::error(fmt::format("no class for claim {:?}", claimKey(*t->claim)));
        if (t->storage_class == nullptr)
          return Status::error(
              fmt::format("failed to find storage class {:?}", t->claim->storage_class));
        if (!t->provisionable || !t->topology->matches(node->labels)) {
          unbound_ok = false;
          break;
        }
        found.dynamic_provisions.push_back(t->claim);
      }
    }
  }

  if (!bound_ok || !unbound_ok) {
    std::vector<std::string> reasons;
    if (!bound_ok)
      reasons.emplace_back(kReasonNodeConflict);
    if (!unbound_ok)
      reasons.emplace_back(kReasonBindConflict);
    return Status(Code::kUnschedulableAndUnresolvable, std::move(reasons));
  }
  if (!found.empty()) {
    found.node = info.node;
    auto shared = std::make_shared<const PodVolumes>(std::move(found));
    // The findings are the one thing Filter writes: under the state's lock, as upstream.
    VolumeBindingState::Shared& findings = *data->shared;
    std::lock_guard lock(findings.mu);
    findings.by_node.insert_or_assign(node->name, std::move(shared));
  }
  return Status::success();
}

bool VolumeBinding::podVolumesBound(const PodInfo& pod) const {
  for (const PodClaim& c : podClaims(pod)) {
    auto claim = cache_->claim(keyOf(pod, c.name));
    if (claim == nullptr || !claimFullyBound(*claim))
      return false;
  }
  return true;
}

void VolumeBinding::restore(const PodVolumes& volumes) {
  for (const StaticBinding& b : volumes.static_bindings)
    cache_->restoreVolume(b.volume.pv->name);
  for (const auto& claim : volumes.dynamic_provisions)
    cache_->restoreClaim(claimKey(*claim));
}

Status VolumeBinding::reserve(CycleState& state, const PodInfo& pod, const std::string& node) {
  auto* data = state.readMutable<VolumeBindingState>(kStateKey);
  if (data == nullptr)
    return Status::success();  // no claims
  VolumeBindingState::Shared& s = *data->shared;
  s.reserved.reset();
  std::shared_ptr<const PodVolumes> found;
  {
    std::lock_guard lock(s.mu);
    if (auto it = s.by_node.find(node); it != s.by_node.end())
      found = it->second;
  }
  if (found == nullptr || podVolumesBound(pod)) {
    s.all_bound = true;
    return Status::success();
  }
  s.all_bound = false;
  auto assumed = std::make_shared<PodVolumes>();
  assumed->node = found->node;
  for (const StaticBinding& b : found->static_bindings) {
    auto [pv, changed] = bindVolumeToClaim(b.volume.pv, *b.claim);
    if (changed) {
      if (auto ok = cache_->assumeVolume(pv); !ok) {
        restore(*assumed);
        return Status::error(ok.error().message);
      }
    }
    assumed->static_bindings.push_back(
        {VolumeRef{std::move(pv), b.volume.affinity}, b.claim, changed});
  }
  for (const auto& claim : found->dynamic_provisions) {
    auto copy = std::make_shared<PersistentVolumeClaim>(*claim);
    copy->annotations.insert_or_assign(std::string(storage::kAnnSelectedNode), node);
    if (auto ok = cache_->assumeClaim(copy); !ok) {
      restore(*assumed);
      return Status::error(ok.error().message);
    }
    assumed->dynamic_provisions.push_back(std::move(copy));
  }
  s.reserved = std::move(assumed);
  return Status::success();
}

void VolumeBinding::unreserve(CycleState& state, const PodInfo& /*pod*/, const std::string& node) {
  auto* data = state.readMutable<VolumeBindingState>(kStateKey);
  if (data == nullptr)
    return;
  VolumeBindingState::Shared& s = *data->shared;
  std::shared_ptr<const PodVolumes> volumes = s.reserved;
  if (volumes == nullptr) {
    std::lock_guard lock(s.mu);
    if (auto it = s.by_node.find(node); it != s.by_node.end())
      volumes = it->second;
  }
  if (volumes != nullptr)
    restore(*volumes);
}

void VolumeBinding::preBind(std::shared_ptr<CycleState> state, std::shared_ptr<const PodInfo> pod,
                            const std::string& node, StatusCallback done) {
  const auto* data = state->read<VolumeBindingState>(kStateKey);
  if (data == nullptr || data->shared->all_bound) {
    done(Status::success());
    return;
  }
  std::shared_ptr<const PodVolumes> volumes = data->shared->reserved;
  if (volumes == nullptr) {
    done(Status::error(fmt::format("no pod volumes found for node {:?}", node)));
    return;
  }
  binder_->bind(pod->key(), std::move(volumes), std::move(done));
}

}  // namespace koord::roles::scheduler::upstream::volumebinding
