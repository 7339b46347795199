// Pods, nodes and snapshots as the scheduler's table tests write them (shaped like
// kube-scheduler's st.MakePod() and st.MakeNode()), plus quantity and resource shorthands.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/resource.h"
#include "framework/snapshot.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"
#include "koord/kube/scheduling_match.h"

namespace koord::roles::scheduler::testkit {

/// A quantity from its text; the text must parse.
kube::Quantity quantity(std::string_view text);
/// {cpu, memory} from their texts.
kube::ResourceList resourceList(std::string_view cpu, std::string_view memory);
Resource resources(std::string_view cpu, std::string_view memory);

/// A pod in "default" whose UID is its name, unless set otherwise.
class PodBuilder {
 public:
  explicit PodBuilder(std::string name);
  PodBuilder& uid(std::string uid);
  PodBuilder& ns(std::string namespace_);
  PodBuilder& label(std::string key, std::string value);
  PodBuilder& node(std::string name);
  PodBuilder& priority(std::int32_t priority);
  PodBuilder& requests(Resource requests);
  PodBuilder& limits(Resource limits);
  PodBuilder& terminating();
  PodBuilder& controller(std::string kind, std::string name);
  PodBuilder& spread(std::int32_t max_skew, std::string key, UnsatisfiableConstraintAction action,
                     kube::Selector selector);
  PodBuilder& nodeAffinity(std::string key, kube::NodeSelectorOperator op,
                           std::vector<std::string> values);
  PodBuilder& nodeSelector(std::string key, std::string value);
  PodInfo obj() const { return pod_; }
  operator PodInfo() const { return pod_; }

 private:
  PodInfo pod_;
};

inline PodBuilder makePod(std::string name) {
  return PodBuilder(std::move(name));
}

/// A node whose UID is its name.
std::shared_ptr<const Node> makeNode(std::string name, kube::Labels labels = {});

/// A snapshot of `nodes`, each with the pods of `pods` whose node_name names it.
Snapshot snapshotOf(const std::vector<std::shared_ptr<const Node>>& nodes,
                    const std::vector<PodInfo>& pods = {});

}  // namespace koord::roles::scheduler::testkit
