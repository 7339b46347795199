#include "webhook/pod_mutating.h"

#include <boost/json.hpp>

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "koord/apis/extension.h"
#include "koord/core/log.h"
#include "koord/kube/decode.h"
#include "webhook/extended_resource_spec.h"
#include "webhook/json_patch.h"
#include "webhook/pod_fields.h"
#include "webhook/strategic_merge.h"

namespace koord::manager::webhook {
namespace {

namespace json = boost::json;
using ProfilePtr = std::shared_ptr<const apis::ClusterColocationProfile>;

// A failure that is not the pod's fault: answered 500, as Koordinator's Errored does.
kube::Error lookupError(std::string message) {
  return kube::Error(std::move(message),
                     boost::system::errc::make_error_code(boost::system::errc::io_error));
}

bool isInvalidPod(const kube::Error& e) {
  return e.code == makeError(Errc::kInvalidArgument);
}

int defaultRandomPercent() {
  thread_local std::mt19937 engine{std::random_device{}()};
  return std::uniform_int_distribution<int>(0, 99)(engine);
}

json::object& childObject(json::object& parent, std::string_view key) {
  json::value& v = parent[key];
  if (!v.is_object())
    v = json::object();
  return v.get_object();
}

// Writes a label or annotation map back only when it changed, so that an untouched pod yields
// no patch at all (not even an empty "labels": {}).
void storeMap(json::object& pod, std::string_view which, const kube::Labels& before,
              const kube::Labels& after) {
  if (before == after)
    return;
  json::object out;
  for (const auto& [k, v] : after)
    out[k] = v;
  childObject(childObject(pod, "metadata"), which) = std::move(out);
}

kube::Expected<bool> profileMatches(const apis::ClusterColocationProfile& profile,
                                    std::string_view ns, const kube::Labels& pod_labels,
                                    const PodMutatingContext& context) {
  if (profile.namespace_selector) {
    auto selector = kube::toSelector(*profile.namespace_selector);
    if (!selector) {
      return lookupError(fmt::format("ClusterColocationProfile {}: spec.namespaceSelector: {}",
                                     profile.name, selector.error().message));
    }
    // An empty selector matches without looking the namespace up, as Koordinator does.
    if (!selector->empty()) {
      std::optional<kube::Labels> labels;
      if (context.namespace_labels)
        labels = context.namespace_labels(ns);
      // Not in the cache yet (a namespace created a moment before its first pod): the profile
      // cannot be shown to match, so it does not. Refusing the pod instead would fail every
      // "create namespace, then deploy" in the cluster while the informer catches up.
      if (!labels) {
        KOORD_LOG_WARNING("ClusterColocationProfile {}: namespace {} not known yet, not applied",
                          profile.name, ns);
        return false;
      }
      if (!selector->matches(*labels))
        return false;
    }
  }
  if (profile.selector) {
    auto selector = kube::toSelector(*profile.selector);
    if (!selector) {
      return lookupError(fmt::format("ClusterColocationProfile {}: spec.selector: {}", profile.name,
                                     selector.error().message));
    }
    if (!selector->matches(pod_labels))
      return false;
  }
  return true;
}

bool skipByProbability(const apis::ClusterColocationProfile& profile,
                       const PodMutatingContext& context) {
  std::int32_t percent = profile.probability_percent.value_or(100);
  if (percent == 0)
    return true;
  if (percent == 100)
    return false;
  int draw = context.random_percent ? context.random_percent() : defaultRandomPercent();
  return draw > percent;
}

// Go reads a missing map entry as "", so a mapping from an absent key writes an empty value.
void mapKeys(kube::Labels& m, const kube::Labels& mapping) {
  for (const auto& [from, to] : mapping) {
    auto it = m.find(from);
    m[to] = it == m.end() ? std::string() : it->second;
  }
}

kube::Expected<void> applyProfile(json::object& pod, const apis::ClusterColocationProfile& profile,
                                  const PodMutatingContext& context) {
  auto labels = podStringMap(pod, "labels");
  if (!labels)
    return labels.error();
  auto annotations = podStringMap(pod, "annotations");
  if (!annotations)
    return annotations.error();
  kube::Labels new_labels = *labels;
  kube::Labels new_annotations = *annotations;

  for (const auto& [k, v] : profile.labels)
    new_labels[k] = v;
  for (const auto& [k, v] : profile.annotations)
    new_annotations[k] = v;
  mapKeys(new_labels, profile.label_keys_mapping);
  mapKeys(new_annotations, profile.annotation_keys_mapping);
  for (const auto& [key, suffix] : profile.label_suffixes) {
    if (auto it = new_labels.find(key); it != new_labels.end())
      it->second += suffix;
  }
  if (!profile.qos_class.empty())
    new_labels[std::string(apis::kLabelPodQoS)] = profile.qos_class;
  if (profile.koordinator_priority) {
    new_labels[std::string(apis::kLabelPodPriority)] =
        std::to_string(*profile.koordinator_priority);
  }
  storeMap(pod, "labels", *labels, new_labels);
  storeMap(pod, "annotations", *annotations, new_annotations);

  if (!profile.scheduler_name.empty())
    childObject(pod, "spec")["schedulerName"] = profile.scheduler_name;

  if (!profile.priority_class_name.empty()) {
    std::optional<PriorityClassInfo> pc;
    if (context.priority_class)
      pc = context.priority_class(profile.priority_class_name);
    if (!pc) {
      return lookupError(fmt::format("priorityclasses.scheduling.k8s.io \"{}\" not found",
                                     profile.priority_class_name));
    }
    json::object& spec = childObject(pod, "spec");
    spec["priorityClassName"] = profile.priority_class_name;
    spec["priority"] = pc->value;
    // The pod takes the class's policy, or none when the class has none.
    if (pc->preemption_policy.empty())
      spec.erase("preemptionPolicy");
    else
      spec["preemptionPolicy"] = pc->preemption_policy;
  }

  if (const json::object* patch = profile.patch.if_object()) {
    if (auto merged = strategicMergePod(pod, *patch); !merged) {
      return lookupError(
          fmt::format("ClusterColocationProfile {}: {}", profile.name, merged.error().message));
    }
  }
  return {};
}

// Moves cpu or memory of one resource list to the class's extended resource; cpu becomes its
// integer milli value ("1.5" -> "1500"), memory keeps its bytes.
kube::Expected<void> replaceResource(json::object& list, apis::PriorityClass priority,
                                     std::string_view resource, std::string_view where) {
  std::string_view extended = apis::extendedResourceFor(priority, resource);
  const json::value* v = list.if_contains(resource);
  if (extended.empty() || v == nullptr)
    return {};
  auto q = kube::decodeQuantity(*v, fmt::format("{}.{}", where, resource));
  if (!q)
    return q.error();
  kube::Quantity moved = resource == "cpu" ? kube::Quantity::fromInt(q->milliValue()) : *q;
  list.erase(resource);
  list[extended] = moved.toString();
  return {};
}

kube::Expected<void> replaceInList(json::object& owner, std::string_view name,
                                   apis::PriorityClass priority, std::string_view where) {
  json::value* v = owner.if_contains(name);
  if (v == nullptr || v->is_null())
    return {};
  json::object* list = v->if_object();
  if (list == nullptr)
    return kube::makeKubeError(fmt::format("{}.{}: expected object", where, name));
  std::string path = fmt::format("{}.{}", where, name);
  for (std::string_view r : {"cpu", "memory"}) {
    if (auto done = replaceResource(*list, priority, r, path); !done)
      return done;
  }
  return {};
}

// A container limiting an extended resource without requesting it requests its limit.
kube::Expected<void> fillRequestFromLimit(json::object& resources, apis::PriorityClass priority,
                                          std::string_view where) {
  // Read everything before inserting: an insert into `resources` moves its values.
  std::vector<std::pair<std::string_view, kube::Quantity>> missing;
  const json::value* limits_value = resources.if_contains("limits");
  if (limits_value == nullptr || !limits_value->is_object())
    return {};
  const json::value* requests_value = resources.if_contains("requests");
  const json::object* requests = requests_value == nullptr ? nullptr : requests_value->if_object();
  if (requests_value != nullptr && !requests_value->is_null() && requests == nullptr)
    return kube::makeKubeError(fmt::format("{}.requests: expected object", where));
  for (std::string_view r : {"cpu", "memory"}) {
    std::string_view extended = apis::extendedResourceFor(priority, r);
    const json::value* limit = limits_value->get_object().if_contains(extended);
    if (limit == nullptr || (requests != nullptr && requests->contains(extended)))
      continue;
    auto q = kube::decodeQuantity(*limit, fmt::format("{}.limits.{}", where, extended));
    if (!q)
      return q.error();
    missing.emplace_back(extended, *q);
  }
  if (missing.empty())
    return {};
  json::value& target = resources["requests"];
  if (!target.is_object())
    target = json::object();
  for (const auto& [name, q] : missing)
    target.get_object()[name] = q.toString();
  return {};
}

kube::Expected<void> mutateResources(json::object& pod) {
  auto labels = podStringMap(pod, "labels");
  if (!labels)
    return labels.error();
  auto priority_value = podPriority(pod);
  if (!priority_value)
    return priority_value.error();
  auto kube_qos = podKubeQoS(pod);
  if (!kube_qos)
    return kube_qos.error();
  apis::PriorityClass priority =
      apis::podPriorityClassWithDefault(*labels, *priority_value, *kube_qos);
  if (priority != apis::PriorityClass::kBatch && priority != apis::PriorityClass::kMid)
    return {};

  json::value* spec_value = pod.if_contains("spec");
  if (spec_value == nullptr || !spec_value->is_object())
    return {};
  json::object& spec = spec_value->get_object();
  for (std::string_view list : {"initContainers", "containers"}) {
    json::value* containers = spec.if_contains(list);
    if (containers == nullptr || !containers->is_array())
      continue;  // podKubeQoS already refused a mistyped list
    json::array& items = containers->get_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string where = fmt::format("spec.{}[{}].resources", list, i);
      json::object* container = items[i].if_object();
      if (container == nullptr)
        continue;
      json::value* resources_value = container->if_contains("resources");
      if (resources_value == nullptr || !resources_value->is_object())
        continue;
      json::object& resources = resources_value->get_object();
      for (std::string_view which : {"requests", "limits"}) {
        if (auto done = replaceInList(resources, which, priority, where); !done)
          return done;
      }
      if (auto done = fillRequestFromLimit(resources, priority, where); !done)
        return done;
    }
  }
  return replaceInList(spec, "overhead", priority, "spec");
}

}  // namespace

kube::Expected<boost::json::object> mutatePodOnCreate(const boost::json::object& pod,
                                                      std::string_view request_namespace,
                                                      const PodMutatingContext& context) {
  json::object out = pod;
  auto ns = podNamespace(pod);
  if (!ns)
    return ns.error();
  std::string namespace_name = ns->empty() ? std::string(request_namespace) : *ns;

  std::vector<ProfilePtr> profiles;
  if (context.profiles)
    profiles = context.profiles();
  std::vector<ProfilePtr> matched;
  if (!profiles.empty()) {
    auto labels = podStringMap(pod, "labels");
    if (!labels)
      return labels.error();
    for (auto& p : profiles) {
      if (p == nullptr)
        continue;
      auto ok = profileMatches(*p, namespace_name, *labels, context);
      if (!ok)
        return ok.error();
      if (*ok)
        matched.push_back(std::move(p));
    }
  }
  std::sort(matched.begin(), matched.end(),
            [](const ProfilePtr& a, const ProfilePtr& b) { return a->name < b->name; });

  bool skip_resources = context.skip_mutating_resources;
  for (const auto& profile : matched) {
    // A profile's skip marker counts even when its probability skips the profile itself.
    skip_resources = skip_resources || profile->skip_update_resources;
    if (skipByProbability(*profile, context))
      continue;
    if (auto applied = applyProfile(out, *profile, context); !applied)
      return applied.error();
  }
  // Resources are only converted for a pod some profile matched, as in Koordinator.
  if (!matched.empty() && !skip_resources) {
    if (auto done = mutateResources(out); !done)
      return done.error();
  }
  if (auto done = updateExtendedResourceSpec(out); !done)
    return done.error();
  return out;
}

Handler podMutatingHandler(PodMutatingContext context) {
  Handler h;
  h.resource = "pods";
  h.kind = "Pod";
  h.admit = [context = std::move(context)](const AdmissionRequest& request) {
    if (request.operation != Operation::kCreate)
      return AdmissionResponse::allow();
    auto mutated = mutatePodOnCreate(request.object, request.namespace_name, context);
    if (!mutated) {
      const kube::Error& e = mutated.error();
      return AdmissionResponse::errored(isInvalidPod(e) ? 400 : 500, e.message);
    }
    json::array patch = createJsonPatch(request.object, *mutated);
    if (patch.empty())
      return AdmissionResponse::allow();
    return AdmissionResponse::allowWithPatch(std::move(patch));
  };
  return h;
}

}  // namespace koord::manager::webhook
