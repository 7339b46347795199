#include "webhook/pod_validating.h"

#include <boost/json.hpp>

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "koord/apis/elastic_quota.h"
#include "koord/apis/extension.h"
#include "webhook/field_errors.h"
#include "webhook/pod_fields.h"

namespace koord::manager::webhook {
namespace {

const std::string kQoSPath = fmt::format("labels.{}", apis::kLabelPodQoS);
const std::string kPriorityLabelPath = fmt::format("labels.{}", apis::kLabelPodPriority);

struct PodView {
  kube::Labels labels;
  std::optional<std::int32_t> priority;
  apis::QoSClass qos = apis::QoSClass::kNone;
  apis::PriorityClass priority_class = apis::PriorityClass::kNone;
};

kube::Expected<PodView> viewOf(const boost::json::object& pod) {
  PodView v;
  auto labels = podStringMap(pod, "labels");
  if (!labels)
    return labels.error();
  v.labels = std::move(*labels);
  auto priority = podPriority(pod);
  if (!priority)
    return priority.error();
  v.priority = *priority;
  v.qos = apis::podQoSClassRaw(v.labels);
  v.priority_class = apis::podPriorityClassRaw(v.labels, v.priority);
  return v;
}

std::string labelOr(const kube::Labels& labels, std::string_view key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

void forbidCombination(const PodView& pod, apis::QoSClass qos,
                       std::initializer_list<apis::PriorityClass> forbidden_classes,
                       std::vector<std::string>& out) {
  if (pod.qos != qos)
    return;
  if (std::find(forbidden_classes.begin(), forbidden_classes.end(), pod.priority_class) ==
      forbidden_classes.end()) {
    return;
  }
  out.push_back(forbidden("Pod", fmt::format("{}={} and priorityClass={} cannot be used in "
                                             "combination",
                                             apis::kLabelPodQoS, apis::qosClassName(qos),
                                             apis::priorityClassName(pod.priority_class))));
}

}  // namespace

kube::Expected<std::vector<std::string>> validatePod(const boost::json::object& pod,
                                                     const boost::json::object* old_pod,
                                                     const PodValidatingOptions& options) {
  std::vector<std::string> errors;
  auto view = viewOf(pod);
  if (!view)
    return view.error();

  if (old_pod != nullptr) {
    auto old_view = viewOf(*old_pod);
    if (!old_view)
      return old_view.error();
    // As Koordinator, the parsed classes are compared: an unknown label value reads as none.
    if (view->qos != old_view->qos) {
      errors.push_back(invalid(kQoSPath, apis::qosClassName(view->qos), "field is immutable"));
    }
    if (view->priority_class != old_view->priority_class) {
      errors.push_back(invalid("spec.priority", apis::priorityClassName(view->priority_class),
                               "field is immutable"));
    }
    if (!options.skip_validating_priority) {
      std::string now = labelOr(view->labels, apis::kLabelPodPriority);
      if (now != labelOr(old_view->labels, apis::kLabelPodPriority))
        errors.push_back(invalid(kPriorityLabelPath, now, "field is immutable"));
    }
  }

  auto requests = podRequests(pod);
  if (!requests)
    return requests.error();
  auto requested = [&](std::string_view name) {
    auto it = requests->find(name);
    return it != requests->end() && !it->second.isZero();
  };
  if ((requested(apis::kBatchCPU) || requested(apis::kBatchMemory)) &&
      view->qos != apis::QoSClass::kBE) {
    errors.push_back(required(
        kQoSPath, "must specify koordinator QoS BE with koordinator colocation resources"));
  }

  using apis::PriorityClass;
  forbidCombination(*view, apis::QoSClass::kBE, {PriorityClass::kNone, PriorityClass::kProd},
                    errors);
  forbidCombination(
      *view, apis::QoSClass::kLSR,
      {PriorityClass::kNone, PriorityClass::kMid, PriorityClass::kBatch, PriorityClass::kFree},
      errors);

  if (view->qos == apis::QoSClass::kLSR || view->qos == apis::QoSClass::kLSE) {
    constexpr std::string_view kRequestsPath = "pod.spec.containers[*].resources.requests";
    auto it = requests->find("cpu");
    if (it == requests->end() || it->second.isZero()) {
      errors.push_back(required(kRequestsPath, "LSR Pod must declare the requested CPUs"));
    } else if (std::int64_t milli = it->second.milliValue();
               milli % 1000 != 0 || it->second.value() != milli / 1000) {
      errors.push_back(invalid(kRequestsPath, it->second.toString(),
                               "the requested CPUs of LSR Pod must be integer"));
    }
  }
  return errors;
}

kube::Expected<std::vector<std::string>> forbiddenSchedulerAnnotations(
    const boost::json::object& pod, const boost::json::object* old_pod, std::string_view username,
    const PodValidatingOptions& options) {
  std::vector<std::string> errors;
  const auto& allowed = options.scheduler_usernames;
  if (std::find(allowed.begin(), allowed.end(), username) != allowed.end())
    return errors;
  auto now = podStringMap(pod, "annotations");
  if (!now)
    return now.error();
  kube::Labels before;
  if (old_pod != nullptr) {
    auto old = podStringMap(*old_pod, "annotations");
    if (!old)
      return old.error();
    before = std::move(*old);
  }
  for (std::string_view key : apis::kSchedulerOwnedPodAnnotations) {
    auto a = now->find(key);
    auto b = before.find(key);
    const bool same = (a == now->end() && b == before.end()) ||
                      (a != now->end() && b != before.end() && a->second == b->second);
    if (same)
      continue;
    errors.push_back(
        forbidden(fmt::format("metadata.annotations[{}]", key),
                  fmt::format("set by the scheduler only ({}), not by {}",
                              allowed.empty() ? std::string("nobody else")
                                              : fmt::format("{}", fmt::join(allowed, ", ")),
                              username.empty() ? std::string_view("an unnamed user") : username)));
  }
  return errors;
}

kube::Expected<void> validatePodQuota(const boost::json::object& pod,
                                      const boost::json::object* old_pod,
                                      std::string_view request_namespace,
                                      const QuotaTopology& topology) {
  auto labels = podStringMap(pod, "labels");
  if (!labels)
    return labels.error();
  if (old_pod != nullptr) {
    auto old_labels = podStringMap(*old_pod, "labels");
    if (!old_labels)
      return old_labels.error();
    if (labelOr(*labels, apis::kLabelPreemptible) != labelOr(*old_labels, apis::kLabelPreemptible))
      return kube::makeKubeError(
          forbidden(fmt::format("metadata.labels[{}]", apis::kLabelPreemptible),
                    "cannot be changed once the pod exists"));
  }
  auto ns = podNamespace(pod);
  if (!ns)
    return ns.error();
  return topology.validatePod(*labels, ns->empty() ? request_namespace : std::string_view(*ns));
}

Handler podValidatingHandler(PodValidatingOptions options) {
  Handler h;
  h.resource = "pods";
  h.kind = "Pod";
  h.admit = [options](const AdmissionRequest& request) {
    if (request.operation != Operation::kCreate && request.operation != Operation::kUpdate)
      return AdmissionResponse::allow();
    const boost::json::object* old_pod =
        request.operation == Operation::kUpdate && request.old_object ? &*request.old_object
                                                                      : nullptr;
    auto owned = forbiddenSchedulerAnnotations(request.object, old_pod, request.username, options);
    if (!owned)
      return AdmissionResponse::errored(400, owned.error().message);
    if (!owned->empty())
      return AdmissionResponse::deny(aggregateMessages(*owned));
    auto verdict = answerInvalid(validatePod(request.object, old_pod, options));
    if (!verdict.allowed || !options.quota_topology)
      return verdict;
    if (auto quota = validatePodQuota(request.object, old_pod, request.namespace_name,
                                      *options.quota_topology);
        !quota)
      return AdmissionResponse::errored(400, quota.error().message);
    return verdict;
  };
  return h;
}

}  // namespace koord::manager::webhook
