#include "manager_informers.h"

#include <boost/json.hpp>

#include "koord/kube/decode.h"

namespace koord::roles::manager {

namespace json = boost::json;

namespace {

const json::object* objectAt(const json::value& v, const char* key) {
  const json::object* o = v.if_object();
  if (o == nullptr)
    return nullptr;
  const json::value* f = o->if_contains(key);
  return f == nullptr ? nullptr : f->if_object();
}

std::string stringAt(const json::object* o, const char* key) {
  if (o == nullptr)
    return "";
  const json::value* f = o->if_contains(key);
  return f != nullptr && f->is_string() ? std::string(f->as_string()) : "";
}

bool nodeReady(const json::value& v) {
  const json::object* status = objectAt(v, "status");
  const json::value* conditions = status ? status->if_contains("conditions") : nullptr;
  if (conditions == nullptr || !conditions->is_array())
    return false;
  for (const auto& c : conditions->as_array()) {
    if (c.is_object() && stringAt(&c.as_object(), "type") == "Ready")
      return stringAt(&c.as_object(), "status") == "True";
  }
  return false;
}

kube::Expected<NodeInfo> projectNode(const json::value& v) {
  auto view = noderesource::decodeNodeView(v);
  if (!view)
    return view.error();
  NodeInfo info{stringAt(objectAt(v, "metadata"), "uid"), std::move(*view)};
  if (const json::object* spec = objectAt(v, "spec")) {
    const json::value* u = spec->if_contains("unschedulable");
    info.unschedulable = u != nullptr && u->is_bool() && u->as_bool();
  }
  info.ready = nodeReady(v);
  return info;
}

kube::Expected<NamespaceInfo> projectNamespace(const json::value& v) {
  const json::object* meta = objectAt(v, "metadata");
  NamespaceInfo ns{stringAt(meta, "name"), {}};
  if (meta != nullptr) {
    if (const json::value* labels = meta->if_contains("labels")) {
      auto decoded = kube::decodeStringMap(*labels);
      if (!decoded)
        return decoded.error();
      ns.labels = std::move(*decoded);
    }
  }
  return ns;
}

kube::Expected<PriorityClassInfo> projectPriorityClass(const json::value& v) {
  PriorityClassInfo pc{stringAt(objectAt(v, "metadata"), "name"), 0, ""};
  const json::object* o = v.if_object();
  const json::value* value = o ? o->if_contains("value") : nullptr;
  if (value == nullptr || !value->is_int64() || value->as_int64() < INT32_MIN ||
      value->as_int64() > INT32_MAX)
    return kube::makeKubeError("value: not a 32-bit integer");
  pc.value = static_cast<std::int32_t>(value->as_int64());
  pc.preemption_policy = o ? stringAt(o, "preemptionPolicy") : "";
  return pc;
}

kube::Expected<NodeSLOInfo> projectNodeSLO(const json::value& v) {
  NodeSLOInfo slo{stringAt(objectAt(v, "metadata"), "name"), json::object{}};
  if (const json::object* spec = objectAt(v, "spec"))
    slo.spec = *spec;
  return slo;
}

kube::Expected<ConfigMapData> projectConfigMap(const json::value& v) {
  const json::object* meta = objectAt(v, "metadata");
  ConfigMapData cm{stringAt(meta, "namespace"), stringAt(meta, "name"), stringAt(meta, "uid"), {}};
  if (const json::object* data = objectAt(v, "data")) {
    for (const auto& [k, value] : *data) {
      if (!value.is_string())
        return kube::makeKubeError("data." + std::string(k) + ": not a string");
      cm.data.emplace(std::string(k), std::string(value.as_string()));
    }
  }
  return cm;
}

kube::ResourceRef collection(const char* group, const char* version, const char* resource,
                             std::string ns = "") {
  return {group, version, resource, std::move(ns), "", ""};
}

kube::ReflectorOptions byName(const std::string& name) {
  kube::ReflectorOptions o;
  o.field_selector = "metadata.name=" + name;
  return o;
}

}  // namespace

ManagerInformers::ManagerInformers(kube::RestClient& client, boost::asio::io_context& io,
                                   const std::string& config_namespace,
                                   const std::string& config_name)
    : nodes(client, io, collection("", "v1", "nodes"), projectNode),
      pods(client, io, collection("", "v1", "pods"), noderesource::decodePodView),
      node_metrics(client, io, collection("slo.koordinator.sh", "v1alpha1", "nodemetrics"),
                   apis::decodeNodeMetric),
      node_slos(client, io, collection("slo.koordinator.sh", "v1alpha1", "nodeslos"),
                projectNodeSLO),
      slo_config(client, io, collection("", "v1", "configmaps", config_namespace), projectConfigMap,
                 byName(config_name)),
      profiles(client, io,
               collection("config.koordinator.sh", "v1alpha1", "clustercolocationprofiles"),
               apis::decodeClusterColocationProfile),
      namespaces(client, io, collection("", "v1", "namespaces"), projectNamespace),
      priority_classes(client, io, collection("scheduling.k8s.io", "v1", "priorityclasses"),
                       projectPriorityClass),
      elastic_quotas(client, io, std::string(apis::kSchedulingSigsGroup),
                     std::string(apis::kElasticQuotaResource),
                     {std::string(apis::kSchedulingSigsVersion)}, apis::decodeElasticQuota),
      quota_profiles(client, io, std::string(apis::kQuotaGroup),
                     std::string(apis::kElasticQuotaProfileResource),
                     {std::string(apis::kQuotaVersion)}, apis::decodeElasticQuotaProfile),
      devices(client, io, "scheduling.koordinator.sh", "devices", {"v1alpha1"},
              noderesource::projectDeviceView) {
  pods.addIndex(kPodQuotaIndex, [](const noderesource::PodView& p) {
    return p.quota_name.empty() ? std::vector<std::string>{}
                                : std::vector<std::string>{p.quota_name};
  });
  pods.addIndex(kube::indexes::kNamespace, [](const noderesource::PodView& p) {
    return std::vector<std::string>{p.namespace_};
  });
  pods.addIndex(kube::indexes::kNodeName, [](const noderesource::PodView& p) {
    return p.node_name.empty() ? std::vector<std::string>{} : std::vector<std::string>{p.node_name};
  });
}

void ManagerInformers::start() {
  nodes.start();
  pods.start();
  node_metrics.start();
  node_slos.start();
  slo_config.start();
  profiles.start();
  namespaces.start();
  priority_classes.start();
  elastic_quotas.start();
  quota_profiles.start();
  devices.start();
}

void ManagerInformers::stop() {
  nodes.stop();
  pods.stop();
  node_metrics.stop();
  node_slos.stop();
  slo_config.stop();
  profiles.stop();
  namespaces.stop();
  priority_classes.stop();
  elastic_quotas.stop();
  quota_profiles.stop();
  devices.stop();
}

bool ManagerInformers::waitForSync(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  };
  return nodes.waitForSync(left()) && pods.waitForSync(left()) &&
         node_metrics.waitForSync(left()) && node_slos.waitForSync(left()) &&
         slo_config.waitForSync(left()) && profiles.waitForSync(left()) &&
         namespaces.waitForSync(left()) && priority_classes.waitForSync(left()) &&
         elastic_quotas.waitForSync(left()) && quota_profiles.waitForSync(left()) &&
         devices.waitForSync(left());
}

}  // namespace koord::roles::manager
