// The shared namespaces/labelSelector args: strict decoding and the pod filter.
#include "plugins/podfilter/pod_filter.h"

#include <boost/json.hpp>

#include <algorithm>
#include <utility>

#include "koord/kube/decode.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::roles::descheduler::podfilter {

namespace json = boost::json;
namespace strict = kube::strict;
namespace jsonfields = kube::jsonfields;

namespace {

constexpr std::string_view kBothNamespaces = "only one of include/exclude namespaces can be set";

Expected<std::vector<std::string>> namespaceList(const json::object& o, std::string_view name,
                                                 std::string_view path) {
  auto list = strict::arrayField(o, name, path);
  if (!list)
    return list.error();
  std::vector<std::string> out;
  if (*list == nullptr)
    return out;
  const std::string list_path = jsonfields::childPath(path, name);
  for (std::size_t i = 0; i < (*list)->size(); ++i) {
    const json::value& v = (**list)[i];
    if (!v.is_string())
      return jsonfields::typeError(jsonfields::indexPath(list_path, i), "string", v);
    out.emplace_back(v.get_string());
  }
  return out;
}

bool contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

Expected<std::optional<Namespaces>> decodeNamespaces(const json::object& o, std::string_view path) {
  auto obj = strict::objectField(o, "namespaces", path);
  if (!obj)
    return obj.error();
  if (*obj == nullptr)
    return std::optional<Namespaces>{};
  const std::string ns_path = jsonfields::childPath(path, "namespaces");
  if (auto ok = strict::rejectUnknownFields(**obj, {"include", "exclude"}, ns_path); !ok)
    return ok.error();
  Namespaces ns;
  auto include = namespaceList(**obj, "include", ns_path);
  if (!include)
    return include.error();
  ns.include = std::move(*include);
  auto exclude = namespaceList(**obj, "exclude", ns_path);
  if (!exclude)
    return exclude.error();
  ns.exclude = std::move(*exclude);
  if (!ns.include.empty() && !ns.exclude.empty())
    return strict::fieldError(ns_path, kBothNamespaces);
  return std::optional<Namespaces>(std::move(ns));
}

Expected<std::optional<kube::LabelSelector>> decodeLabelSelector(const json::object& o,
                                                                 std::string_view path,
                                                                 std::string_view name) {
  const json::value* v = jsonfields::field(o, name);
  if (v == nullptr)
    return std::optional<kube::LabelSelector>{};
  const std::string sel_path = jsonfields::childPath(path, name);
  if (const auto* obj = v->if_object()) {
    if (auto ok = strict::rejectUnknownFields(*obj, {"matchLabels", "matchExpressions"}, sel_path);
        !ok)
      return ok.error();
  }
  auto decoded = kube::decodeLabelSelector(*v, sel_path);
  if (!decoded)
    return decoded.error();
  if (auto compiled = kube::toSelector(*decoded); !compiled)
    return strict::fieldError(sel_path, compiled.error().message);
  return std::optional<kube::LabelSelector>(std::move(*decoded));
}

Expected<CommonArgs> decodeCommonArgs(const json::object& o, std::string_view path) {
  CommonArgs a;
  auto ns = decodeNamespaces(o, path);
  if (!ns)
    return ns.error();
  a.namespaces = std::move(*ns);
  auto sel = decodeLabelSelector(o, path);
  if (!sel)
    return sel.error();
  a.label_selector = std::move(*sel);
  return a;
}

Expected<PodFilter> PodFilter::make(const std::optional<Namespaces>& namespaces,
                                    const std::optional<kube::LabelSelector>& label_selector) {
  PodFilter f;
  if (namespaces) {
    if (!namespaces->include.empty() && !namespaces->exclude.empty())
      return strict::fieldError("namespaces", kBothNamespaces);
    f.include_ = namespaces->include;
    f.exclude_ = namespaces->exclude;
  }
  if (label_selector) {
    auto compiled = kube::toSelector(*label_selector);
    if (!compiled)
      return strict::fieldError("labelSelector", compiled.error().message);
    f.selector_ = std::move(*compiled);
  }
  return f;
}

bool PodFilter::namespaceMatches(std::string_view ns) const {
  if (!include_.empty() && !contains(include_, ns))
    return false;
  return exclude_.empty() || !contains(exclude_, ns);
}

bool PodFilter::matches(const Pod& pod) const {
  if (!namespaceMatches(pod.namespace_))
    return false;
  return !selector_ || selector_->matches(pod.labels);
}

}  // namespace koord::roles::descheduler::podfilter
