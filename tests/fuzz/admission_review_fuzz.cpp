// The body the API server posts to koord-manager's webhooks holds whatever pod or ConfigMap a
// user submitted. serve() decodes the review and runs the real handlers; the mutating handler gets
// lookups that answer like a cluster with one profile for every pod, so every pod reaches the
// mutation code.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include <boost/json/parse.hpp>

#include "koord/apis/colocation_profile.h"
#include "webhook/admission_review.h"
#include "webhook/configmap_validating.h"
#include "webhook/pod_mutating.h"
#include "webhook/pod_validating.h"

namespace {

using namespace koord::manager::webhook;

const Handler& validating() {
  static const Handler h = podValidatingHandler(
      {.skip_validating_priority = false, .scheduler_usernames = {"system:koord-scheduler"}});
  return h;
}

// One profile that applies to every pod (no selectors, always): each CREATE then goes through
// the QoS and priority rewrite, the batch resource conversion and the strategic merge of
// spec.patch.
std::shared_ptr<const koord::apis::ClusterColocationProfile> everyPodProfile() {
  auto profile = std::make_shared<koord::apis::ClusterColocationProfile>();
  profile->name = "fuzz";
  profile->qos_class = "BE";
  profile->priority_class_name = "koord-batch";
  profile->labels = {{"koordinator.sh/mutated", "true"}};
  profile->label_suffixes = {{"app", "-be"}};
  profile->scheduler_name = "koord-scheduler";
  profile->patch = boost::json::parse(
      R"({"metadata":{"finalizers":["f"]},"spec":{"containers":[{"name":"c","env":[{"name":"E","value":"1"}]}],"tolerations":[{"key":"batch","operator":"Exists"}]}})");
  return profile;
}

const Handler& mutating() {
  static const Handler h = podMutatingHandler(PodMutatingContext{
      .profiles =
          [] {
            static const auto profile = everyPodProfile();
            return std::vector<std::shared_ptr<const koord::apis::ClusterColocationProfile>>{
                profile};
          },
      .namespace_labels =
          [](std::string_view) {
            return std::optional<koord::kube::Labels>(koord::kube::Labels{});
          },
      .priority_class =
          [](std::string_view name) {
            return name == "koord-batch" ? std::optional<PriorityClassInfo>({5000, ""})
                                         : std::optional<PriorityClassInfo>{};
          },
      .random_percent = [] { return 0; },
  });
  return h;
}

const Handler& configMaps() {
  static const Handler h = configMapValidatingHandler();
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto request = decodeAdmissionReview(body);
  if (!request)
    return 0;
  (void)serve(body, validating());
  (void)serve(body, mutating());
  (void)serve(body, configMaps());
  return 0;
}
