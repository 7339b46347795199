#include "qosmanager/cgreconcile/memory_qos_policy.h"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <string>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "qosmanager/framework/resource_qos_strategy.h"

namespace koord::roles::koordlet::qosmanager {

namespace json = boost::json;

namespace {

// One MemoryQOS field: its JSON name, the API's validate bounds, and where it is kept.
struct Field {
  std::string_view name;
  std::int64_t min;
  std::int64_t max;
  std::int64_t MemoryQOS::*member;
};

constexpr Field kFields[] = {
    {"minLimitPercent", 0, 100, &MemoryQOS::min_limit_percent},
    {"lowLimitPercent", 0, 100, &MemoryQOS::low_limit_percent},
    {"throttlingPercent", 0, 100, &MemoryQOS::throttling_percent},
    {"wmarkRatio", 0, 100, &MemoryQOS::wmark_ratio},
    {"wmarkScalePermill", 1, 1000, &MemoryQOS::wmark_scale_permill},
    {"wmarkMinAdj", -25, 50, &MemoryQOS::wmark_min_adj},
    {"priorityEnable", 0, 1, &MemoryQOS::priority_enable},
    {"priority", 0, 12, &MemoryQOS::priority},
    {"oomKillGroup", 0, 1, &MemoryQOS::oom_kill_group},
};

// The fields present in `o` laid over `out`; `out` is left as it was on error.
kube::Expected<void> overlayFields(const json::object& o, std::string_view path, MemoryQOS& out) {
  MemoryQOS next = out;
  for (const Field& f : kFields) {
    auto v = boundedIntField(o, f.name, path, f.min, f.max);
    if (!v)
      return v.error();
    if (*v)
      next.*f.member = **v;
  }
  out = next;
  return {};
}

kube::Expected<MemoryQOSClassConfig> decodeClass(const json::object& strategy, MemoryQOSClass c) {
  MemoryQOSClassConfig out;
  out.qos = defaultMemoryQOS(c);
  auto section = resourceQOSSection(strategy, memoryQOSClassField(c), "memoryQOS");
  if (!section)
    return section.error();
  if (const json::object* memory = section->object) {
    auto enable = kube::jsonfields::boolField(*memory, "enable", section->path);
    if (!enable)
      return enable.error();
    out.enable = *enable;
    if (auto r = overlayFields(*memory, section->path, out.qos); !r)
      return r.error();
  }
  // Koordinator's mergeNoneMemoryQOSIfDisabled, which leaves the SYSTEM class alone.
  if (!out.enable && c != MemoryQOSClass::kSystem)
    out.qos = noneMemoryQOS();
  return out;
}

}  // namespace

std::string_view memoryQOSClassField(MemoryQOSClass c) {
  switch (c) {
    case MemoryQOSClass::kLSR:
      return "lsrClass";
    case MemoryQOSClass::kLS:
      return "lsClass";
    case MemoryQOSClass::kBE:
      return "beClass";
    case MemoryQOSClass::kSystem:
      return "systemClass";
  }
  return "systemClass";
}

std::optional<MemoryQOSClass> memoryQOSClassOf(apis::QoSClass qos) {
  switch (qos) {
    case apis::QoSClass::kLSE:
    case apis::QoSClass::kLSR:
      return MemoryQOSClass::kLSR;
    case apis::QoSClass::kLS:
      return MemoryQOSClass::kLS;
    case apis::QoSClass::kBE:
      return MemoryQOSClass::kBE;
    case apis::QoSClass::kSystem:
      return MemoryQOSClass::kSystem;
    case apis::QoSClass::kNone:
      break;
  }
  return std::nullopt;
}

MemoryQOSClass memoryQOSClassOfTier(apis::KubeQoS tier) {
  switch (tier) {
    case apis::KubeQoS::kGuaranteed:
      return MemoryQOSClass::kLSR;
    case apis::KubeQoS::kBurstable:
      return MemoryQOSClass::kLS;
    case apis::KubeQoS::kBestEffort:
      return MemoryQOSClass::kBE;
  }
  return MemoryQOSClass::kBE;
}

MemoryQOS noneMemoryQOS() {
  return MemoryQOS{};
}

MemoryQOS defaultMemoryQOS(MemoryQOSClass c) {
  if (c == MemoryQOSClass::kSystem)
    return noneMemoryQOS();
  MemoryQOS q;
  q.wmark_ratio = 95;
  q.wmark_scale_permill = 20;
  q.wmark_min_adj = c == MemoryQOSClass::kBE ? 50 : -25;
  return q;
}

kube::Expected<MemoryQOSStrategy> decodeMemoryQOSStrategy(const json::object& strategy) {
  MemoryQOSStrategy out;
  for (auto c :
       {MemoryQOSClass::kLSR, MemoryQOSClass::kLS, MemoryQOSClass::kBE, MemoryQOSClass::kSystem}) {
    auto decoded = decodeClass(strategy, c);
    if (!decoded)
      return decoded.error();
    out.classes[static_cast<std::size_t>(c)] = *decoded;
  }
  return out;
}

kube::Expected<MemoryQOS> podMemoryQOS(const MemoryQOS& node, MemoryQOSClass pod_class,
                                       std::optional<std::string_view> annotation) {
  if (!annotation)
    return node;
  const std::string path = fmt::format("annotation {}", kAnnotationPodMemoryQOS);
  if (annotation->size() > kMaxPodMemoryQOSBytes) {
    return kube::makeKubeError(fmt::format("{}: {} bytes, more than the {} accepted", path,
                                           annotation->size(), kMaxPodMemoryQOSBytes));
  }
  boost::system::error_code ec;
  json::value v = json::parse(*annotation, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("{}: not JSON: {}", path, ec.message()));
  if (v.is_null())
    return node;
  if (!v.is_object())
    return kube::jsonfields::typeError(path, "object", v);
  const json::object& o = v.as_object();
  auto policy = kube::jsonfields::stringField(o, "policy", path);
  if (!policy)
    return policy.error();
  MemoryQOS out = node;
  if (*policy == "none")
    return noneMemoryQOS();
  if (*policy == "auto") {
    out = defaultMemoryQOS(pod_class);
  } else if (!policy->empty() && *policy != "default") {
    return kube::makeKubeError(fmt::format(
        "{}.policy: {:?} is not one of \"default\", \"none\", \"auto\"", path, *policy));
  }
  if (auto r = overlayFields(o, path, out); !r)
    return r.error();
  return out;
}

}  // namespace koord::roles::koordlet::qosmanager
