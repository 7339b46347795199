// NodeNUMAResource's extension points, hint provider and event handlers over the topology cache.
#include "plugins/nodenumaresource/node_numa_resource.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "framework/pod_changes.h"
#include "framework/reservation_nomination.h"
#include "framework/snapshot.h"
#include "koord/apis/extension.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "plugins/nodenumaresource/numa_hint.h"
#include "plugins/nodenumaresource/pod_allocate.h"
#include "plugins/nodenumaresource/pod_policy.h"
#include "plugins/nodenumaresource/reservation_cpus.h"
#include "plugins/nodenumaresource/resource_spec.h"
#include "plugins/nodenumaresource/topology_manager.h"

namespace koord::roles::scheduler::nodenumaresource {

namespace {

const StateKey kStateKey("NodeNUMAResource");

constexpr std::string_view kHugepages1Gi = "hugepages-1Gi";
constexpr std::string_view kHugepages2Mi = "hugepages-2Mi";

// What PreFilter settled for the pod, and what Reserve gave it.
struct PodState final : StateData {
  /// The pod requests nothing: every point leaves it alone (Koordinator's skip).
  bool skip = false;
  /// Filter was left out (a Reservation's stand-in, or nothing anywhere to check): Reserve
  /// places nothing and Score is the plain node score.
  bool filter_skipped = false;
  PodCpuBind bind;
  ResourceSpec spec;
  NumaTopologySpec numa_spec;
  NumaExclusive numa_exclusive = NumaExclusive::kNone;
  std::int64_t milli_cpu = 0;
  /// The requests NUMA placement weighs.
  NumaResources requests;

  /// The Reservation plugin matched reservations for the pod (read at PreFilter, which runs
  /// after its BeforePreFilter): only then does Filter look them up per node.
  bool reservation_matches = false;

  std::optional<PodAllocation> allocation;
  std::string allocated_node;
  bool wrote_spec = false;

  std::unique_ptr<StateData> clone() const override { return std::make_unique<PodState>(*this); }
};

// The pod's side of one node: the merged NUMA policy and how it is bound there.
struct NodePlan {
  NodeCpuBindPolicy node_bind = NodeCpuBindPolicy::kNone;
  NumaTopologyPolicy policy = NumaTopologyPolicy::kNone;
  bool request_cpu_bind = false;
  CpuBindChoice bind;
};

Expected<NodePlan> planFor(const PodState& s, NodeCpuBindPolicy node_bind,
                           NumaTopologyPolicy node_policy) {
  NodePlan plan;
  plan.node_bind = node_bind;
  auto merged = mergeNumaTopologyPolicy(node_policy, s.numa_spec.numa_topology_policy);
  if (!merged)
    return invalidArgument(std::string(kErrNotMatchNUMATopology));
  plan.policy = *merged;
  auto bind = requestsCpuBindOnNode(s.bind, s.milli_cpu, plan.node_bind);
  if (!bind)
    return bind.error();
  plan.request_cpu_bind = *bind;
  plan.bind = cpuBindPolicyOnNode(s.bind, plan.node_bind);
  return plan;
}

Expected<NodePlan> planOn(const PodState& s, const kube::Labels& labels,
                          const TopologyOptions* options) {
  auto node_policy = nodeNumaTopologyPolicy(
      labels, options != nullptr ? options->numa_policy : NumaTopologyPolicy::kNone);
  if (!node_policy)
    return node_policy.error();
  return planFor(s,
                 nodeCpuBindPolicy(labels, options != nullptr && options->kubelet_full_pcpus_only),
                 *node_policy);
}

// Filter from the node's summary alone, where it can tell; nullopt sends Filter to the node's
// whole state under its lock (a NUMA policy to admit, or a summary that cannot answer).
std::optional<Status> filterFromSummary(const PodState& s, const NodeSummary& sum) {
  if (!sum.usable)
    return std::nullopt;
  auto plan = planFor(s, sum.node_bind, sum.numa_policy);
  if (!plan)
    return Status::unresolvable(plan.error().message);
  if (plan->policy != NumaTopologyPolicy::kNone)
    return std::nullopt;
  if (!plan->request_cpu_bind)
    return Status::success();
  if (!sum.topology_valid)
    return Status::unresolvable(std::string(kErrInvalidCPUTopology));
  if (auto ok = checkCpuBindOnNode(s.bind, plan->node_bind, sum.cpus_per_core); !ok)
    return Status::unresolvable(ok.error().message);
  if (!sum.cpusMayFit(s.bind.num_cpus_needed, plan->bind.policy, plan->bind.required))
    return Status::unschedulable(std::string(kErrNotEnoughCpus));
  return Status::success();
}

NumaResources numaRequestsOf(const Resource& r) {
  NumaResources out;
  if (r.milli_cpu != 0)
    out.set(NumaResource::kCpu, r.milli_cpu);
  if (r.memory != 0)
    out.set(NumaResource::kMemory, r.memory);
  if (const std::int64_t v = r.scalarValue(kHugepages1Gi); v != 0)
    out.set(NumaResource::kHugepages1Gi, v);
  if (const std::int64_t v = r.scalarValue(kHugepages2Mi); v != 0)
    out.set(NumaResource::kHugepages2Mi, v);
  return out;
}

Resource resourceOf(const NumaResources& r) {
  Resource out;
  out.milli_cpu = r.get(NumaResource::kCpu);
  out.memory = r.get(NumaResource::kMemory);
  if (r.has(NumaResource::kHugepages1Gi))
    out.setScalar(kHugepages1Gi, r.get(NumaResource::kHugepages1Gi));
  if (r.has(NumaResource::kHugepages2Mi))
    out.setScalar(kHugepages2Mi, r.get(NumaResource::kHugepages2Mi));
  return out;
}

// `ratio`: the node's cpu amplification; a bound pod's cpu weighs amplified in NUMA placement
// (its whole CPUs are worth that much of the amplified zones).
// The reservations the pod matched on the node; nullptr when none (or PreFilter saw none).
const ReservationMatches::List* matchedOn(const CycleState& state, const PodState& s,
                                          const NodeInfo& node) {
  const ReservationMatches* matches = s.reservation_matches ? reservationMatches(state) : nullptr;
  return matches != nullptr ? matches->find(node) : nullptr;
}

AllocateRequest requestOf(const PodState& s, const NodePlan& plan, const NUMATopologyHint& hint,
                          double ratio) {
  AllocateRequest r;
  r.num_cpus_needed = s.bind.num_cpus_needed;
  r.request_cpu_bind = plan.request_cpu_bind;
  r.bind = plan.bind;
  r.exclusive = s.bind.exclusive;
  r.requests = s.requests;
  r.original_requests = s.requests;
  if (plan.request_cpu_bind && ratio > 1 && r.requests.has(NumaResource::kCpu))
    r.requests.set(NumaResource::kCpu, amplify(r.requests.get(NumaResource::kCpu), ratio));
  r.hint = hint;
  return r;
}

NodeNumaView viewOf(const NodeTopologyState& ns, const kube::Labels& labels,
                    NumaAllocateStrategy default_strategy) {
  return NodeNumaView{ns.topology(),
                      ns.allocation,
                      ns.reserved_cpus,
                      ns.options ? ns.options->max_ref_count : 1,
                      ns.zones(),
                      ns.cpu_amplification_ratio,
                      nodeNumaAllocateStrategy(labels, default_strategy)};
}

// Koordinator's filterAmplifiedCPUs: on a node whose cpu is amplified, the CPUs pods are bound
// to count amplified in what the node has requested, and a bound pod's request too.
Status filterAmplifiedCpus(const NodeTopologyState& ns, const NodeInfo& node,
                           std::int64_t milli_cpu, bool request_cpu_bind) {
  if (milli_cpu == 0 || !ns.amplified())
    return Status::success();
  if (!ns.amplification_error.empty())
    return Status::unresolvable(std::string(kErrInvalidCPUAmplificationRatio));
  const double ratio = ns.cpu_amplification_ratio;
  const std::int64_t want = request_cpu_bind ? amplify(milli_cpu, ratio) : milli_cpu;
  const std::int64_t allocated = std::int64_t{ns.allocation.allocatedCpuSet().size()} * 1000;
  std::int64_t requested = node.requested.milli_cpu;
  if (requested >= allocated && allocated > 0)
    requested = requested - allocated + amplify(allocated, ratio);
  if (want > node.node->allocatable.milli_cpu - requested)
    return Status::unschedulable(std::string(kErrInsufficientAmplifiedCPU));
  return Status::success();
}

// Koordinator's scoreWithAmplifiedCPUs: the node's requested with its bound CPUs amplified.
Resource amplifiedRequested(const NodeTopologyState& ns, const NodeInfo& node) {
  Resource requested = node.requested;
  if (ns.cpu_amplification_ratio > 1) {
    const std::int64_t allocated = std::int64_t{ns.allocation.allocatedCpuSet().size()} * 1000;
    requested.milli_cpu += amplify(allocated, ns.cpu_amplification_ratio) - allocated;
  }
  return requested;
}

// Koordinator's allocateWithNominated for cpusets: a pod the Reservation plugin put into a
// reservation holding CPUs takes them first (a NUMA-aligned one with their NUMA room back, the
// hint having been chosen with it); a Restricted reservation, or a pod that must go into one,
// is refused where they do not serve, any other pod falls back to the node's CPUs.
Expected<PodAllocation> allocateFromNominated(const NodeNumaView& view,
                                              const AllocateRequest& request, const NodePlan& plan,
                                              const ReservationMatches::List& nominated,
                                              const NodeAllocation& allocation, bool required) {
  if (!nominated.empty() && (plan.request_cpu_bind || plan.policy != NumaTopologyPolicy::kNone)) {
    const auto reserved = reservedCpusOf(nominated, allocation);
    if (!reserved.empty()) {
      auto a = allocateInReservation(view, request, reserved.front());
      if (a || reserved.front().restricted || required)
        return a;
    }
  }
  return allocatePod(view, request);
}

bool requestsNothing(const Resource& r) {
  return r.milli_cpu == 0 && r.memory == 0 && r.ephemeral_storage == 0 &&
         r.allowed_pod_number == 0 && r.scalar.empty();
}

// Koordinator's AllowUseCPUSet: the raw QoS label, the priority class with its default.
bool podMayBind(const PodInfo& pod) {
  const apis::PriorityClass priority = pod.priority_class != apis::PriorityClass::kNone
                                           ? pod.priority_class
                                           : apis::priorityClassForQoS(pod.qos);
  return allowsCpuBinding(apis::podQoSClassRaw(pod.labels), priority);
}

ScoringStrategyType scorerType(config::KoordScoringType t) {
  return t == config::KoordScoringType::kMostAllocated ? ScoringStrategyType::kMostAllocated
                                                       : ScoringStrategyType::kLeastAllocated;
}

ResourceAllocationScorer scorerOf(const config::KoordScoringStrategy& strategy) {
  std::vector<upstream::ResourceSpec> resources;
  resources.reserve(strategy.resources.size());
  for (const auto& r : strategy.resources)
    resources.push_back({r.name, r.weight});
  return ResourceAllocationScorer(scorerType(strategy.type), std::move(resources));
}

// Koordinator's appendResourceSpecIfMissed: a pod bound without saying how gets the policy it
// was bound by written back, so that the koordlet and later schedulers read the same.
std::optional<ResourceSpec> resolvedSpec(ResourceSpec spec, const CpuBindChoice& bind) {
  bool changed = false;
  if (bind.required && (spec.required_cpu_bind_policy == CpuBindPolicy::kNone ||
                        spec.required_cpu_bind_policy == CpuBindPolicy::kDefault)) {
    spec.required_cpu_bind_policy = bind.policy;
    changed = true;
  }
  if (spec.preferred_cpu_bind_policy == CpuBindPolicy::kDefault) {
    spec.preferred_cpu_bind_policy = bind.policy;
    changed = true;
  }
  if (spec.required_cpu_bind_policy == CpuBindPolicy::kNone &&
      spec.preferred_cpu_bind_policy == CpuBindPolicy::kNone &&
      bind.policy != CpuBindPolicy::kNone) {
    spec.preferred_cpu_bind_policy = bind.policy;
    changed = true;
  }
  if (!changed)
    return std::nullopt;
  return spec;
}

// What the plugin reads of a NodeResourceTopology; other changes (shared pools, zone costs)
// neither change its options nor free room.
bool sameForPlugin(const apis::NodeResourceTopology& a, const apis::NodeResourceTopology& b) {
  for (std::string_view key :
       {apis::kAnnotationNodeCPUTopology, apis::kAnnotationNodeCPUAllocs,
        apis::kAnnotationKubeletCPUManagerPolicy, apis::kAnnotationNodeReservation,
        apis::kAnnotationNodeSystemQOSResource}) {
    auto ia = a.annotations.find(key);
    auto ib = b.annotations.find(key);
    const bool has_a = ia != a.annotations.end();
    if (has_a != (ib != b.annotations.end()) || (has_a && ia->second != ib->second))
      return false;
  }
  if (a.topology_policies != b.topology_policies || a.zones.size() != b.zones.size())
    return false;
  for (std::size_t i = 0; i < a.zones.size(); ++i) {
    const apis::Zone& za = a.zones[i];
    const apis::Zone& zb = b.zones[i];
    if (za.name != zb.name || za.type != zb.type || za.resources.size() != zb.resources.size())
      return false;
    for (std::size_t j = 0; j < za.resources.size(); ++j) {
      if (za.resources[j].name != zb.resources[j].name ||
          za.resources[j].allocatable != zb.resources[j].allocatable)
        return false;
    }
  }
  return true;
}

}  // namespace

NodeNUMAResource::NodeNUMAResource(std::shared_ptr<const NodeNUMAResourceArgs> args,
                                   FrameworkHandle& handle)
    : args_(args ? std::move(args) : std::make_shared<const NodeNUMAResourceArgs>()),
      handle_(handle),
      scorer_(scorerOf(args_->scoring_strategy)),
      // Koordinator builds this one with scoringStrategy's resources; koord uses the NUMA
      // strategy's own (the defaults are the same).
      numa_scorer_(scorerOf(args_->numa_scoring_strategy)),
      default_numa_strategy_(defaultNumaAllocateStrategy(args_->numa_scoring_strategy.type ==
                                                         config::KoordScoringType::kMostAllocated)),
      self_{this} {
  if (metrics::Registry* r = handle_.metricsRegistry())
    cache_.setAllocatedCpusGauge(
        &r->gauge(kAllocatedCpusMetric,
                  "CPUs that pods are bound to on each node (NodeNUMAResource)", {"node"}));
  if (const auto* source =
          handle_.cluster().source<apis::NodeResourceTopology>(kNodeResourceTopologySource)) {
    source->subscribe({
        [this](const std::shared_ptr<const apis::NodeResourceTopology>& nrt) {
          onTopology(nullptr, *nrt);
        },
        [this](const apis::NodeResourceTopology& old,
               const std::shared_ptr<const apis::NodeResourceTopology>& nrt) {
          onTopology(&old, *nrt);
        },
        [this](const apis::NodeResourceTopology& nrt) { onTopologyDelete(nrt); },
    });
    // Objects the source already holds (a fixture's, or a source built before this plugin).
    for (const auto& nrt : source->list())
      cache_.setTopology(nrt->name,
                         std::make_shared<const TopologyOptions>(buildTopologyOptions(*nrt)));
  }
}

std::span<NUMATopologyHintProvider* const> NodeNUMAResource::hintProviders() const {
  auto providers = handle_.numaHintProviders();
  if (!providers.empty())
    return providers;
  return self_;
}

// ---- PreFilter ----

Status NodeNUMAResource::preFilter(CycleState& state, const PodInfo& pod) {
  // A Reservation's stand-in is placed as the pod its template describes: the CPUs it gets are
  // held under the Reservation's UID for its owner pods.
  auto s = std::make_unique<PodState>();
  auto spec = podResourceSpec(pod.annotations);
  if (!spec)
    return Status::error(spec.error().message);
  auto numa_spec = podNumaTopologySpec(pod.annotations);
  if (!numa_spec)
    return Status::error(numa_spec.error().message);
  if (requestsNothing(pod.requests)) {
    s->skip = true;
    state.write(kStateKey, std::move(s));
    return Status::skip();
  }
  s->spec = *spec;
  s->numa_spec = *numa_spec;
  s->reservation_matches = reservationMatches(state) != nullptr;
  s->numa_exclusive = podNumaExclusive(*numa_spec);
  s->milli_cpu = pod.requests.milli_cpu;
  s->requests = numaRequestsOf(pod.requests);
  auto bind =
      podCpuBind(*spec, podMayBind(pod), pod.requests.milli_cpu, args_->default_cpu_bind_policy);
  if (!bind)
    return Status::unresolvable(bind.error().message);
  s->bind = *bind;
  // Nothing to check on any node: no CPUs of its own, no NUMA policy of its own, and no node
  // asking for either. Filter's answer would be success everywhere.
  const bool nothing_to_check = !s->bind.request_cpu_bind &&
                                numa_spec->numa_topology_policy == NumaTopologyPolicy::kNone &&
                                cache_.nodesNeedingTopology() == 0;
  s->filter_skipped = nothing_to_check;
  state.write(kStateKey, std::move(s));
  initNUMAAffinityStore(state);
  return nothing_to_check ? Status::skip() : Status::success();
}

// ---- Filter ----

Status NodeNUMAResource::filter(const CycleState& state, const PodInfo& pod,
                                const NodeInfo& node) const {
  const auto* s = state.read<PodState>(kStateKey);
  if (s == nullptr)
    return Status::error(fmt::format("{}: no PreFilter state", kPluginName));
  if (s->skip || s->filter_skipped)
    return Status::success();
  // A node where the pod matched reservations needs their CPUs, which the summary does not keep.
  const ReservationMatches* matches = s->reservation_matches ? reservationMatches(state) : nullptr;
  const ReservationMatches::List* matched = matches != nullptr ? matches->find(node) : nullptr;
  if (matched == nullptr) {
    if (auto answer = filterFromSummary(*s, cache_.summary(node.nodeSlot())))
      return std::move(*answer);
  }
  const Node& n = *node.node;

  struct Outcome {
    Status status;
    bool admit = false;
    NumaAdmitRequest request;
    std::vector<NumaNodeStatus> statuses;
  };
  Outcome o = cache_.read(node.nodeSlot(), [&](const NodeTopologyState& ns) {
    Outcome out;
    auto plan = planOn(*s, n.labels, ns.options.get());
    if (!plan) {
      out.status = Status::unresolvable(plan.error().message);
      return out;
    }
    if (Status amplified = filterAmplifiedCpus(ns, node, s->milli_cpu, plan->request_cpu_bind);
        !amplified.ok()) {
      out.status = std::move(amplified);
      return out;
    }
    if (!plan->request_cpu_bind && plan->policy == NumaTopologyPolicy::kNone)
      return out;
    if (!ns.error.empty()) {
      out.status = Status::unresolvable(fmt::format("{}: {}", kErrInvalidNodeTopology, ns.error));
      return out;
    }
    const NodeCpuTopology& topology = ns.topology();
    if (plan->request_cpu_bind) {
      // CPUs are bound only on a node whose CPU topology is known.
      if (!topology.valid()) {
        out.status = Status::unresolvable(std::string(kErrInvalidCPUTopology));
        return out;
      }
      if (auto ok = checkCpuBindOnNode(s->bind, plan->node_bind, topology.cpusPerCore()); !ok) {
        out.status = Status::unresolvable(ok.error().message);
        return out;
      }
      if (plan->policy == NumaTopologyPolicy::kNone) {
        const NodeNumaView view = viewOf(ns, n.labels, default_numa_strategy_);
        const AllocateRequest request = requestOf(*s, *plan, {}, ns.cpu_amplification_ratio);
        if (matched != nullptr) {
          auto reserved = reservedCpusOf(*matched, ns.allocation);
          std::string refused;
          for (const ReservedCpus& r : reserved) {
            auto a = allocateInReservation(view, request, r);
            if (a)
              return out;
            refused = a.error().message;
          }
          // Without reservation affinity the pod may still be bound to the node's free CPUs.
          if (!reserved.empty() && matches->required) {
            out.status = Status::unschedulable(fmt::format("Reservation(s) {}", refused));
            return out;
          }
        }
        if (!cpusMayFit(view, request)) {
          out.status = Status::unschedulable(std::string(kErrNotEnoughCpus));
          return out;
        }
      }
    }
    if (plan->policy == NumaTopologyPolicy::kNone)
      return out;
    const auto zones = ns.zones();
    if (zones.empty()) {
      out.status = Status::unresolvable(std::string(kErrMissingNumaResources));
      return out;
    }
    out.admit = true;
    out.request.policy = plan->policy;
    out.request.exclusive = s->numa_exclusive;
    for (const NumaNodeResources& z : zones)
      out.request.numa_nodes |= numaBit(z.node);
    out.statuses = ns.allocation.numaNodeStatuses(static_cast<int>(zones.size()));
    return out;
  });
  if (!o.admit)
    return o.status;
  // The providers (this plugin among them) take their own locks: none is held here.
  o.request.statuses = o.statuses;
  return admitNumaTopology(hintProviders(), state, pod, node, o.request);
}

// ---- hint provider ----

NUMAProviderHints NodeNUMAResource::podTopologyHints(const CycleState& state, const PodInfo&,
                                                     const NodeInfo& node) const {
  const auto* s = state.read<PodState>(kStateKey);
  if (s == nullptr || s->skip || s->filter_skipped)
    return {};
  const Node& n = *node.node;
  const ReservationMatches::List* matched = matchedOn(state, *s, node);
  return cache_.read(node.nodeSlot(), [&](const NodeTopologyState& ns) -> NUMAProviderHints {
    auto plan = planOn(*s, n.labels, ns.options.get());
    if (!plan || !ns.options)
      return {};
    const NodeNumaView view = viewOf(ns, n.labels, default_numa_strategy_);
    AllocateRequest request = requestOf(*s, *plan, {}, ns.cpu_amplification_ratio);
    // The hints of an owner pod count its first reservation's NUMA room as free, as Reserve will.
    if (matched != nullptr) {
      if (auto reserved = reservedCpusOf(*matched, ns.allocation); !reserved.empty())
        reuseReservation(view, reserved.front(), request);
    }
    // As Koordinator's topology manager: a provider that cannot answer has no preference.
    auto hints = podNumaHints(view, request, &numa_scorer_, plan->policy);
    if (!hints)
      return {};
    return std::move(*hints);
  });
}

Status NodeNUMAResource::allocate(const CycleState& state, const NUMATopologyHint& affinity,
                                  const PodInfo&, const NodeInfo& node) const {
  const auto* s = state.read<PodState>(kStateKey);
  if (s == nullptr || s->skip || s->filter_skipped)
    return Status::success();
  const Node& n = *node.node;
  const ReservationMatches::List* matched = matchedOn(state, *s, node);
  return cache_.read(node.nodeSlot(), [&](const NodeTopologyState& ns) {
    auto plan = planOn(*s, n.labels, ns.options.get());
    if (!plan)
      return Status::unresolvable(plan.error().message);
    const NodeNumaView view = viewOf(ns, n.labels, default_numa_strategy_);
    const AllocateRequest request = requestOf(*s, *plan, affinity, ns.cpu_amplification_ratio);
    if (matched != nullptr) {
      if (auto reserved = reservedCpusOf(*matched, ns.allocation); !reserved.empty()) {
        auto a = allocateInReservation(view, request, reserved.front());
        if (a || reserved.front().restricted)
          return a ? Status::success() : Status::unschedulable(a.error().message);
      }
    }
    auto allocation = allocatePod(view, request);
    if (!allocation)
      return Status::unschedulable(allocation.error().message);
    return Status::success();
  });
}

// ---- Score ----

Status NodeNUMAResource::score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                               std::int64_t& score) const {
  score = 0;
  const auto* s = state.read<PodState>(kStateKey);
  if (s == nullptr)
    return Status::error(fmt::format("{}: no PreFilter state", kPluginName));
  if (s->skip)
    return Status::success();
  const Node& n = *node.node;
  if (s->filter_skipped) {
    score = scorer_.score(node.requested, n.allocatable, pod.requests);
    return Status::success();
  }
  // Without a NUMA policy of pod or node, the plain node score; the summary tells the node's
  // policy and what planOn would refuse without the node's lock.
  if (s->numa_spec.numa_topology_policy == NumaTopologyPolicy::kNone) {
    if (const NodeSummary sum = cache_.summary(node.nodeSlot());
        sum.usable && sum.numa_policy == NumaTopologyPolicy::kNone) {
      auto bind = requestsCpuBindOnNode(s->bind, s->milli_cpu, sum.node_bind);
      if (bind && !(*bind && !sum.topology_valid))
        score = scorer_.score(node.requested, n.allocatable, pod.requests);
      return Status::success();
    }
    // Score runs only where Filter passed, so a bound pod's node has a valid CPU topology:
    // without a NUMA policy of label or any node's topology, the plain score needs no lookup.
    if (cache_.nodesWithTopologyPolicy() == 0 && cache_.nodesAmplified() == 0 &&
        !n.labels.contains(kLabelNUMATopologyPolicy)) {
      score = scorer_.score(node.requested, n.allocatable, pod.requests);
      return Status::success();
    }
  }
  const NUMAAffinityStore* store = numaAffinityStore(state);
  const NUMATopologyHint affinity = store != nullptr ? store->get(n.name) : NUMATopologyHint{};
  score = cache_.read(node.nodeSlot(), [&](const NodeTopologyState& ns) -> std::int64_t {
    auto plan = planOn(*s, n.labels, ns.options.get());
    if (!plan)
      return 0;
    if (plan->request_cpu_bind && !ns.topology().valid())
      return 0;
    if (plan->policy == NumaTopologyPolicy::kNone) {
      if (s->milli_cpu == 0)
        return scorer_.score(node.requested, n.allocatable, pod.requests);
      return scorer_.score(amplifiedRequested(ns, node), n.allocatable, pod.requests);
    }
    const NodeNumaView view = viewOf(ns, n.labels, default_numa_strategy_);
    const AllocateRequest request = requestOf(*s, *plan, affinity, ns.cpu_amplification_ratio);
    auto allocation = allocatePod(view, request);
    if (!allocation)
      return 0;
    // Koordinator's calculateAllocatableAndRequested: over the NUMA nodes the pod would use
    // when it is placed on some, else over the node; bound CPUs count whole.
    Resource allocatable = n.allocatable;
    Resource requested = node.requested;
    if (!allocation->numa_resources.empty()) {
      const auto held =
          ns.allocation.numaAvailability(view.topology, view.zones, 1, request.reusable).allocated;
      NumaResources total_allocatable;
      NumaResources total_requested;
      for (const NumaNodeResources& used : allocation->numa_resources) {
        for (const NumaNodeResources& h : held) {
          if (h.node == used.node)
            total_requested.add(h.resources);
        }
        for (const NumaNodeResources& z : view.zones) {
          if (z.node == used.node)
            total_allocatable.add(z.resources);
        }
      }
      allocatable = resourceOf(total_allocatable);
      requested = resourceOf(total_requested);
    }
    if (!allocation->cpus.empty())
      requested.milli_cpu = amplify(std::int64_t{ns.allocation.allocatedCpuSet().size()} * 1000,
                                    ns.cpu_amplification_ratio);
    return scorer_.score(requested, allocatable, pod.requests);
  });
  return Status::success();
}

// ---- Reserve ----

Status NodeNUMAResource::reserve(CycleState& state, const PodInfo& pod, const std::string& node) {
  auto* s = state.readMutable<PodState>(kStateKey);
  if (s == nullptr || s->skip || s->filter_skipped)
    return Status::success();
  const NodeInfo* info = handle_.snapshot().get(node);
  if (info == nullptr || info->node == nullptr)
    return Status::error(fmt::format("getting node {} from Snapshot: not found", node));
  const Node& n = *info->node;
  const NUMAAffinityStore* store = numaAffinityStore(state);
  const NUMATopologyHint affinity = store != nullptr ? store->get(node) : NUMATopologyHint{};
  const ReservationMatches* matches = reservationMatches(state);
  const ReservationMatches::List nominated =
      matches != nullptr && matches->nominated != nullptr && matches->nominated->node_name == node
          ? ReservationMatches::List{matches->nominated}
          : ReservationMatches::List{};

  std::optional<NodePlan> chosen;
  bool nothing_to_place = false;
  auto allocation =
      cache_.allocateAndRecord(node, [&](const NodeTopologyState& ns) -> Expected<PodAllocation> {
        auto plan = planOn(*s, n.labels, ns.options.get());
        if (!plan)
          return plan.error();
        chosen = *plan;
        if (!plan->request_cpu_bind && plan->policy == NumaTopologyPolicy::kNone) {
          nothing_to_place = true;
          return invalidArgument("nothing to place");  // an error is not recorded
        }
        if (plan->request_cpu_bind && !ns.topology().valid())
          return invalidArgument(std::string(kErrInvalidCPUTopology));
        const NodeNumaView view = viewOf(ns, n.labels, default_numa_strategy_);
        const AllocateRequest request = requestOf(*s, *plan, affinity, ns.cpu_amplification_ratio);
        auto a = allocateFromNominated(view, request, *plan, nominated, ns.allocation,
                                       matches != nullptr && matches->required);
        if (!a)
          return a;
        a->uid = pod.uid;
        a->namespace_ = pod.namespace_;
        a->name = pod.name;
        return a;
      });
  if (nothing_to_place)
    return Status::success();
  if (!allocation)
    return Status::error(allocation.error().message);
  s->allocation = *allocation;
  s->allocated_node = node;
  PodChanges& changes = podChanges(state);
  changes.setAnnotation(kAnnotationResourceStatus,
                        formatResourceStatus(resourceStatusOf(*allocation)));
  if (chosen->request_cpu_bind) {
    if (auto spec = resolvedSpec(s->spec, chosen->bind)) {
      changes.setAnnotation(kAnnotationResourceSpec, formatResourceSpec(*spec));
      s->wrote_spec = true;
    }
  }
  return Status::success();
}

void NodeNUMAResource::unreserve(CycleState& state, const PodInfo&, const std::string&) {
  auto* s = state.readMutable<PodState>(kStateKey);
  if (s == nullptr || !s->allocation)
    return;
  cache_.releasePod(s->allocated_node, s->allocation->uid);
  s->allocation.reset();
  PodChanges& changes = podChanges(state);
  changes.removeAnnotation(kAnnotationResourceStatus);
  if (s->wrote_spec)
    changes.removeAnnotation(kAnnotationResourceSpec);
  s->wrote_spec = false;
}

// ---- pods ----

void NodeNUMAResource::trackPod(const PodInfo* old_pod, const PodInfo& pod) {
  if (pod.node_name.empty())
    return;
  if (pod.finished()) {
    cache_.releasePod(pod.node_name, pod.uid);
    return;
  }
  auto status = podResourceStatus(pod.annotations);
  if (!status) {
    // Once per value: an unchanged annotation was reported at the pod's previous event.
    auto value = [](const PodInfo& p) {
      auto it = p.annotations.find(kAnnotationResourceStatus);
      return it == p.annotations.end() ? std::string_view() : std::string_view(it->second);
    };
    if (old_pod == nullptr || value(*old_pod) != value(pod))
      KOORD_LOG_WARNING("{}: pod {}/{} on {}: its CPUs are not counted: {}", kPluginName,
                        pod.namespace_, pod.name, pod.node_name, status.error().message);
    return;
  }
  if (!*status)
    return;
  // An unreadable resource-spec only loses the exclusive policy; the CPUs still count.
  auto read_spec = podResourceSpec(pod.annotations);
  const ResourceSpec spec = read_spec ? *read_spec : ResourceSpec{};
  auto allocation = podAllocationFromStatus(pod.uid, pod.namespace_, pod.name, **status, spec);
  if (allocation)
    cache_.recordPod(pod.node_name, std::move(*allocation));
}

// ---- reservations ----

void NodeNUMAResource::onReservationAvailable(std::shared_ptr<const ReservationState> r) {
  const PodInfo& stand_in = *r->reserve_pod;
  const std::string& node = r->object->node_name;
  if (auto moved = reservation_nodes_.place(stand_in.uid, node))
    cache_.releasePod(*moved, stand_in.uid);
  auto status = podResourceStatus(stand_in.annotations);
  if (!status || !*status) {
    if (!status)
      KOORD_LOG_WARNING("{}: reservation {} on {}: its CPUs are not counted: {}", kPluginName,
                        r->object->name, node, status.error().message);
    // What Reserve recorded for the stand-in is not on the object: the API's word stands.
    cache_.releasePod(node, stand_in.uid);
    return;
  }
  auto read_spec = podResourceSpec(stand_in.annotations);
  const ResourceSpec spec = read_spec ? *read_spec : ResourceSpec{};
  if (auto allocation =
          podAllocationFromStatus(stand_in.uid, stand_in.namespace_, stand_in.name, **status, spec))
    cache_.recordPod(node, std::move(*allocation));
}

void NodeNUMAResource::onReservationGone(const std::string& uid) {
  if (auto node = reservation_nodes_.forget(uid))
    cache_.releasePod(*node, uid);
}

void NodeNUMAResource::onAssignedPodAdd(const PodInfo& pod) {
  trackPod(nullptr, pod);
}

void NodeNUMAResource::onAssignedPodUpdate(const PodInfo& old_pod, const PodInfo& pod) {
  if (old_pod.node_name != pod.node_name)
    cache_.releasePod(old_pod.node_name, old_pod.uid);
  trackPod(&old_pod, pod);
}

void NodeNUMAResource::onAssignedPodDelete(const PodInfo& pod) {
  cache_.releasePod(pod.node_name, pod.uid);
}

// ---- nodes and their topology ----

void NodeNUMAResource::onNodeAdd(const Node& node) {
  cache_.setNode(node);
}

void NodeNUMAResource::onNodeUpdate(const Node& old_node, const Node& node) {
  // Heartbeats change neither.
  if (old_node.labels == node.labels && old_node.annotations == node.annotations)
    return;
  cache_.setNode(node);
}

void NodeNUMAResource::onNodeDelete(const Node& node) {
  cache_.removeNode(node.name);
}

void NodeNUMAResource::onTopology(const apis::NodeResourceTopology* old,
                                  const apis::NodeResourceTopology& nrt) {
  if (old != nullptr && sameForPlugin(*old, nrt))
    return;
  auto options = std::make_shared<const TopologyOptions>(buildTopologyOptions(nrt));
  if (!options->error.empty())
    KOORD_LOG_WARNING(
        "{}: NodeResourceTopology {}: pods binding CPUs or aligned to NUMA nodes are refused "
        "there: {}",
        kPluginName, nrt.name, options->error);
  cache_.setTopology(nrt.name, std::move(options));
  // A node that reports its zones, or more free CPUs, may admit pods refused so far.
  handle_.requeueUnschedulable();
}

void NodeNUMAResource::onTopologyDelete(const apis::NodeResourceTopology& nrt) {
  cache_.setTopology(nrt.name, nullptr);
  handle_.requeueUnschedulable();
}

}  // namespace koord::roles::scheduler::nodenumaresource
