// Type-checked reads of the Pod fields the admission handlers judge by (labels, priority,
// container resources), straight from the JSON the API server sent.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "koord/apis/extension.h"
#include "koord/kube/error.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"

namespace koord::manager::webhook {

/// metadata.labels or metadata.annotations (`which`); absent is empty.
kube::Expected<kube::Labels> podStringMap(const boost::json::object& pod, std::string_view which);
/// metadata.namespace, "" when absent.
kube::Expected<std::string> podNamespace(const boost::json::object& pod);
/// spec.priority, nullopt when absent.
kube::Expected<std::optional<std::int32_t>> podPriority(const boost::json::object& pod);

/// One container's resources and whether it is an init container that keeps running beside the
/// others (restartPolicy Always, a sidecar).
struct PodContainer {
  apis::ContainerResources resources;
  bool init = false;
  bool sidecar = false;
};
/// spec.initContainers then spec.containers.
kube::Expected<std::vector<PodContainer>> podContainers(const boost::json::object& pod);

/// Kubernetes' QoS: status.qosClass when set, else computed from every container.
kube::Expected<apis::KubeQoS> podKubeQoS(const boost::json::object& pod);

/// What the pod requests as the scheduler sums it (component-helpers' PodRequests): containers
/// and sidecars summed, each other init container's request (plus the sidecars started before
/// it) taken at its max, then spec.overhead added. Pod-level spec.resources are not read.
kube::Expected<kube::ResourceList> podRequests(const boost::json::object& pod);

}  // namespace koord::manager::webhook
