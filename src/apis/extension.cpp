#include "koord/apis/extension.h"

#include <array>

namespace koord::apis {

namespace {

struct QoSName {
  QoSClass qos;
  std::string_view name;
};
constexpr std::array<QoSName, 5> kQoSNames{{{QoSClass::kSystem, "SYSTEM"},
                                            {QoSClass::kLSE, "LSE"},
                                            {QoSClass::kLSR, "LSR"},
                                            {QoSClass::kLS, "LS"},
                                            {QoSClass::kBE, "BE"}}};

struct PriorityInfo {
  PriorityClass priority;
  std::string_view name;
  PriorityBand band;
};
constexpr std::array<PriorityInfo, 4> kPriorities{{
    {PriorityClass::kProd, "koord-prod", {9000, 9999, 9500}},
    {PriorityClass::kMid, "koord-mid", {7000, 7999, 7500}},
    {PriorityClass::kBatch, "koord-batch", {5000, 5999, 5500}},
    {PriorityClass::kFree, "koord-free", {3000, 3999, 3500}},
}};

}  // namespace

QoSClass qosClassByName(std::string_view name) {
  for (const auto& q : kQoSNames) {
    if (q.name == name)
      return q.qos;
  }
  return QoSClass::kNone;
}

std::string_view qosClassName(QoSClass qos) {
  for (const auto& q : kQoSNames) {
    if (q.qos == qos)
      return q.name;
  }
  return "";
}

PriorityClass priorityClassByName(std::string_view name) {
  for (const auto& p : kPriorities) {
    if (p.name == name)
      return p.priority;
  }
  return PriorityClass::kNone;
}

std::string_view priorityClassName(PriorityClass priority) {
  for (const auto& p : kPriorities) {
    if (p.priority == priority)
      return p.name;
  }
  return "";
}

std::optional<PriorityBand> priorityBand(PriorityClass priority) {
  for (const auto& p : kPriorities) {
    if (p.priority == priority)
      return p.band;
  }
  return std::nullopt;
}

PriorityClass priorityClassByValue(std::int32_t priority) {
  for (const auto& p : kPriorities) {
    if (priority >= p.band.min && priority <= p.band.max)
      return p.priority;
  }
  return PriorityClass::kNone;
}

QoSClass podQoSClassRaw(const kube::Labels& labels) {
  auto it = labels.find(kLabelPodQoS);
  return it == labels.end() ? QoSClass::kNone : qosClassByName(it->second);
}

PriorityClass podPriorityClassRaw(const kube::Labels& labels,
                                  std::optional<std::int32_t> priority) {
  if (auto it = labels.find(kLabelPodPriorityClass); it != labels.end())
    return priorityClassByName(it->second);
  if (!priority)
    return PriorityClass::kNone;
  return priorityClassByValue(*priority);
}

QoSClass qosClassForKubeQoS(KubeQoS kube_qos) {
  switch (kube_qos) {
    case KubeQoS::kGuaranteed:
      return QoSClass::kLSR;
    case KubeQoS::kBurstable:
      return QoSClass::kLS;
    case KubeQoS::kBestEffort:
      return QoSClass::kBE;
  }
  return QoSClass::kNone;
}

QoSClass podQoSClassWithDefault(const kube::Labels& labels, KubeQoS kube_qos) {
  QoSClass raw = podQoSClassRaw(labels);
  return raw != QoSClass::kNone ? raw : qosClassForKubeQoS(kube_qos);
}

PriorityClass priorityClassForQoS(QoSClass qos) {
  switch (qos) {
    case QoSClass::kSystem:
    case QoSClass::kLSE:
    case QoSClass::kLSR:
    case QoSClass::kLS:
      return PriorityClass::kProd;
    case QoSClass::kBE:
      return PriorityClass::kBatch;
    case QoSClass::kNone:
      break;
  }
  return PriorityClass::kNone;
}

PriorityClass podPriorityClassWithDefault(const kube::Labels& labels,
                                          std::optional<std::int32_t> priority, KubeQoS kube_qos) {
  PriorityClass raw = podPriorityClassRaw(labels, priority);
  if (raw != PriorityClass::kNone)
    return raw;
  return priorityClassForQoS(podQoSClassWithDefault(labels, kube_qos));
}

KubeQoS computeKubeQoS(const std::vector<ContainerResources>& containers) {
  // As v1.20's GetPodQOS: requests and limits are summed per resource over all containers,
  // Guaranteed needs every container to limit both cpu and memory and equal sums.
  kube::ResourceList requests;
  kube::ResourceList limits;
  bool is_guaranteed = true;
  for (const auto& c : containers) {
    for (const auto& [name, q] : c.requests) {
      if ((name == "cpu" || name == "memory") && q.sign() > 0) {
        auto& sum = requests[name];
        if (!sum.add(q))
          is_guaranteed = false;
      }
    }
    int limited = 0;
    for (const auto& [name, q] : c.limits) {
      if ((name == "cpu" || name == "memory") && q.sign() > 0) {
        ++limited;
        auto& sum = limits[name];
        if (!sum.add(q))
          is_guaranteed = false;
      }
    }
    if (limited != 2)
      is_guaranteed = false;
  }
  if (requests.empty() && limits.empty())
    return KubeQoS::kBestEffort;
  if (is_guaranteed) {
    for (const auto& [name, req] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second != req) {
        is_guaranteed = false;
        break;
      }
    }
  }
  if (is_guaranteed && requests.size() == limits.size())
    return KubeQoS::kGuaranteed;
  return KubeQoS::kBurstable;
}

KubeQoS kubeQoSFromStatus(std::string_view status_qos_class,
                          const std::vector<ContainerResources>& containers) {
  if (status_qos_class == "Guaranteed")
    return KubeQoS::kGuaranteed;
  if (status_qos_class == "Burstable")
    return KubeQoS::kBurstable;
  if (status_qos_class == "BestEffort")
    return KubeQoS::kBestEffort;
  return computeKubeQoS(containers);
}

std::string_view extendedResourceFor(PriorityClass priority, std::string_view resource) {
  bool cpu = resource == "cpu";
  bool memory = resource == "memory";
  if (!cpu && !memory)
    return "";
  if (priority == PriorityClass::kBatch)
    return cpu ? kBatchCPU : kBatchMemory;
  if (priority == PriorityClass::kMid)
    return cpu ? kMidCPU : kMidMemory;
  return "";
}

}  // namespace koord::apis
