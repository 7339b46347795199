// The community descheduler's eviction order over decoded pods: priority first, then the
// Kubernetes QoS the API server gave each pod, never Koordinator's label.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "framework/object_decode.h"
#include "framework/pod_sort.h"
#include "plugins/removepodsviolatinginterpodantiaffinity/pod_order.h"

using namespace koord::roles::descheduler;
namespace json = boost::json;

namespace {

std::shared_ptr<const Pod> pod(const std::string& text) {
  auto p = decodePod(json::parse(text));
  INFO((p ? std::string() : p.error().message));
  REQUIRE(p.has_value());
  return std::make_shared<const Pod>(std::move(*p));
}

template <typename Pods>
std::vector<std::string> names(const Pods& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods)
    out.push_back(p->name);
  return out;
}

}  // namespace

TEST_CASE("a Guaranteed pod labelled LS goes after an unlabelled Burstable one") {
  const auto guaranteed = pod(R"({"metadata": {"name": "guaranteed-ls",
      "labels": {"koordinator.sh/qosClass": "LS"}},
      "spec": {"priority": 0}, "status": {"qosClass": "Guaranteed"}})");
  const auto burstable = pod(R"({"metadata": {"name": "burstable"},
      "spec": {"priority": 0}, "status": {"qosClass": "Burstable"}})");
  // Both read as LS in Koordinator's terms; only the Kubernetes class tells them apart.
  REQUIRE(guaranteed->qos == burstable->qos);

  std::vector<std::shared_ptr<const Pod>> shared{guaranteed, burstable};
  interpodantiaffinity::sortPodsLowToHigh(shared);
  CHECK(names(shared) == std::vector<std::string>{"burstable", "guaranteed-ls"});

  std::vector<const Pod*> raw{guaranteed.get(), burstable.get()};
  sortPodsLowToHigh(raw);
  CHECK(names(raw) == std::vector<std::string>{"burstable", "guaranteed-ls"});
}

TEST_CASE("pods without a priority go first, then lower priority, then lower Kubernetes QoS") {
  std::vector<std::shared_ptr<const Pod>> pods{
      pod(R"({"metadata": {"name": "g-10"}, "spec": {"priority": 10},
              "status": {"qosClass": "Guaranteed"}})"),
      pod(R"({"metadata": {"name": "b-10"}, "spec": {"priority": 10},
              "status": {"qosClass": "Burstable"}})"),
      pod(R"({"metadata": {"name": "be-10", "labels": {"koordinator.sh/qosClass": "LSR"}},
              "spec": {"priority": 10}, "status": {"qosClass": "BestEffort"}})"),
      pod(R"({"metadata": {"name": "g-none"}, "status": {"qosClass": "Guaranteed"}})"),
      pod(R"({"metadata": {"name": "be-1"}, "spec": {"priority": 1},
              "status": {"qosClass": "BestEffort"}})"),
      pod(R"({"metadata": {"name": "b-10-second"}, "spec": {"priority": 10},
              "status": {"qosClass": "Burstable"}})"),
  };
  sortPodsLowToHigh(pods);
  CHECK(names(pods) ==
        std::vector<std::string>{"g-none", "be-1", "be-10", "b-10", "b-10-second", "g-10"});
}
