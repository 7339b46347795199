#include "plugins/coscheduling/coscheduling.h"

#include <utility>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/apis/gang.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "plugins/coscheduling/podgroup_controller.h"

namespace koord::roles::scheduler::coscheduling {

namespace {

const StateKey kStateKey("Coscheduling");

struct PreFilterState final : StateData {
  PreFilterOutcome outcome;
  std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

// A rejection sweep rejects waiting members, whose Unreserve (on the same thread) would sweep
// the same group again: the inner ones only release their member.
thread_local bool t_rejecting = false;

}  // namespace

Coscheduling::Coscheduling(std::shared_ptr<const CoschedulingArgs> args, FrameworkHandle& handle)
    : args_(args ? std::move(args) : std::make_shared<const CoschedulingArgs>()),
      handle_(handle),
      gangs_(args_->default_timeout) {
  const auto* groups = handle_.cluster().source<apis::PodGroup>(kPodGroupSource);
  controller_ = std::make_unique<PodGroupController>(groups, gangs_, handle_.cluster(),
                                                     static_cast<int>(args_->controller_workers));
  if (groups != nullptr) {
    groups->subscribe({
        [this](const std::shared_ptr<const apis::PodGroup>& g) {
          activate(gangs_.onPodGroupAdd(*g));
          controller_->enqueue(g->id());
        },
        [this](const apis::PodGroup&, const std::shared_ptr<const apis::PodGroup>& g) {
          activate(gangs_.onPodGroupUpdate(*g));
          controller_->enqueue(g->id());
        },
        [this](const apis::PodGroup& g) { gangs_.onPodGroupDelete(g); },
    });
  }
  if (args_->enable_preemption)
    KOORD_LOG_WARNING(
        "coscheduling: CoschedulingArgs enablePreemption=true has no effect: koord does not "
        "preempt for gangs");
  if (args_->aware_network_topology)
    KOORD_LOG_WARNING(
        "coscheduling: CoschedulingArgs awareNetworkTopology=true has no effect: koord places "
        "gangs without ClusterNetworkTopology");
  if (metrics::Registry* r = handle_.metricsRegistry()) {
    waiting_gauge_ = &r->gauge("scheduler_gang_waiting_pods",
                               "Gang members assumed and waiting at Permit for the rest.", {});
    rejections_ = &r->counter("scheduler_gang_rejections_total",
                              "Times the waiting members of a gang group were rejected together, "
                              "by the extension point that failed them.",
                              {"point"});
  }
}

Coscheduling::~Coscheduling() {
  controller_->stop();
}

bool Coscheduling::less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  const std::int32_t pa = a.pod->priority;
  const std::int32_t pb = b.pod->priority;
  if (pa != pb)
    return pa > pb;
  const std::int32_t sa = a.pod->sub_priority;
  const std::int32_t sb = b.pod->sub_priority;
  if (sa != sb)
    return sa > sb;
  return gangs_.less(a, b);
}

Status Coscheduling::preFilter(CycleState& state, const PodInfo& pod) {
  if (pod.gang_id.empty() && pod.gang_error.empty())
    return Status::success();
  auto s = std::make_unique<PreFilterState>();
  s->outcome = gangs_.preFilter(pod, args_->skip_check_schedule_cycle);
  std::string error = s->outcome.error;
  state.write(kStateKey, std::move(s));
  if (!error.empty())
    return Status::unresolvable(std::move(error));
  return Status::success();
}

Status Coscheduling::postFilter(CycleState& state, const PodInfo& pod,
                                const NodeStatusMap& /*filtered*/, PostFilterResult& /*result*/) {
  if (pod.gang_id.empty())
    return Status::unschedulable("");
  const auto* pre = state.read<PreFilterState>(kStateKey);
  // The pod's own reason is not known here beyond "unschedulable": the scheduler's Event
  // carries each node's.
  auto rejection =
      gangs_.postFilter(pod, pre != nullptr ? &pre->outcome : nullptr, "unschedulable");
  if (!rejection)
    return Status::unschedulable("");
  rejectGroup(*rejection, "PostFilter");
  return Status::unschedulable(
      fmt::format("Gang \"{}\" gets rejected due to pod is unschedulable", pod.gang_id));
}

Status Coscheduling::reserve(CycleState& /*state*/, const PodInfo& /*pod*/,
                             const std::string& /*node*/) {
  return Status::success();
}

void Coscheduling::unreserve(CycleState& /*state*/, const PodInfo& pod,
                             const std::string& /*node*/) {
  auto rejection = gangs_.unreserve(pod);
  updateWaitingGauge();
  if (rejection && !t_rejecting)
    rejectGroup(*rejection, "Unreserve");
}

PermitResult Coscheduling::permit(CycleState& /*state*/, const PodInfo& pod,
                                  const std::string& /*node*/) {
  PermitOutcome out = gangs_.permit(pod);
  switch (out.verdict) {
    case PermitVerdict::kNotGang:
      return {Status::success(), {}};
    case PermitVerdict::kGangNotFound:
      return {Status::unschedulable("Gang not found"), {}};
    case PermitVerdict::kWait: {
      updateWaitingGauge();
      activate(out.siblings);
      PermitResult r;
      r.status = Status(Code::kWait);
      r.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(out.wait);
      return r;
    }
    case PermitVerdict::kAllow:
      break;
  }
  if (WaitingPods* waiting = handle_.waitingPods()) {
    waiting->iterate([&](WaitingPod& w) {
      if (out.group_gangs.contains(w.pod()->gang_id))
        waiting->allow(w.pod()->uid, kPluginName);
    });
  }
  updateWaitingGauge();
  return {Status::success(), {}};
}

void Coscheduling::postBind(CycleState& /*state*/, const PodInfo& pod,
                            const std::string& /*node*/) {
  gangs_.postBind(pod);
  updateWaitingGauge();
}

void Coscheduling::onPodAdd(const PodInfo& pod) {
  activate(gangs_.onPodAdd(pod));
  syncPodGroupOf(pod);
}

void Coscheduling::onPodUpdate(const PodInfo& /*old_pod*/, const PodInfo& pod) {
  activate(gangs_.onPodUpdate(pod));
  syncPodGroupOf(pod);
}

void Coscheduling::onPodDelete(const PodInfo& pod) {
  gangs_.onPodDelete(pod);
  updateWaitingGauge();
  syncPodGroupOf(pod);
}

void Coscheduling::syncPodGroupOf(const PodInfo& pod) {
  // Only a PodGroup's gang has a status to keep; annotation gangs have no object.
  if (!pod.gang_id.empty() && pod.labels.contains(apis::kLabelPodGroup))
    controller_->enqueue(pod.gang_id);
}

void Coscheduling::startController() {
  controller_->start();
}

void Coscheduling::stopController() {
  controller_->stop();
}

void Coscheduling::rejectGroup(const GroupRejection& rejection, std::string_view point) {
  WaitingPods* waiting = handle_.waitingPods();
  if (waiting == nullptr)
    return;
  if (rejections_ != nullptr)
    rejections_->with({point}).inc();
  const bool outer = !t_rejecting;
  t_rejecting = true;
  waiting->iterate([&](WaitingPod& w) {
    if (rejection.group_gangs.contains(w.pod()->gang_id))
      waiting->reject(w.pod()->uid, kPluginName, rejection.message);
  });
  if (outer)
    t_rejecting = false;
  updateWaitingGauge();
}

void Coscheduling::activate(const std::vector<std::string>& keys) {
  if (!keys.empty())
    handle_.activatePods(keys);
}

void Coscheduling::updateWaitingGauge() {
  if (waiting_gauge_ != nullptr)
    waiting_gauge_->with(metrics::LabelValues{}).set(static_cast<double>(gangs_.waitingCount()));
}

}  // namespace koord::roles::scheduler::coscheduling
