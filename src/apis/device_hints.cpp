#include "koord/apis/device_hints.h"

#include <boost/json.hpp>

#include <utility>

#include <fmt/format.h>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"

namespace koord::apis {

namespace json = boost::json;
namespace jf = kube::jsonfields;
using kube::Expected;
using kube::makeKubeError;

namespace {

// type > hint > selector > matchExpressions > item > values: anything deeper is not a hint.
constexpr std::size_t kMaxDepth = 8;

Expected<json::value> parseBounded(std::string_view key, std::string_view text) {
  if (text.size() > kMaxDeviceHintBytes) {
    return makeKubeError(fmt::format("{}: {} bytes, more than the {} allowed", key, text.size(),
                                     kMaxDeviceHintBytes));
  }
  json::parse_options opts;
  opts.max_depth = kMaxDepth;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec, {}, opts);
  if (ec)
    return makeKubeError(fmt::format("{}: not JSON: {}", key, ec.message()));
  return v;
}

Expected<std::optional<kube::LabelSelector>> selectorMember(const json::object& o,
                                                            std::string_view name,
                                                            std::string_view path) {
  const json::value* v = jf::field(o, name);
  if (v == nullptr)
    return std::optional<kube::LabelSelector>();
  const std::string p = jf::childPath(path, name);
  auto selector = kube::decodeLabelSelector(*v, p);
  if (!selector)
    return selector.error();
  if (auto compiled = kube::toSelector(*selector); !compiled)
    return makeKubeError(fmt::format("{}: {}", p, compiled.error().message));
  return std::optional<kube::LabelSelector>(std::move(*selector));
}

template <typename E, std::size_t N>
Expected<E> enumMember(const json::object& o, std::string_view name, std::string_view path,
                       const std::pair<std::string_view, E> (&values)[N]) {
  auto text = jf::stringField(o, name, path);
  if (!text)
    return text.error();
  if (text->empty())
    return E{};
  for (const auto& [spelling, value] : values) {
    if (*text == spelling)
      return value;
  }
  std::string allowed;
  for (const auto& [spelling, value] : values)
    allowed += fmt::format("{}\"{}\"", allowed.empty() ? "" : ", ", spelling);
  return makeKubeError(
      fmt::format("{}: \"{}\" is not one of {}", jf::childPath(path, name), *text, allowed));
}

constexpr std::pair<std::string_view, DeviceAllocateStrategy> kStrategies[] = {
    {"ApplyForAll", DeviceAllocateStrategy::kApplyForAll},
    {"RequestsAsCount", DeviceAllocateStrategy::kRequestsAsCount}};
constexpr std::pair<std::string_view, DeviceExclusivePolicy> kExclusivePolicies[] = {
    {"DeviceLevel", DeviceExclusivePolicy::kDeviceLevel},
    {"PCIeLevel", DeviceExclusivePolicy::kPCIeLevel}};
constexpr std::pair<std::string_view, bool> kJointScopes[] = {{"SamePCIe", true}};

Expected<DeviceHint> decodeHint(const json::object& o, std::string_view path) {
  DeviceHint hint;
  auto selector = selectorMember(o, "selector", path);
  if (!selector)
    return selector.error();
  hint.selector = std::move(*selector);
  auto vf_selector = selectorMember(o, "vfSelector", path);
  if (!vf_selector)
    return vf_selector.error();
  hint.vf_selector = std::move(*vf_selector);
  auto strategy = enumMember(o, "allocateStrategy", path, kStrategies);
  if (!strategy)
    return strategy.error();
  hint.allocate_strategy = *strategy;
  auto exclusive = enumMember(o, "exclusivePolicy", path, kExclusivePolicies);
  if (!exclusive)
    return exclusive.error();
  hint.exclusive_policy = *exclusive;
  return hint;
}

}  // namespace

Expected<DeviceAllocateHints> parseDeviceAllocateHints(std::string_view text) {
  constexpr std::string_view key = kAnnotationDeviceAllocateHint;
  auto v = parseBounded(key, text);
  if (!v)
    return v.error();
  DeviceAllocateHints out;
  if (v->is_null())
    return out;
  if (!v->is_object())
    return jf::typeError(key, "object", *v);
  const json::object& o = v->get_object();
  if (o.size() > kMaxDeviceHintTypes) {
    return makeKubeError(fmt::format("{}: {} device types, more than the {} allowed", key, o.size(),
                                     kMaxDeviceHintTypes));
  }
  for (const auto& kv : o) {
    const std::string type(kv.key());
    if (kv.value().is_null()) {
      out.erase(type);
      continue;
    }
    if (!kv.value().is_object())
      return jf::typeError(type, "object", kv.value());
    auto hint = decodeHint(kv.value().get_object(), type);
    if (!hint)
      return hint.error();
    out.insert_or_assign(type, std::move(*hint));  // a repeated key: the last wins, as in Go
  }
  return out;
}

Expected<DeviceJointAllocate> parseDeviceJointAllocate(std::string_view text) {
  constexpr std::string_view key = kAnnotationDeviceJointAllocate;
  auto v = parseBounded(key, text);
  if (!v)
    return v.error();
  DeviceJointAllocate out;
  if (v->is_null())
    return out;
  if (!v->is_object())
    return jf::typeError(key, "object", *v);
  const json::object& o = v->get_object();
  if (const json::value* types = jf::field(o, "deviceTypes")) {
    const std::string path = jf::childPath(key, "deviceTypes");
    if (!types->is_array())
      return jf::typeError(path, "array", *types);
    if (types->get_array().size() > kMaxDeviceHintTypes) {
      return makeKubeError(fmt::format("{}: {} items, more than the {} allowed", path,
                                       types->get_array().size(), kMaxDeviceHintTypes));
    }
    for (std::size_t i = 0; i < types->get_array().size(); ++i) {
      const json::value& t = types->get_array()[i];
      if (!t.is_string())
        return jf::typeError(jf::indexPath(path, i), "string", t);
      out.device_types.emplace_back(t.get_string());
    }
  }
  auto scope = enumMember(o, "requiredScope", key, kJointScopes);
  if (!scope)
    return scope.error();
  out.same_pcie = *scope;
  return out;
}

Expected<std::optional<DeviceAllocateHints>> podDeviceAllocateHints(
    const kube::Labels& annotations) {
  auto it = annotations.find(kAnnotationDeviceAllocateHint);
  if (it == annotations.end())
    return std::optional<DeviceAllocateHints>();
  auto parsed = parseDeviceAllocateHints(it->second);
  if (!parsed)
    return parsed.error();
  return std::optional<DeviceAllocateHints>(std::move(*parsed));
}

Expected<std::optional<DeviceJointAllocate>> podDeviceJointAllocate(
    const kube::Labels& annotations) {
  auto it = annotations.find(kAnnotationDeviceJointAllocate);
  if (it == annotations.end())
    return std::optional<DeviceJointAllocate>();
  auto parsed = parseDeviceJointAllocate(it->second);
  if (!parsed)
    return parsed.error();
  return std::optional<DeviceJointAllocate>(std::move(*parsed));
}

}  // namespace koord::apis
