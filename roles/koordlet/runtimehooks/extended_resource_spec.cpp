#include "runtimehooks/extended_resource_spec.h"

#include <fmt/format.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "koord/kube/decode.h"

namespace koord::roles::koordlet {

kube::Expected<std::vector<ContainerMeta>> parseExtendedResourceSpec(std::string_view json) {
  boost::system::error_code ec;
  const boost::json::value doc = boost::json::parse(json, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("not JSON: {}", ec.message()));
  if (!doc.is_object())
    return kube::makeKubeError("want a JSON object");
  std::vector<ContainerMeta> out;
  const boost::json::value* containers = doc.as_object().if_contains("containers");
  if (containers == nullptr || containers->is_null())
    return out;
  if (!containers->is_object())
    return kube::makeKubeError("containers: want an object");
  for (const auto& [name, spec] : containers->as_object()) {
    const std::string path = fmt::format("containers.{}", std::string_view(name));
    if (!spec.is_object())
      return kube::makeKubeError(path + ": want an object");
    ContainerMeta c;
    c.name = std::string(name);
    for (const auto& [key, value] : spec.as_object()) {
      if (key != "requests" && key != "limits")
        continue;  // Koordinator's spec has room for more; only these two matter here
      auto list = kube::decodeResourceList(value, path + "." + std::string(key));
      if (!list)
        return list.error();
      (key == "requests" ? c.requests : c.limits) = std::move(*list);
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const ContainerMeta& a, const ContainerMeta& b) { return a.name < b.name; });
  return out;
}

}  // namespace koord::roles::koordlet
