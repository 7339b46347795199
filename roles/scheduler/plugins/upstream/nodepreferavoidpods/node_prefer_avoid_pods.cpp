#include "plugins/upstream/nodepreferavoidpods/node_prefer_avoid_pods.h"

#include <boost/json.hpp>

namespace koord::roles::scheduler::upstream {
namespace {

namespace json = boost::json;

// The member's string, or "" when it is absent or not a string.
std::string_view stringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string())
    return {};
  return v->get_string();
}

const json::object* objectAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? &v->get_object() : nullptr;
}

}  // namespace

bool avoidsController(std::string_view annotation, std::string_view kind, std::string_view uid) {
  boost::system::error_code ec;
  // The node's annotation is bounded by the API server's 256 KiB limit on all of them.
  json::value doc = json::parse(annotation, ec);
  if (ec || !doc.is_object())
    return false;
  const json::value* list = doc.get_object().if_contains("preferAvoidPods");
  if (list == nullptr || !list->is_array())
    return false;
  for (const json::value& entry : list->get_array()) {
    if (!entry.is_object())
      continue;
    const json::object* signature = objectAt(entry.get_object(), "podSignature");
    const json::object* controller =
        signature != nullptr ? objectAt(*signature, "podController") : nullptr;
    if (controller != nullptr && stringAt(*controller, "kind") == kind &&
        stringAt(*controller, "uid") == uid)
      return true;
  }
  return false;
}

Status NodePreferAvoidPods::score(const CycleState&, const PodInfo& pod, const NodeInfo& node,
                                  std::int64_t& score) const {
  score = kMaxNodeScore;
  if (!node.node)
    return Status::error("node not found");
  // Only pods of a ReplicationController or ReplicaSet can be avoided.
  if (pod.controller_kind != "ReplicationController" && pod.controller_kind != "ReplicaSet")
    return Status::success();
  const auto& annotations = node.node->annotations;
  auto it = annotations.find(kAnnotationPreferAvoidPods);
  if (it == annotations.end())
    return Status::success();
  if (avoidsController(it->second, pod.controller_kind, pod.controller_uid))
    score = kMinNodeScore;
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
