#include "slo_schema.h"

#include <boost/json.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include <fmt/format.h>

#include "koord/core/duration.h"
#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/quantity.h"

namespace koord::apis::detail {

namespace json = boost::json;
using kube::jsonfields::indexPath;
using kube::jsonfields::kindName;

// How a field's JSON is read, named after the Go type behind it (apis/slo/v1alpha1,
// apis/configuration), because Go's encoding/json rules per type are what must carry over.
enum class Kind : std::uint8_t {
  kBool,
  kInt64,
  kInt32,
  kFloat,
  kString,             // *string: "" is a value like any other
  kStringOmitEmpty,    // string with omitempty: "" marshals as nothing
  kEnum,               // *string whose values Koordinator acts on; others are refused
  kDurationList,       // []metav1.Duration
  kStruct,             // *struct: merged field by field
  kStructList,         // []*struct
  kAnyMap,             // map[string]interface{}: merged key by key
  kBoolMap,            // map[string]bool
  kQuantity,           // resource.Quantity
  kPercentOrQuantity,  // *intstr.IntOrString checked as the webhook checks network QoS
};

struct Bound {
  bool set = false;
  bool exclusive = false;
  std::int64_t value = 0;
};
constexpr Bound atLeast(std::int64_t v) {
  return {true, false, v};
}
constexpr Bound above(std::int64_t v) {
  return {true, true, v};
}
constexpr Bound atMost(std::int64_t v) {
  return {true, false, v};
}

struct Field {
  std::string_view name;
  Kind kind = Kind::kBool;
  Bound lo{};
  Bound hi{};
  const Schema* sub = nullptr;
  std::span<const std::string_view> values{};
};

/// validate:"gtfield": `upper` must exceed `lower` when an object sets both.
struct Order {
  std::string_view lower;
  std::string_view upper;
};

struct Schema {
  std::span<const Field> fields;
  std::span<const Order> orders{};
};

namespace {

constexpr Field boolF(std::string_view n) {
  return {n, Kind::kBool};
}
constexpr Field intF(std::string_view n, Bound lo = {}, Bound hi = {}) {
  return {n, Kind::kInt64, lo, hi};
}
constexpr Field int32F(std::string_view n, Bound lo = {}, Bound hi = {}) {
  return {n, Kind::kInt32, lo, hi};
}
constexpr Field percentF(std::string_view n) {
  return intF(n, atLeast(0), atMost(100));
}
constexpr Field stringF(std::string_view n) {
  return {n, Kind::kString};
}
constexpr Field omitEmptyStringF(std::string_view n) {
  return {n, Kind::kStringOmitEmpty};
}
constexpr Field structF(std::string_view n, const Schema& s) {
  return {n, Kind::kStruct, {}, {}, &s};
}
constexpr Field kindF(std::string_view n, Kind k) {
  return {n, k};
}
constexpr Field enumF(std::string_view n, std::span<const std::string_view> values) {
  return {n, Kind::kEnum, {}, {}, nullptr, values};
}

// --- colocation-config (configuration.ColocationStrategy) ---

constexpr std::array<std::string_view, 3> kCalculatePolicies{"usage", "request", "maxUsageRequest"};
constexpr std::array<std::string_view, 3> kMemoryCollectPolicies{
    "usageWithoutPageCache", "usageWithHotPageCache", "usageWithPageCache"};

constexpr std::array kAggregatePolicyFields{kindF("durations", Kind::kDurationList)};
constexpr Schema kAggregatePolicySchema{kAggregatePolicyFields};

constexpr std::array kColocationStrategyFields{
    boolF("enable"),
    intF("metricAggregateDurationSeconds", atLeast(1)),
    intF("metricReportIntervalSeconds", atLeast(1)),
    structF("metricAggregatePolicy", kAggregatePolicySchema),
    enumF("metricMemoryCollectPolicy", kMemoryCollectPolicies),
    intF("cpuReclaimThresholdPercent", atLeast(0)),
    enumF("cpuCalculatePolicy", kCalculatePolicies),
    intF("memoryReclaimThresholdPercent", atLeast(0)),
    enumF("memoryCalculatePolicy", kCalculatePolicies),
    intF("degradeTimeMinutes", atLeast(1)),
    intF("updateTimeThresholdSeconds", atLeast(1)),
    Field{"resourceDiffThreshold", Kind::kFloat, above(0), atMost(1)},
    stringF("midReclaimMode"),
    percentF("midCPUThresholdPercent"),
    percentF("midMemoryThresholdPercent"),
    percentF("midUnallocatedPercent"),
    percentF("midStaticCPUReservedPercent"),
    percentF("midStaticMemoryReservedPercent"),
    intF("batchCPUThresholdPercent", atLeast(0)),
    intF("batchMemoryThresholdPercent", atLeast(0)),
    kindF("extensions", Kind::kAnyMap),
};

// --- resource-threshold-config (slov1alpha1.ResourceThresholdStrategy) ---

constexpr std::array kResourceThresholdFields{
    boolF("enable"),
    percentF("cpuSuppressThresholdPercent"),
    percentF("cpuSuppressMinPercent"),
    omitEmptyStringF("cpuSuppressPolicy"),
    percentF("memoryEvictThresholdPercent"),
    percentF("memoryEvictLowerPercent"),
    intF("memoryAllocatableEvictThresholdPercent", atLeast(0)),
    intF("memoryAllocatableEvictLowerPercent", atLeast(0)),
    percentF("cpuEvictBESatisfactionUpperPercent"),
    percentF("cpuEvictBESatisfactionLowerPercent"),
    percentF("cpuEvictBEUsageThresholdPercent"),
    intF("cpuEvictTimeWindowSeconds", above(0)),
    percentF("cpuEvictThresholdPercent"),
    percentF("cpuEvictLowerPercent"),
    intF("cpuAllocatableEvictThresholdPercent", atLeast(0)),
    intF("cpuAllocatableEvictLowerPercent", atLeast(0)),
    omitEmptyStringF("cpuEvictPolicy"),
    int32F("evictEnabledPriorityThreshold"),
    int32F("allocatableEvictPriorityThreshold", atLeast(0), atMost(7999)),
};
constexpr std::array kResourceThresholdOrders{
    Order{"memoryEvictLowerPercent", "memoryEvictThresholdPercent"},
    Order{"memoryAllocatableEvictLowerPercent", "memoryAllocatableEvictThresholdPercent"},
    Order{"cpuEvictBESatisfactionLowerPercent", "cpuEvictBESatisfactionUpperPercent"},
    Order{"cpuEvictLowerPercent", "cpuEvictThresholdPercent"},
    Order{"cpuAllocatableEvictLowerPercent", "cpuAllocatableEvictThresholdPercent"},
};

// --- resource-qos-config (slov1alpha1.ResourceQOSStrategy) ---

constexpr std::array kCPUQOSFields{
    boolF("enable"),
    intF("groupIdentity", atLeast(-1), atMost(2)),
    intF("schedIdle", atLeast(0), atMost(1)),
    boolF("coreExpeller"),
};
constexpr Schema kCPUQOSSchema{kCPUQOSFields};

constexpr std::array kMemoryQOSFields{
    boolF("enable"),
    percentF("minLimitPercent"),
    percentF("lowLimitPercent"),
    percentF("throttlingPercent"),
    percentF("wmarkRatio"),
    intF("wmarkScalePermill", atLeast(1), atMost(1000)),
    intF("wmarkMinAdj", atLeast(-25), atMost(50)),
    intF("priorityEnable", atLeast(0), atMost(1)),
    intF("priority", atLeast(0), atMost(12)),
    intF("oomKillGroup", atLeast(0), atMost(1)),
    boolF("pageCacheEnable"),
    percentF("pageCacheLimitPercent"),
    intF("pageCacheLimitSize"),
    boolF("pageCacheReclaimSync"),
};
constexpr Schema kMemoryQOSSchema{kMemoryQOSFields};

constexpr std::array kIOCfgFields{
    intF("readIOPS"),           intF("writeIOPS"),          intF("readBPS"),
    intF("writeBPS"),           intF("ioWeightPercent"),    intF("readLatency"),
    intF("writeLatency"),       intF("readLatencyPercent"), intF("writeLatencyPercent"),
    boolF("enableUserModel"),   intF("modelReadBPS"),       intF("modelWriteBPS"),
    intF("modelReadSeqIOPS"),   intF("modelWriteSeqIOPS"),  intF("modelReadRandIOPS"),
    intF("modelWriteRandIOPS"),
};
constexpr Schema kIOCfgSchema{kIOCfgFields};

constexpr std::array kBlockCfgFields{
    omitEmptyStringF("name"),
    omitEmptyStringF("type"),
    structF("ioCfg", kIOCfgSchema),
};
constexpr Schema kBlockCfgSchema{kBlockCfgFields};

constexpr std::array kBlkIOQOSFields{
    boolF("enable"),
    Field{"blocks", Kind::kStructList, {}, {}, &kBlockCfgSchema},
};
constexpr Schema kBlkIOQOSSchema{kBlkIOQOSFields};

constexpr std::array kResctrlQOSFields{
    boolF("enable"),
    percentF("catRangeStartPercent"),
    percentF("catRangeEndPercent"),
    percentF("mbaPercent"),
};
constexpr std::array kResctrlQOSOrders{Order{"catRangeStartPercent", "catRangeEndPercent"}};
constexpr Schema kResctrlQOSSchema{kResctrlQOSFields, kResctrlQOSOrders};

constexpr std::array kNetworkQOSFields{
    boolF("enable"),
    kindF("ingressRequest", Kind::kPercentOrQuantity),
    kindF("ingressLimit", Kind::kPercentOrQuantity),
    kindF("egressRequest", Kind::kPercentOrQuantity),
    kindF("egressLimit", Kind::kPercentOrQuantity),
};
constexpr Schema kNetworkQOSSchema{kNetworkQOSFields};

constexpr std::array kResourceQOSFields{
    structF("cpuQOS", kCPUQOSSchema),         structF("memoryQOS", kMemoryQOSSchema),
    structF("blkioQOS", kBlkIOQOSSchema),     structF("resctrlQOS", kResctrlQOSSchema),
    structF("networkQOS", kNetworkQOSSchema),
};
constexpr Schema kResourceQOSSchema{kResourceQOSFields};

constexpr std::array kResourceQOSPoliciesFields{stringF("cpuPolicy"), stringF("netQOSPolicy")};
constexpr Schema kResourceQOSPoliciesSchema{kResourceQOSPoliciesFields};

constexpr std::array kResourceQOSStrategyFields{
    structF("policies", kResourceQOSPoliciesSchema), structF("lsrClass", kResourceQOSSchema),
    structF("lsClass", kResourceQOSSchema),          structF("beClass", kResourceQOSSchema),
    structF("systemClass", kResourceQOSSchema),      structF("cgroupRoot", kResourceQOSSchema),
};

// --- cpu-burst-config (slov1alpha1.CPUBurstStrategy, CPUBurstConfig inline) ---

constexpr std::array kCPUBurstFields{
    omitEmptyStringF("policy"),
    intF("cpuBurstPercent", atLeast(1), atMost(10000)),
    intF("cfsQuotaBurstPercent", atLeast(100)),
    intF("cfsQuotaBurstPeriodSeconds", atLeast(-1)),
    percentF("sharePoolThresholdPercent"),
};

// --- system-config (slov1alpha1.SystemStrategy) ---

constexpr std::array kSystemFields{
    intF("minFreeKbytesFactor", above(0)),
    intF("watermarkScaleFactor", above(0), atMost(400)),
    intF("memcgReapBackGround", atLeast(0), atMost(1)),
    intF("schedGroupIdentityEnabled"),
    intF("schedIdleSaverWmark"),
    kindF("schedFeatures", Kind::kBoolMap),
    intF("pageCacheLimitEnabled", atLeast(0), atMost(1)),
    kindF("totalNetworkBandwidth", Kind::kQuantity),
};

const Field* findField(const Schema& schema, std::string_view key) {
  for (const auto& f : schema.fields) {
    if (f.name == key)
      return &f;
  }
  for (const auto& f : schema.fields) {
    if (equalFold(f.name, key))
      return &f;
  }
  return nullptr;
}

// Go's encoding/json refuses 1.0 and 1e3 for an integer field, and so does this.
kube::Expected<std::int64_t> integerOf(const json::value& v, std::string_view path, bool int32) {
  if (!int32)
    return kube::jsonfields::intValue(v, path);
  auto n = kube::jsonfields::int32Value(v, path);
  if (!n)
    return n.error();
  return std::int64_t{*n};
}

template <typename T>
std::optional<kube::Error> checkBounds(const Field& f, T v, std::string_view path) {
  if (f.lo.set) {
    bool below =
        f.lo.exclusive ? !(v > static_cast<T>(f.lo.value)) : v < static_cast<T>(f.lo.value);
    if (below) {
      return kube::makeKubeError(
          fmt::format("{}: must be {} {}", path, f.lo.exclusive ? ">" : ">=", f.lo.value));
    }
  }
  if (f.hi.set && v > static_cast<T>(f.hi.value))
    return kube::makeKubeError(fmt::format("{}: must be <= {}", path, f.hi.value));
  return std::nullopt;
}

std::string joinQuoted(std::span<const std::string_view> values) {
  std::string out;
  for (auto v : values) {
    if (!out.empty())
      out += ", ";
    out += fmt::format("\"{}\"", v);
  }
  return out;
}

// nullopt: the value marshals as nothing (Go's omitempty), so it must not reach a merge.
kube::Expected<std::optional<json::value>> normalizeValue(const Field& f, const json::value& v,
                                                          const std::string& path) {
  using Out = std::optional<json::value>;
  switch (f.kind) {
    case Kind::kBool:
      if (!v.is_bool())
        return typeError(path, "boolean", v);
      return Out(v);
    case Kind::kInt64:
    case Kind::kInt32: {
      auto n = integerOf(v, path, f.kind == Kind::kInt32);
      if (!n)
        return n.error();
      if (auto e = checkBounds(f, *n, path))
        return *e;
      return Out(json::value(*n));
    }
    case Kind::kFloat: {
      if (!v.is_number())
        return typeError(path, "number", v);
      if (auto e = checkBounds(f, v.to_number<double>(), path))
        return *e;
      return Out(v);
    }
    case Kind::kString:
    case Kind::kStringOmitEmpty:
      if (!v.is_string())
        return typeError(path, "string", v);
      if (f.kind == Kind::kStringOmitEmpty && v.get_string().empty())
        return Out();
      return Out(v);
    case Kind::kEnum: {
      if (!v.is_string())
        return typeError(path, "string", v);
      std::string_view s = v.get_string();
      for (auto allowed : f.values) {
        if (allowed == s)
          return Out(v);
      }
      return kube::makeKubeError(fmt::format("{}: unsupported value \"{}\": supported values: {}",
                                             path, s, joinQuoted(f.values)));
    }
    case Kind::kDurationList: {
      if (!v.is_array())
        return typeError(path, "array", v);
      json::array out;
      for (std::size_t i = 0; i < v.get_array().size(); ++i) {
        const auto& d = v.get_array()[i];
        auto ip = indexPath(path, i);
        if (!d.is_string())
          return typeError(ip, "duration string", d);
        auto parsed = parseGoDuration(d.get_string());
        if (!parsed) {
          return kube::makeKubeError(
              fmt::format("{}: invalid duration \"{}\"", ip, std::string_view(d.get_string())));
        }
        out.emplace_back(formatGoDuration(*parsed));
      }
      if (out.empty())
        return Out();
      return Out(std::move(out));
    }
    case Kind::kStruct: {
      if (!v.is_object())
        return typeError(path, "object", v);
      auto o = normalize(*f.sub, v.get_object(), path);
      if (!o)
        return o.error();
      return Out(std::move(*o));
    }
    case Kind::kStructList: {
      if (!v.is_array())
        return typeError(path, "array", v);
      json::array out;
      for (std::size_t i = 0; i < v.get_array().size(); ++i) {
        const auto& e = v.get_array()[i];
        auto ip = indexPath(path, i);
        if (e.is_null()) {
          out.emplace_back(nullptr);  // a nil *struct element marshals as null
          continue;
        }
        if (!e.is_object())
          return typeError(ip, "object", e);
        auto o = normalize(*f.sub, e.get_object(), ip);
        if (!o)
          return o.error();
        out.emplace_back(std::move(*o));
      }
      if (out.empty())
        return Out();
      return Out(std::move(out));
    }
    case Kind::kAnyMap:
      if (!v.is_object())
        return typeError(path, "object", v);
      if (v.get_object().empty())
        return Out();
      return Out(v);
    case Kind::kBoolMap: {
      if (!v.is_object())
        return typeError(path, "object", v);
      json::object out;
      for (const auto& [k, b] : v.get_object()) {
        if (b.is_null()) {
          out[k] = false;  // null decodes into a map's bool as its zero value
          continue;
        }
        if (!b.is_bool())
          return typeError(childPath(path, k), "boolean", b);
        out[k] = b;
      }
      if (out.empty())
        return Out();
      return Out(std::move(out));
    }
    case Kind::kQuantity: {
      auto q = kube::decodeQuantity(v, path);
      if (!q)
        return q.error();
      return Out(json::value(q->toString()));
    }
    case Kind::kPercentOrQuantity: {
      if (v.is_string()) {
        auto q = kube::Quantity::parse(v.get_string());
        if (!q)
          return kube::makeKubeError(fmt::format("{}: {}", path, q.error().message));
        return Out(v);
      }
      if (!v.is_int64() && !v.is_uint64())
        return typeError(path, "integer or string", v);
      auto n = integerOf(v, path, true);
      if (!n)
        return n.error();
      if (*n < 0 || *n > 100) {
        return kube::makeKubeError(
            fmt::format("{}: must be a percentage in 0-100 or a quantity such as \"50M\"", path));
      }
      return Out(v);
    }
  }
  return Out();
}

}  // namespace

bool equalFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) {
      return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    };
    if (lower(a[i]) != lower(b[i]))
      return false;
  }
  return true;
}

kube::Expected<json::object> normalize(const Schema& schema, const json::object& in,
                                       std::string_view path) {
  json::object out;
  // In input order, so that of two keys naming one field the later wins, as in Go.
  for (const auto& [key, v] : in) {
    const Field* f = findField(schema, key);
    if (f == nullptr)
      continue;
    if (v.is_null()) {
      out.erase(f->name);
      continue;
    }
    auto n = normalizeValue(*f, v, childPath(path, f->name));
    if (!n)
      return n.error();
    if (*n)
      out[f->name] = std::move(**n);
    else
      out.erase(f->name);
  }
  for (const auto& order : schema.orders) {
    const json::value* lower = out.if_contains(order.lower);
    const json::value* upper = out.if_contains(order.upper);
    if (lower != nullptr && upper != nullptr && !(upper->as_int64() > lower->as_int64())) {
      return kube::makeKubeError(
          fmt::format("{}: must be greater than {}", childPath(path, order.upper), order.lower));
    }
  }
  return out;
}

void merge(json::object& base, const json::object& patch, const Schema& schema) {
  for (const auto& [key, pv] : patch) {
    const Field* f = findField(schema, key);
    json::value* bv = base.if_contains(key);
    if (f != nullptr && bv != nullptr && bv->is_object() && pv.is_object()) {
      if (f->kind == Kind::kStruct) {
        merge(bv->get_object(), pv.get_object(), *f->sub);
        continue;
      }
      if (f->kind == Kind::kAnyMap || f->kind == Kind::kBoolMap) {
        for (const auto& [k, v] : pv.get_object())
          bv->get_object()[k] = v;
        continue;
      }
    }
    base[key] = pv;
  }
}

constinit const Schema kColocationStrategySchema{kColocationStrategyFields};
constinit const Schema kResourceThresholdStrategySchema{kResourceThresholdFields,
                                                        kResourceThresholdOrders};
constinit const Schema kResourceQOSStrategySchema{kResourceQOSStrategyFields};
constinit const Schema kCPUBurstStrategySchema{kCPUBurstFields};
constinit const Schema kSystemStrategySchema{kSystemFields};

}  // namespace koord::apis::detail
