#include "webhook/strategic_merge.h"

#include <boost/json.hpp>

#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace koord::manager::webhook {
namespace {

namespace json = boost::json;

constexpr std::string_view kDirective = "$patch";

// Merge keys of the Pod's lists (k8s.io/api/core/v1 patchMergeKey tags), by the list's path with
// "[]" for "any element". An empty key marks a list of scalars merged as a set (finalizers).
const std::map<std::string, std::string, std::less<>>& mergeKeys() {
  static const auto* keys = [] {
    auto* m = new std::map<std::string, std::string, std::less<>>{
        {"metadata.ownerReferences", "uid"},
        {"metadata.finalizers", ""},
        {"spec.volumes", "name"},
        {"spec.imagePullSecrets", "name"},
        {"spec.hostAliases", "ip"},
        {"spec.topologySpreadConstraints", "topologyKey"},
        {"spec.schedulingGates", "name"},
        {"spec.resourceClaims", "name"},
    };
    for (std::string_view list : {"containers", "initContainers", "ephemeralContainers"}) {
      std::string base = fmt::format("spec.{}", list);
      m->emplace(base, "name");
      m->emplace(base + "[].env", "name");
      m->emplace(base + "[].ports", "containerPort");
      m->emplace(base + "[].volumeMounts", "mountPath");
      m->emplace(base + "[].volumeDevices", "devicePath");
    }
    return m;
  }();
  return *keys;
}

std::string join(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

kube::Error patchError(std::string_view where, std::string_view what) {
  return kube::makeKubeError(
      fmt::format("spec.patch{}{}: {}", where.empty() ? "" : ".", where, what));
}

// The value of "$patch" when the object carries one. Two overloads, so that an object is never
// copied into a temporary value whose string the view would outlive.
std::optional<std::string_view> directiveOf(const json::object& o) {
  const json::value* d = o.if_contains(kDirective);
  if (d == nullptr || !d->is_string())
    return std::nullopt;
  return std::string_view(d->get_string());
}

std::optional<std::string_view> directiveOf(const json::value& v) {
  const json::object* o = v.if_object();
  return o == nullptr ? std::nullopt : directiveOf(*o);
}

json::value withoutDirective(const json::object& o) {
  json::object copy = o;
  copy.erase(kDirective);
  return copy;
}

kube::Expected<void> mergeValue(json::value& target, const json::value& patch,
                                const std::string& path, const std::string& where);

kube::Expected<void> mergeObject(json::value& target, const json::object& patch,
                                 const std::string& path, const std::string& where) {
  for (const auto& kv : patch) {
    if (!kv.key().empty() && kv.key().front() == '$' && kv.key() != kDirective) {
      return patchError(
          where, fmt::format("directive \"{}\" is not supported", std::string_view(kv.key())));
    }
  }
  if (auto d = directiveOf(patch); d.has_value() || patch.contains(kDirective)) {
    if (d == "replace") {
      target = withoutDirective(patch);
      return {};
    }
    return patchError(where, "\"$patch\" here must be \"replace\" (\"delete\" only as a value)");
  }
  if (!target.is_object())
    target = json::object();
  json::object& out = target.get_object();
  for (const auto& kv : patch) {
    std::string_view key = kv.key();
    if (kv.value().is_null() || directiveOf(kv.value()) == "delete") {
      out.erase(key);
      continue;
    }
    if (auto r = mergeValue(out[key], kv.value(), join(path, key), join(where, key)); !r)
      return r;
  }
  return {};
}

kube::Expected<void> mergeScalarSet(json::value& target, const json::array& patch) {
  if (!target.is_array()) {
    target = patch;
    return {};
  }
  json::array& out = target.get_array();
  for (const auto& e : patch) {
    bool present = false;
    for (const auto& have : out)
      present = present || have == e;
    if (!present)
      out.push_back(e);
  }
  return {};
}

kube::Expected<void> mergeKeyed(json::value& target, const json::array& patch,
                                const std::string& path, const std::string& where,
                                std::string_view key) {
  for (const auto& e : patch) {
    if (directiveOf(e) == "replace") {
      json::array replaced;
      for (const auto& other : patch) {
        if (directiveOf(other) != "replace")
          replaced.push_back(other);
      }
      target = std::move(replaced);
      return {};
    }
  }
  if (!target.is_array())
    target = json::array();
  json::array& out = target.get_array();
  for (std::size_t i = 0; i < patch.size(); ++i) {
    std::string at = fmt::format("{}[{}]", where, i);
    const json::object* element = patch[i].if_object();
    if (element == nullptr)
      return patchError(at, "expected object");
    const json::value* id = element->if_contains(key);
    if (id == nullptr || id->is_null())
      return patchError(at, fmt::format("missing merge key \"{}\"", key));
    auto match = out.end();
    for (auto it = out.begin(); it != out.end(); ++it) {
      const json::object* have = it->if_object();
      const json::value* have_id = have == nullptr ? nullptr : have->if_contains(key);
      if (have_id != nullptr && *have_id == *id) {
        match = it;
        break;
      }
    }
    if (directiveOf(patch[i]) == "delete") {
      if (match != out.end())
        out.erase(match);
      continue;
    }
    json::value* slot = nullptr;
    if (match != out.end()) {
      slot = &*match;
    } else {
      out.emplace_back(json::object());
      slot = &out.back();
    }
    if (auto r = mergeObject(*slot, *element, path + "[]", at); !r)
      return r;
  }
  return {};
}

kube::Expected<void> mergeValue(json::value& target, const json::value& patch,
                                const std::string& path, const std::string& where) {
  if (const json::object* o = patch.if_object())
    return mergeObject(target, *o, path, where);
  if (const json::array* a = patch.if_array()) {
    const auto& keys = mergeKeys();
    auto rule = keys.find(path);
    if (rule == keys.end()) {
      target = *a;
      return {};
    }
    if (rule->second.empty())
      return mergeScalarSet(target, *a);
    return mergeKeyed(target, *a, path, where, rule->second);
  }
  target = patch;
  return {};
}

}  // namespace

kube::Expected<void> strategicMergePod(boost::json::object& pod, const boost::json::object& patch) {
  json::value root = std::move(pod);
  auto r = mergeObject(root, patch, "", "");
  // mergeObject keeps an object at the root unless the patch replaced it with one.
  if (root.is_object())
    pod = std::move(root.get_object());
  else
    pod = json::object();
  return r;
}

}  // namespace koord::manager::webhook
