#include "webhook/node_writer_validating.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>

#include "koord/core/log.h"

namespace koord::manager::webhook {

namespace {

constexpr std::string_view kExtraNodeName = "authentication.kubernetes.io/node-name";
constexpr std::string_view kExtraPodName = "authentication.kubernetes.io/pod-name";
constexpr std::string_view kExtraPodUid = "authentication.kubernetes.io/pod-uid";
constexpr std::string_view kServiceAccountPrefix = "system:serviceaccount:";

std::string_view single(const AdmissionRequest& r, std::string_view key) {
  auto it = r.user_extra.find(key);
  return it != r.user_extra.end() && it->second.size() == 1 ? std::string_view(it->second.front())
                                                            : std::string_view();
}

// The namespace of "system:serviceaccount:<ns>:<name>".
std::string_view serviceAccountNamespace(std::string_view username) {
  if (!username.starts_with(kServiceAccountPrefix))
    return {};
  username.remove_prefix(kServiceAccountPrefix.size());
  return username.substr(0, username.find(':'));
}

// The node an object belongs to: a Node is one, NodeMetric and Device are named after theirs.
std::string_view objectNode(const AdmissionRequest& r) {
  if (!r.name.empty())
    return r.name;
  const boost::json::object& o = r.object.empty() && r.old_object ? *r.old_object : r.object;
  if (const auto* md = o.if_contains("metadata"); md && md->is_object()) {
    if (const auto* n = md->as_object().if_contains("name"); n && n->is_string())
      return n->get_string();
  }
  return {};
}

}  // namespace

std::optional<std::string> requesterNode(const AdmissionRequest& request,
                                         const NodeWriterOptions& options, std::string& why) {
  if (auto node = single(request, kExtraNodeName); !node.empty())
    return std::string(node);
  auto pod_name = single(request, kExtraPodName);
  auto pod_uid = single(request, kExtraPodUid);
  if (pod_name.empty() || pod_uid.empty()) {
    why = "its token names no pod (not a bound service-account token)";
    return std::nullopt;
  }
  auto ns = serviceAccountNamespace(request.username);
  auto pod = options.pod ? options.pod(ns, pod_name) : std::nullopt;
  if (!pod || pod->uid != pod_uid || pod->node_name.empty()) {
    why = fmt::format("its token names pod {}/{} ({}), which is not a bound pod the manager knows",
                      ns, pod_name, pod_uid);
    return std::nullopt;
  }
  return pod->node_name;
}

Handler nodeWriterHandler(NodeWriterOptions options) {
  Handler h;
  h.resource = "nodes";
  h.kind = "Node";
  h.more_resources = {{"nodemetrics", "NodeMetric"}, {"devices", "Device"}};
  h.subresources = true;
  // Users whose node could not be told, logged once each (the set is bounded by the identities
  // listed in the options).
  auto unverified = std::make_shared<std::pair<std::mutex, std::set<std::string>>>();
  h.admit = [options = std::move(options), unverified](const AdmissionRequest& request) {
    const auto& koordlets = options.koordlet_usernames;
    if (std::find(koordlets.begin(), koordlets.end(), request.username) == koordlets.end())
      return AdmissionResponse::allow();
    std::string why;
    auto node = requesterNode(request, options, why);
    if (!node) {
      std::lock_guard lock(unverified->first);
      if (unverified->second.insert(request.username).second)
        KOORD_LOG_WARNING(
            "node writes: cannot tell which node {} runs on ({}); its writes to "
            "nodes, nodemetrics and devices are not checked",
            request.username, why);
      return AdmissionResponse::allow();
    }
    auto target = objectNode(request);
    if (target == *node)
      return AdmissionResponse::allow();
    return AdmissionResponse::deny(fmt::format(
        "{} {:?}: the koordlet on node {:?} ({}) may change only its own node's objects",
        request.resource, std::string(target), *node, request.username));
  };
  return h;
}

}  // namespace koord::manager::webhook
