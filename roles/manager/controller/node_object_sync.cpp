#include "node_object_sync.h"

#include <boost/json.hpp>

#include <fmt/format.h>

#include "koord/core/log.h"

namespace koord::roles::manager {

namespace json = boost::json;

namespace {

std::string describe(const kube::ApiError& e) {
  return fmt::format("{} {}: {}", e.code, e.reason, e.message);
}

}  // namespace

ReconcileResult syncNodeObject(kube::RestClient& client, const NodeObjectSyncConfig& config,
                               const std::string& name) {
  kube::ResourceRef ref = config.collection;
  ref.name = name;
  auto node = config.node(name);
  auto current = config.current_spec(name);
  if (!node) {
    if (!current)
      return ReconcileResult::done();
    auto r = client.removeSync(ref);
    if (!r && !kube::isNotFound(r.error()))
      return ReconcileResult::fail(
          fmt::format("deleting {} {}: {}", config.kind, name, describe(r.error())));
    KOORD_LOG_INFO("{} {}: deleted, its node is gone", config.kind, name);
    return ReconcileResult::done();
  }
  auto desired = config.desired_spec(*node);
  if (!desired) {
    KOORD_VLOG(4, "{} {}: no usable configuration yet, nothing to do", config.kind, name);
    return ReconcileResult::done();
  }
  if (!current) {
    std::string api_version = config.collection.group + "/" + config.collection.version;
    json::object meta{{"name", name}};
    if (!node->uid.empty())
      meta["ownerReferences"] = json::array{
          json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", name}, {"uid", node->uid}}};
    json::object body{{"apiVersion", api_version},
                      {"kind", config.kind},
                      {"metadata", std::move(meta)},
                      {"spec", *desired}};
    auto collection = config.collection;
    collection.name.clear();
    auto r = client.createSync(collection, std::move(body));
    // AlreadyExists: the informer has not seen it yet; its event brings the key back.
    if (!r && !kube::isAlreadyExists(r.error()))
      return ReconcileResult::fail(
          fmt::format("creating {} {}: {}", config.kind, name, describe(r.error())));
    if (r)
      KOORD_LOG_INFO("{} {}: created", config.kind, name);
    return ReconcileResult::done();
  }
  if (*current == *desired)
    return ReconcileResult::done();
  // "add" replaces the whole spec: a field dropped from the configuration disappears from the
  // object too, which a merge patch would leave behind.
  json::array patch{json::object{{"op", "add"}, {"path", "/spec"}, {"value", *desired}}};
  auto r = client.patchSync(ref, kube::PatchType::kJsonPatch, std::move(patch));
  if (!r) {
    if (kube::isNotFound(r.error()))
      return ReconcileResult::done();  // deleted meanwhile; the delete event brings it back
    return ReconcileResult::fail(
        fmt::format("updating {} {}: {}", config.kind, name, describe(r.error())));
  }
  KOORD_LOG_INFO("{} {}: spec updated", config.kind, name);
  return ReconcileResult::done();
}

}  // namespace koord::roles::manager
