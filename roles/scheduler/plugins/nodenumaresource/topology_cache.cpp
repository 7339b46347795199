// TopologyOptions from a NodeResourceTopology, and the per-node cache the plugin reads.
#include "plugins/nodenumaresource/topology_cache.h"

#include <boost/json.hpp>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "koord/apis/input_limits.h"
#include "koord/apis/node_amplification.h"
#include "koord/apis/reservation.h"
#include "koord/cgroup/cpu_topology.h"
#include "koord/core/metrics.h"
#include "plugins/nodenumaresource/pod_policy.h"

namespace koord::roles::scheduler::nodenumaresource {

namespace {

namespace json = boost::json;

void appendError(std::string& errors, std::string_view what) {
  if (!errors.empty())
    errors += "; ";
  errors += what;
}

// A CPU list of an annotation; an error names the annotation.
bool addCpuList(std::string_view list, std::string_view annotation, CpuSet& into,
                std::string& errors) {
  if (list.empty())
    return true;
  auto cpus = CpuSet::parse(list);
  if (!cpus) {
    appendError(errors, fmt::format("{}: {}", annotation, cpus.error().message));
    return false;
  }
  into.unionWith(*cpus);
  return true;
}

// node.koordinator.sh/system-qos-resource: {"cpuset", "cpusetExclusive"}; the cpuset is kept
// from pods only when exclusive (the default). Absent and null reserve nothing.
void addSystemQosCpus(const kube::Labels& annotations, CpuSet& into, std::string& errors) {
  auto it = annotations.find(apis::kAnnotationNodeSystemQOSResource);
  if (it == annotations.end())
    return;
  auto fail = [&](std::string_view why) {
    appendError(errors, fmt::format("{}: {}", apis::kAnnotationNodeSystemQOSResource, why));
  };
  if (it->second.size() > apis::kMaxAnnotationValueBytes)
    return fail("longer than an annotation may be");
  boost::system::error_code ec;
  const json::value v = json::parse(it->second, ec);
  if (ec)
    return fail("not JSON");
  if (v.is_null())
    return;
  if (!v.is_object())
    return fail("expected an object");
  const json::object& o = v.get_object();
  bool exclusive = true;
  if (const json::value* e = o.if_contains("cpusetExclusive"); e != nullptr && !e->is_null()) {
    if (!e->is_bool())
      return fail("cpusetExclusive: expected a boolean");
    exclusive = e->get_bool();
  }
  const json::value* c = o.if_contains("cpuset");
  if (c == nullptr || c->is_null())
    return;
  if (!c->is_string())
    return fail("cpuset: expected a string");
  if (exclusive)
    addCpuList(c->get_string(), apis::kAnnotationNodeSystemQOSResource, into, errors);
}

NumaTopologyPolicy kubeletTopologyPolicy(const std::vector<std::string>& policies) {
  for (const std::string& p : policies) {
    if (p == apis::kTopologyPolicyBestEffort)
      return NumaTopologyPolicy::kBestEffort;
    if (p == apis::kTopologyPolicyRestricted)
      return NumaTopologyPolicy::kRestricted;
    if (p == apis::kTopologyPolicySingleNUMANodePodLevel)
      return NumaTopologyPolicy::kSingleNUMANode;
  }
  return NumaTopologyPolicy::kNone;
}

bool labelsNeedTopology(const kube::Labels& labels) {
  if (auto it = labels.find(kLabelNUMATopologyPolicy); it != labels.end() && !it->second.empty())
    return true;
  return nodeCpuBindPolicy(labels, false) != NodeCpuBindPolicy::kNone;
}

}  // namespace

// ---- TopologyOptions ----

TopologyOptions buildTopologyOptions(const apis::NodeResourceTopology& nrt) {
  TopologyOptions out;
  std::string& errors = out.error;

  if (auto reported = apis::parseCPUTopologyAnnotation(nrt.annotations); !reported) {
    appendError(errors, reported.error().message);
  } else {
    std::vector<cgroup::CpuInfo> cpus;
    cpus.reserve(reported->detail.size());
    for (const apis::CPUInfo& c : reported->detail)
      cpus.push_back(cgroup::CpuInfo{c.id, c.core, c.socket, c.node});
    if (auto topology = NodeCpuTopology::build(cpus); !topology)
      appendError(errors, fmt::format("{}: {}", apis::kAnnotationNodeCPUTopology,
                                      topology.error().message));
    else
      out.topology = std::move(*topology);
  }

  // CPUs the kubelet pinned for pods it manages: no koord pod may have them.
  if (auto allocs = apis::parsePodCPUAllocs(nrt.annotations); !allocs) {
    appendError(errors, allocs.error().message);
  } else {
    for (const apis::PodCPUAlloc& a : *allocs) {
      if (a.managed_by_kubelet && !a.uid.empty())
        addCpuList(a.cpuset, apis::kAnnotationNodeCPUAllocs, out.reserved_cpus, errors);
    }
  }

  if (auto policy = apis::parseKubeletCPUManagerPolicy(nrt.annotations); !policy) {
    appendError(errors, policy.error().message);
  } else {
    addCpuList(policy->reserved_cpus, apis::kAnnotationKubeletCPUManagerPolicy, out.reserved_cpus,
               errors);
    auto opt = policy->options.find(apis::kKubeletCPUManagerFullPCPUsOnlyOption);
    out.kubelet_full_pcpus_only = policy->policy == apis::kKubeletCPUManagerPolicyStatic &&
                                  opt != policy->options.end() && opt->second == "true";
  }

  // The koordlet copies the Node's reservation here; Koordinator reads it from this object.
  if (auto reservation = apis::nodeReservation(nrt.annotations); !reservation)
    appendError(errors, reservation.error().message);
  else if (*reservation)
    addCpuList((*reservation)->reserved_cpus, apis::kAnnotationNodeReservation, out.reserved_cpus,
               errors);

  addSystemQosCpus(nrt.annotations, out.reserved_cpus, errors);

  out.numa_policy = kubeletTopologyPolicy(nrt.topology_policies);

  for (const apis::Zone& zone : nrt.zones) {
    if (zone.type != apis::kZoneTypeNode)
      continue;
    // Koordinator skips zones whose name is not "node-N".
    const std::optional<int> id = apis::numaNodeOfZone(zone.name);
    if (!id)
      continue;
    if (*id > kMaxNumaNodeId) {
      appendError(errors, fmt::format("zone {}: NUMA node beyond {}", zone.name, kMaxNumaNodeId));
      continue;
    }
    const bool duplicate = std::any_of(out.zones.begin(), out.zones.end(),
                                       [&](const NumaNodeResources& z) { return z.node == *id; });
    if (duplicate) {
      appendError(errors, fmt::format("zone {}: NUMA node {} given twice", zone.name, *id));
      continue;
    }
    kube::ResourceList allocatable;
    for (const apis::ZoneResourceInfo& r : zone.resources)
      allocatable.insert_or_assign(r.name, r.allocatable);
    out.zones.push_back(NumaNodeResources{*id, NumaResources::fromList(allocatable)});
  }
  std::sort(out.zones.begin(), out.zones.end(),
            [](const NumaNodeResources& a, const NumaNodeResources& b) { return a.node < b.node; });
  return out;
}

// ---- NodeTopologyState ----

const NodeTopologyState TopologyCache::kEmpty{};

const NodeCpuTopology& NodeTopologyState::topology() const {
  static const NodeCpuTopology kNone;
  return options ? options->topology : kNone;
}

std::span<const NumaNodeResources> NodeTopologyState::zones() const {
  if (!options)
    return {};
  if (!amplified_zones.empty())
    return amplified_zones;
  return options->zones;
}

// ---- TopologyCache ----

void TopologyCache::recount(NodeTopologyState& s) {
  const bool needs = s.labels_need_topology || s.options_need_topology || s.amplified();
  if (needs != s.counted) {
    s.counted = needs;
    needing_.fetch_add(needs ? 1 : -1, std::memory_order_relaxed);
  }
  if (s.amplified() != s.counted_amplified) {
    s.counted_amplified = s.amplified();
    amplified_.fetch_add(s.counted_amplified ? 1 : -1, std::memory_order_relaxed);
  }
  const bool policy = s.options && s.options->numa_policy != NumaTopologyPolicy::kNone;
  if (policy != s.counted_policy) {
    s.counted_policy = policy;
    with_policy_.fetch_add(policy ? 1 : -1, std::memory_order_relaxed);
  }
}

void TopologyCache::rebuild(NodeTopologyState& s) {
  s.allocation = NodeAllocation();
  for (const auto& [uid, pod] : s.pods)
    s.allocation.add(s.topology(), pod);
}

void TopologyCache::refreshDerived(NodeTopologyState& s) {
  s.reserved_cpus = s.node_reserved_cpus;
  s.error.clear();
  if (s.options) {
    s.reserved_cpus.unionWith(s.options->reserved_cpus);
    s.error = s.options->error;
  }
  if (!s.node_error.empty())
    appendError(s.error, s.node_error);
  s.options_need_topology = s.options && (s.options->kubelet_full_pcpus_only ||
                                          s.options->numa_policy != NumaTopologyPolicy::kNone);
  // Koordinator's amplifyNUMANodeResources: the zones hold as much cpu as the node's amplified
  // allocatable does.
  s.amplified_zones.clear();
  if (s.options && s.cpu_amplification_ratio > 1) {
    s.amplified_zones = s.options->zones;
    for (NumaNodeResources& z : s.amplified_zones) {
      if (z.resources.has(NumaResource::kCpu))
        z.resources.set(NumaResource::kCpu,
                        amplify(z.resources.get(NumaResource::kCpu), s.cpu_amplification_ratio));
    }
  }
  recount(s);
}

void TopologyCache::storeSummary(std::uint32_t slot, const NodeTopologyState& s) {
  std::atomic<std::uint64_t>* word = summaries_.getOrCreate(slot);
  if (word == nullptr)
    return;
  NodeSummary sum;
  // What the word cannot carry sends Filter and Score to the whole state: an unreadable label
  // or NodeResourceTopology (their messages), a Node not seen yet (its labels unknown here).
  sum.usable = s.node_seen && !s.label_numa_invalid && s.error.empty() && !s.amplified();
  const bool kubelet_full = s.options != nullptr && s.options->kubelet_full_pcpus_only;
  sum.node_bind = kubelet_full ? NodeCpuBindPolicy::kFullPCPUsOnly : s.label_bind;
  sum.numa_policy = s.label_numa_policy.value_or(s.options != nullptr ? s.options->numa_policy
                                                                      : NumaTopologyPolicy::kNone);
  const NodeCpuTopology& topology = s.topology();
  sum.topology_valid = topology.valid();
  sum.cpus_per_core = topology.cpusPerCore();
  if (sum.usable && topology.valid()) {
    const CpuSet available =
        s.allocation.availableCpus(topology, s.options->max_ref_count, s.reserved_cpus);
    sum.free_cpus = available.size();
    sum.free_full_pcpus =
        countCpusUsableByRequiredPolicy(topology, available, CpuBindPolicy::kFullPCPUs);
    sum.free_spread_pcpus =
        countCpusUsableByRequiredPolicy(topology, available, CpuBindPolicy::kSpreadByPCPUs);
  }
  word->store(sum.pack(), std::memory_order_release);
}

void TopologyCache::publish(std::string_view node, NodeTopologyState& s) const {
  if (gauge_ == nullptr)
    return;
  if (s.allocated_gauge == nullptr)
    s.allocated_gauge = &gauge_->with({node});
  s.allocated_gauge->set(static_cast<double>(s.allocation.allocatedCpuSet().size()));
}

void TopologyCache::setTopology(std::string_view node,
                                std::shared_ptr<const TopologyOptions> options) {
  write(node, [&](NodeTopologyState& s) {
    s.options = options;
    refreshDerived(s);
    rebuild(s);
    publish(node, s);
  });
}

void TopologyCache::setNode(const Node& node) {
  write(node.name, [&](NodeTopologyState& s) {
    s.labels_need_topology = labelsNeedTopology(node.labels);
    s.node_seen = true;
    s.label_bind = nodeCpuBindPolicy(node.labels, false);
    s.label_numa_policy.reset();
    s.label_numa_invalid = false;
    if (auto it = node.labels.find(kLabelNUMATopologyPolicy);
        it != node.labels.end() && !it->second.empty()) {
      s.label_numa_policy = parseNumaTopologyPolicy(it->second);
      s.label_numa_invalid = !s.label_numa_policy;
    }
    std::string_view value;
    if (auto it = node.annotations.find(apis::kAnnotationNodeReservation);
        it != node.annotations.end())
      value = it->second;
    std::string_view amplification;
    if (auto it = node.annotations.find(apis::kAnnotationNodeResourceAmplificationRatio);
        it != node.annotations.end())
      amplification = it->second;
    if (amplification != s.node_amplification_value) {
      s.node_amplification_value = std::string(amplification);
      s.cpu_amplification_ratio = 1;
      s.amplification_error.clear();
      if (auto ratio = apis::nodeAmplificationRatio(node.annotations, "cpu"); !ratio)
        s.amplification_error = ratio.error().message;
      else if (*ratio && **ratio > 1)
        s.cpu_amplification_ratio = **ratio;
    }
    if (value != s.node_reservation_value) {
      s.node_reservation_value = std::string(value);
      s.node_reserved_cpus.clear();
      s.node_error.clear();
      if (auto reservation = apis::nodeReservation(node.annotations); !reservation)
        s.node_error = reservation.error().message;
      else if (*reservation)
        addCpuList((*reservation)->reserved_cpus, apis::kAnnotationNodeReservation,
                   s.node_reserved_cpus, s.node_error);
    }
    refreshDerived(s);
  });
}

void TopologyCache::removeNode(std::string_view node) {
  const std::uint32_t slot = nodeSlotOf(node);
  Entry* e = entries_.find(slot);
  if (e == nullptr)
    return;
  std::lock_guard lock(e->mu);
  NodeTopologyState& s = e->state;
  if (gauge_ != nullptr)
    gauge_->remove({std::string(node)});
  s.allocated_gauge = nullptr;
  if (!s.options) {
    // Without options the entry counts for its labels at most; emptied, it reads as unknown.
    if (s.counted)
      needing_.fetch_sub(1, std::memory_order_relaxed);
    if (s.counted_amplified)
      amplified_.fetch_sub(1, std::memory_order_relaxed);
    s = NodeTopologyState();
    storeSummary(slot, s);
    return;
  }
  s.pods.clear();
  s.allocation = NodeAllocation();
  s.labels_need_topology = false;
  s.node_seen = false;
  s.label_bind = NodeCpuBindPolicy::kNone;
  s.label_numa_policy.reset();
  s.label_numa_invalid = false;
  s.node_reserved_cpus.clear();
  s.node_reservation_value.clear();
  s.node_error.clear();
  s.node_amplification_value.clear();
  s.cpu_amplification_ratio = 1;
  s.amplification_error.clear();
  refreshDerived(s);
  storeSummary(slot, s);
}

void TopologyCache::record(std::string_view node, NodeTopologyState& s, PodAllocation pod) {
  s.allocation.update(s.topology(), pod);
  std::string uid = pod.uid;
  s.pods.insert_or_assign(std::move(uid), std::move(pod));
  publish(node, s);
}

void TopologyCache::recordPod(std::string_view node, PodAllocation pod) {
  write(node, [&](NodeTopologyState& s) { record(node, s, std::move(pod)); });
}

bool TopologyCache::releasePod(std::string_view node, std::string_view uid) {
  const std::uint32_t slot = nodeSlotOf(node);
  Entry* e = entries_.find(slot);
  if (e == nullptr)
    return false;
  std::lock_guard lock(e->mu);
  NodeTopologyState& s = e->state;
  auto pod = s.pods.find(uid);
  if (pod == s.pods.end())
    return false;
  s.pods.erase(pod);
  s.allocation.release(uid);
  storeSummary(slot, s);
  publish(node, s);
  return true;
}

}  // namespace koord::roles::scheduler::nodenumaresource
