#include "plugins/upstream/args_decode.h"

#include <boost/json.hpp>

#include <algorithm>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"

namespace koord::roles::scheduler::upstream {

namespace json = boost::json;
using kube::jsonfields::childPath;
using kube::jsonfields::indexPath;
using kube::jsonfields::typeError;

bool isV1beta1OrOlder(std::string_view api_version) {
  constexpr std::string_view kGroup = "kubescheduler.config.k8s.io/";
  if (!api_version.starts_with(kGroup))
    return false;
  const std::string_view version = api_version.substr(kGroup.size());
  return version == "v1beta1" || version.starts_with("v1alpha");
}

kube::Expected<const json::object*> argsObject(const json::value* args) {
  if (args == nullptr || args->is_null())
    return static_cast<const json::object*>(nullptr);
  if (!args->is_object())
    return typeError("args", "object", *args);
  return &args->get_object();
}

kube::Expected<void> checkKnownFields(const json::object& o,
                                      std::initializer_list<std::string_view> known,
                                      std::string_view path) {
  for (const auto& member : o) {
    const std::string_view name = member.key();
    if (std::find(known.begin(), known.end(), name) == known.end())
      return kube::makeKubeError(fmt::format("{}: unknown field", childPath(path, name)));
  }
  return {};
}

kube::Expected<std::vector<std::string>> stringList(const json::value& v, std::string_view path) {
  std::vector<std::string> out;
  if (v.is_null())
    return out;
  if (!v.is_array())
    return typeError(path, "array", v);
  const json::array& items = v.get_array();
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string())
      return typeError(indexPath(path, i), "string", items[i]);
    out.emplace_back(items[i].get_string());
  }
  return out;
}

}  // namespace koord::roles::scheduler::upstream
