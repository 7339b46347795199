// What the top commands read of a Pod: where it runs, its koord QoS and priority class (with
// Koordinator's defaults from the Kubernetes QoS) and its effective requests.
#pragma once

#include <boost/json/value.hpp>

#include <string>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"
#include "koord/kube/quantity.h"

namespace koord::roles::cli {

struct PodFacts {
  std::string namespace_;
  std::string name;
  std::string node_name;
  std::string phase;
  apis::QoSClass qos = apis::QoSClass::kNone;
  apis::PriorityClass priority = apis::PriorityClass::kNone;
  apis::KubeQoS kube_qos = apis::KubeQoS::kBurstable;
  kube::ResourceList requests;

  /// Holding resources on its node: Running, or Pending once bound.
  bool active() const { return phase == "Running" || phase == "Pending"; }
  /// Best-effort for co-location: the BE QoS, or the batch or free priority.
  bool be() const;
};

/// Errors name the pod and the field.
kube::Expected<PodFacts> podFacts(const boost::json::value& pod);

/// True for a BE QoS or a batch/free priority: how the top commands split usage.
bool isBestEffort(apis::QoSClass qos, apis::PriorityClass priority);

}  // namespace koord::roles::cli
