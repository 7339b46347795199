#include "runtimehooks/groupidentity/bvt_rule.h"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "qosmanager/framework/resource_qos_strategy.h"

namespace koord::roles::koordlet {

namespace json = boost::json;

namespace {

struct ClassParam {
  bool enabled = false;  // cpuQOS.enable under the groupIdentity policy
  std::int64_t value = kBvtNone;
};

kube::Expected<ClassParam> decodeClass(const json::object& strategy, std::string_view cls,
                                       std::int64_t default_value, bool group_identity) {
  auto cpu_qos = qosmanager::resourceQOSSection(strategy, cls, "cpuQOS");
  if (!cpu_qos)
    return cpu_qos.error();
  if (cpu_qos->object == nullptr)
    return ClassParam{};
  auto enable = kube::jsonfields::boolField(*cpu_qos->object, "enable", cpu_qos->path);
  if (!enable)
    return enable.error();
  auto value = qosmanager::boundedIntField(*cpu_qos->object, "groupIdentity", cpu_qos->path, -1, 2);
  if (!value)
    return value.error();
  // A disabled class, or another CPU policy, resets its cgroups to the neutral value.
  const bool enabled = group_identity && *enable;
  return ClassParam{enabled, enabled ? value->value_or(default_value) : kBvtNone};
}

constexpr std::size_t idx(cgroup::QoSTier t) {
  return static_cast<std::size_t>(t);
}

}  // namespace

std::int64_t BvtRule::podValue(apis::QoSClass raw_qos, apis::KubeQoS kube_qos) const {
  switch (raw_qos) {
    case apis::QoSClass::kLSE:
    case apis::QoSClass::kLSR:
      return lsr;
    case apis::QoSClass::kLS:
      return ls;
    case apis::QoSClass::kBE:
      return be;
    default:
      break;
  }
  switch (kube_qos) {
    case apis::KubeQoS::kGuaranteed:
      return tier_pod[idx(cgroup::QoSTier::kGuaranteed)];
    case apis::KubeQoS::kBurstable:
      return tier_pod[idx(cgroup::QoSTier::kBurstable)];
    case apis::KubeQoS::kBestEffort:
      return tier_pod[idx(cgroup::QoSTier::kBestEffort)];
  }
  return kBvtNone;
}

std::int64_t BvtRule::hostAppValue(apis::QoSClass qos) const {
  switch (qos) {
    case apis::QoSClass::kLSE:
    case apis::QoSClass::kLSR:
      return lsr;
    case apis::QoSClass::kLS:
      return ls;
    case apis::QoSClass::kBE:
      return be;
    default:
      return kBvtNone;
  }
}

kube::Expected<std::optional<BvtRule>> decodeBvtRule(const json::object* strategy) {
  if (strategy == nullptr)
    return std::optional<BvtRule>();
  auto policy = qosmanager::resourceQOSCpuPolicy(*strategy);
  if (!policy)
    return policy.error();
  const bool group_identity = policy->empty() || *policy == "groupIdentity";
  auto lsr = decodeClass(*strategy, "lsrClass", 2, group_identity);
  if (!lsr)
    return lsr.error();
  auto ls = decodeClass(*strategy, "lsClass", 2, group_identity);
  if (!ls)
    return ls.error();
  auto be = decodeClass(*strategy, "beClass", -1, group_identity);
  if (!be)
    return be.error();
  BvtRule rule;
  rule.enable = lsr->enabled || ls->enabled || be->enabled;
  rule.lsr = lsr->value;
  rule.ls = ls->value;
  rule.be = be->value;
  rule.tier_pod[idx(cgroup::QoSTier::kGuaranteed)] =
      lsr->enabled ? lsr->value : (ls->enabled ? ls->value : kBvtNone);
  rule.tier_pod[idx(cgroup::QoSTier::kBurstable)] = ls->value;
  rule.tier_pod[idx(cgroup::QoSTier::kBestEffort)] = be->value;
  rule.tier_dir[idx(cgroup::QoSTier::kGuaranteed)] = kBvtNone;
  rule.tier_dir[idx(cgroup::QoSTier::kBurstable)] = ls->value;
  rule.tier_dir[idx(cgroup::QoSTier::kBestEffort)] = be->value;
  return std::optional<BvtRule>(rule);
}

}  // namespace koord::roles::koordlet
