#include "builders.h"

#include <utility>

namespace koord::roles::scheduler::testkit {

kube::Quantity quantity(std::string_view text) {
  return kube::Quantity::parse(text).value();
}

kube::ResourceList resourceList(std::string_view cpu, std::string_view memory) {
  return {{"cpu", quantity(cpu)}, {"memory", quantity(memory)}};
}

Resource resources(std::string_view cpu, std::string_view memory) {
  return Resource::fromList(resourceList(cpu, memory));
}

PodBuilder::PodBuilder(std::string name) {
  pod_.namespace_ = "default";
  pod_.uid = name;
  pod_.name = std::move(name);
}

PodBuilder& PodBuilder::uid(std::string uid) {
  pod_.uid = std::move(uid);
  return *this;
}

PodBuilder& PodBuilder::ns(std::string namespace_) {
  pod_.namespace_ = std::move(namespace_);
  return *this;
}

PodBuilder& PodBuilder::label(std::string key, std::string value) {
  pod_.labels[std::move(key)] = std::move(value);
  return *this;
}

PodBuilder& PodBuilder::node(std::string name) {
  pod_.node_name = std::move(name);
  return *this;
}

PodBuilder& PodBuilder::priority(std::int32_t priority) {
  pod_.priority = priority;
  return *this;
}

PodBuilder& PodBuilder::requests(Resource requests) {
  pod_.requests = std::move(requests);
  return *this;
}

PodBuilder& PodBuilder::limits(Resource limits) {
  pod_.limits = std::move(limits);
  return *this;
}

PodBuilder& PodBuilder::terminating() {
  pod_.terminating = true;
  return *this;
}

PodBuilder& PodBuilder::controller(std::string kind, std::string name) {
  pod_.controller_kind = std::move(kind);
  pod_.controller_name = std::move(name);
  return *this;
}

PodBuilder& PodBuilder::spread(std::int32_t max_skew, std::string key,
                               UnsatisfiableConstraintAction action, kube::Selector selector) {
  pod_.topology_spread_constraints.push_back(
      TopologySpreadConstraint{max_skew, std::move(key), action, std::move(selector)});
  return *this;
}

PodBuilder& PodBuilder::nodeAffinity(std::string key, kube::NodeSelectorOperator op,
                                     std::vector<std::string> values) {
  kube::NodeSelectorTerm term;
  term.match_expressions.push_back({std::move(key), op, std::move(values)});
  kube::NodeAffinity affinity;
  affinity.required = kube::NodeSelector{{std::move(term)}};
  pod_.node_affinity = std::move(affinity);
  return *this;
}

PodBuilder& PodBuilder::nodeSelector(std::string key, std::string value) {
  pod_.node_selector[std::move(key)] = std::move(value);
  return *this;
}

std::shared_ptr<const Node> makeNode(std::string name, kube::Labels labels) {
  auto n = std::make_shared<Node>();
  n->name = std::move(name);
  n->uid = n->name;
  n->labels = std::move(labels);
  return n;
}

Snapshot snapshotOf(const std::vector<std::shared_ptr<const Node>>& nodes,
                    const std::vector<PodInfo>& pods) {
  std::vector<std::shared_ptr<const NodeInfo>> infos;
  for (const auto& n : nodes) {
    auto info = std::make_shared<NodeInfo>();
    info->node = n;
    for (const auto& p : pods) {
      if (p.node_name == n->name)
        info->addPod(std::make_shared<const PodInfo>(p));
    }
    infos.push_back(std::move(info));
  }
  return Snapshot(std::move(infos));
}

}  // namespace koord::roles::scheduler::testkit
