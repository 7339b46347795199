// For plugins that keep their own view of the nodes (ElasticQuota's cluster total): the
// scheduler hands them its node informer events, after the cache has them.
#pragma once

#include "node_info.h"

namespace koord::roles::scheduler {

/// Called on the node informer's thread, serially; implementations must be safe against the
/// scheduling thread.
class NodeListener {
 public:
  virtual ~NodeListener() = default;
  virtual void onNodeAdd(const Node& node) = 0;
  virtual void onNodeUpdate(const Node& old_node, const Node& node) = 0;
  virtual void onNodeDelete(const Node& node) = 0;
};

}  // namespace koord::roles::scheduler
