// Pod and node annotations and labels that any pod or node writer sets and koord components act
// on: the extended-resource-spec, the resource-status cpuset the koordlet pins containers to,
// the node reservation (manager and koordlet readers), label selectors, QoS and priority names,
// the container ids from pod status, and the device-allocate-hint and device-joint-allocate the
// scheduler reads. The first byte picks the parser, the rest is the text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "koord/apis/device_hints.h"
#include "koord/apis/extended_resource_spec.h"
#include "koord/apis/extension.h"
#include "koord/apis/node_amplification.h"
#include "koord/cgroup/kubepods_path.h"
#include "koord/kube/labels.h"
#include "koord/kube/quantity.h"
#include "noderesource/node_view.h"
#include "runtimehooks/cpuset/cpuset_allocator.h"
#include "statesinformer/node_reservation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace koord;
  if (size == 0)
    return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 8) {
    case 0:
      (void)apis::parseExtendedResourceSpec(text);
      break;
    case 1: {
      // LSR may be pinned, BE may not: both branches of podCPUSetBinding.
      const kube::Annotations annotations = {
          {std::string(roles::koordlet::kAnnotationResourceStatus), std::string(text)}};
      (void)roles::koordlet::podCPUSetBinding({{std::string(apis::kLabelPodQoS), "LSR"}},
                                              annotations);
      (void)roles::koordlet::podCPUSetBinding({{std::string(apis::kLabelPodQoS), "BE"}},
                                              annotations);
      break;
    }
    case 2:
      (void)roles::manager::noderesource::parseNodeReservation(text);
      (void)roles::manager::noderesource::countCPUSet(text);
      break;
    case 3: {
      roles::koordlet::NodeInfo node;
      node.annotations.emplace(std::string(apis::kAnnotationNodeReservation), std::string(text));
      node.capacity.emplace("cpu", kube::Quantity::fromInt(8));
      node.allocatable.emplace("cpu", kube::Quantity::fromInt(8));
      if (auto reservation = roles::koordlet::nodeReservation(node))
        (void)roles::koordlet::nodeReservedCPUMilli(node, *reservation);
      break;
    }
    case 4:
      if (auto selector = kube::Selector::parse(text)) {
        (void)selector->toString();
        (void)selector->matches(kube::Labels{{"a", "b"}, {"zone", "5"}});
      }
      break;
    case 5:
      (void)apis::podQoSClassRaw({{std::string(apis::kLabelPodQoS), std::string(text)}});
      (void)apis::podPriorityClassRaw(
          {{std::string(apis::kLabelPodPriorityClass), std::string(text)}}, std::nullopt);
      break;
    case 6:
      (void)cgroup::parseContainerStatusId(text);
      (void)apis::parseDeviceAllocateHints(text);
      (void)apis::parseDeviceJointAllocate(text);
      break;
    default:
      (void)kube::Quantity::parse(text);
      (void)apis::nodeAmplificationRatio(
          {{std::string(apis::kAnnotationNodeResourceAmplificationRatio), std::string(text)}},
          "cpu");
      break;
  }
  return 0;
}
