#include "top/pod_facts.h"

#include <fmt/format.h>
#include <boost/json.hpp>

#include "webhook/pod_fields.h"

namespace koord::roles::cli {
namespace json = boost::json;
namespace webhook = koord::manager::webhook;
namespace {

std::string stringAt(const json::object& o, std::string_view object_key, std::string_view key) {
  const json::value* sub = o.if_contains(object_key);
  if (sub == nullptr || !sub->is_object())
    return "";
  const json::value* v = sub->get_object().if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

bool isBestEffort(apis::QoSClass qos, apis::PriorityClass priority) {
  return qos == apis::QoSClass::kBE || priority == apis::PriorityClass::kBatch ||
         priority == apis::PriorityClass::kFree;
}

bool PodFacts::be() const {
  return isBestEffort(qos, priority);
}

kube::Expected<PodFacts> podFacts(const json::value& pod) {
  if (!pod.is_object())
    return kube::makeKubeError("pod: not an object");
  const json::object& o = pod.get_object();
  PodFacts f;
  f.namespace_ = stringAt(o, "metadata", "namespace");
  f.name = stringAt(o, "metadata", "name");
  f.node_name = stringAt(o, "spec", "nodeName");
  f.phase = stringAt(o, "status", "phase");
  auto fail = [&](const kube::Error& e) {
    return kube::makeKubeError(fmt::format("pod {}/{}: {}", f.namespace_, f.name, e.message));
  };
  auto labels = webhook::podStringMap(o, "labels");
  if (!labels)
    return fail(labels.error());
  auto priority = webhook::podPriority(o);
  if (!priority)
    return fail(priority.error());
  auto kube_qos = webhook::podKubeQoS(o);
  if (!kube_qos)
    return fail(kube_qos.error());
  auto requests = webhook::podRequests(o);
  if (!requests)
    return fail(requests.error());
  f.kube_qos = *kube_qos;
  f.qos = apis::podQoSClassWithDefault(*labels, *kube_qos);
  f.priority = apis::podPriorityClassWithDefault(*labels, *priority, *kube_qos);
  f.requests = std::move(*requests);
  return f;
}

}  // namespace koord::roles::cli
