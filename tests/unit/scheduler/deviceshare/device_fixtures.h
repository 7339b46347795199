// Device objects and pods' requests for the DeviceShare tests, written as the API server and
// Koordinator's koordlet write them.
#pragma once

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "framework/resource.h"
#include "koord/apis/device.h"
#include "koord/kube/quantity.h"
#include "plugins/deviceshare/device.h"
#include "plugins/deviceshare/node_device_state.h"
#include "plugins/deviceshare/pod_device_hints.h"
#include "plugins/deviceshare/pod_device_request.h"

namespace koord::roles::scheduler::deviceshare::testing {

struct GpuSpec {
  int minor = 0;
  bool health = true;
  int numa = -1;  // -1: no topology
  std::string memory = "16Gi";
};

inline std::string gpuJson(const GpuSpec& g) {
  std::string topology;
  if (g.numa >= 0) {
    topology = fmt::format(R"(,"topology":{{"socketID":{},"nodeID":{},"pcieID":"pci{}"}})", g.numa,
                           g.numa, g.numa);
  }
  return fmt::format(R"({{"type":"gpu","id":"GPU-{}","minor":{},"health":{},"resources":{{)"
                     R"("koordinator.sh/gpu-core":"100","koordinator.sh/gpu-memory":"{}",)"
                     R"("koordinator.sh/gpu-memory-ratio":"100"}}{}}})",
                     g.minor, g.minor, g.health ? "true" : "false", g.memory, topology);
}

/// An RDMA NIC with `vfs` virtual functions (bus ids 0000:<minor>f:00.<i>, listed highest first
/// so that the sort is seen).
inline std::string rdmaJson(int minor, int numa, int vfs = 0) {
  std::string groups;
  if (vfs > 0) {
    groups = R"(,"vfGroups":[{"labels":{"type":"general"},"vfs":[)";
    for (int i = vfs - 1; i >= 0; --i) {
      groups += fmt::format(R"({{"minor":{},"busID":"0000:{}f:00.{}"}})", i, minor, i);
      if (i > 0)
        groups += ",";
    }
    groups += "]}]";
  }
  return fmt::format(R"({{"type":"rdma","id":"0000:{}f:00.0","minor":{},"health":true,)"
                     R"("resources":{{"koordinator.sh/rdma":"100"}},)"
                     R"("topology":{{"socketID":{},"nodeID":{},"pcieID":"pci{}"}}{}}})",
                     minor, minor, numa, numa, numa, groups);
}

inline std::string deviceJson(const std::vector<std::string>& devices) {
  std::string list;
  for (const std::string& d : devices)
    list += (list.empty() ? "" : ",") + d;
  return fmt::format(R"({{"apiVersion":"scheduling.koordinator.sh/v1alpha1","kind":"Device",)"
                     R"("metadata":{{"name":"node-a","uid":"u1","resourceVersion":"7"}},)"
                     R"("spec":{{"devices":[{}]}},"status":{{}}}})",
                     list);
}

inline apis::Device decode(const std::string& json) {
  auto device = apis::decodeDevice(boost::json::parse(json));
  if (!device.has_value())
    FAIL("decodeDevice: " << device.error().message);
  return *device;
}

inline NodeDeviceState nodeWith(const std::vector<std::string>& devices) {
  NodeDeviceState state;
  state.setDevices(readNodeDevices(decode(deviceJson(devices))));
  return state;
}

inline NodeDeviceState gpus(int n, const std::string& memory = "16Gi") {
  std::vector<std::string> devices;
  for (int i = 0; i < n; ++i)
    devices.push_back(gpuJson({.minor = i, .health = true, .numa = -1, .memory = memory}));
  return nodeWith(devices);
}

inline kube::ResourceList resources(
    std::initializer_list<std::pair<std::string, std::string>> entries) {
  kube::ResourceList out;
  for (const auto& [name, value] : entries)
    out.emplace(name, kube::Quantity::parse(value).value());
  return out;
}

inline PodDeviceRequests podRequests(
    std::initializer_list<std::pair<std::string, std::string>> entries) {
  auto r = podDeviceRequests(Resource::fromList(resources(entries)));
  if (!r.has_value())
    FAIL("podDeviceRequests: " << r.error().message);
  return *r;
}

/// The hints of a pod carrying these annotations (device-allocate-hint, then
/// device-joint-allocate; "" leaves one out) and asking for `requests`.
inline PodDeviceHints hintsOf(const std::string& allocate_hint, const std::string& joint,
                              const PodDeviceRequests& requests) {
  kube::Labels annotations;
  if (!allocate_hint.empty())
    annotations.emplace("scheduling.koordinator.sh/device-allocate-hint", allocate_hint);
  if (!joint.empty())
    annotations.emplace("scheduling.koordinator.sh/device-joint-allocate", joint);
  auto hints = podDeviceHints(annotations, requests);
  if (!hints.has_value())
    FAIL("podDeviceHints: " << hints.error().message);
  if (!hints->has_value())
    FAIL("podDeviceHints: no hints");
  return **hints;
}

/// A hint asking each RDMA device to come with a VF of any group.
inline constexpr std::string_view kAnyRdmaVF = R"({"rdma":{"vfSelector":{}}})";

}  // namespace koord::roles::scheduler::deviceshare::testing
