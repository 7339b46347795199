#include "koord/apis/extended_resource_spec.h"

#include <fmt/format.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "koord/apis/input_limits.h"
#include "koord/kube/decode.h"

namespace koord::apis {

namespace {

kube::Expected<kube::ResourceList> listAt(const boost::json::object& o, std::string_view name,
                                          std::string_view path) {
  const boost::json::value* v = o.if_contains(name);
  if (v == nullptr || v->is_null())
    return kube::ResourceList();
  return kube::decodeResourceList(*v, fmt::format("{}.{}", path, name));
}

}  // namespace

kube::Expected<ExtendedResourceSpec> parseExtendedResourceSpec(std::string_view text) {
  if (auto size = checkValueSize("value", text, kMaxAnnotationValueBytes); !size)
    return size.error();
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec)
    return kube::makeKubeError(fmt::format("not JSON: {}", ec.message()));
  ExtendedResourceSpec spec;
  if (v.is_null())
    return spec;
  if (!v.is_object())
    return kube::makeKubeError("expected an object");
  const boost::json::value* containers = v.get_object().if_contains("containers");
  if (containers == nullptr || containers->is_null())
    return spec;
  if (!containers->is_object())
    return kube::makeKubeError("containers: expected object");
  for (const auto& kv : containers->get_object()) {
    std::string path = fmt::format("containers.{}", std::string_view(kv.key()));
    ExtendedContainerSpec cs;
    if (!kv.value().is_null()) {
      if (!kv.value().is_object())
        return kube::makeKubeError(path + ": expected object");
      auto requests = listAt(kv.value().get_object(), "requests", path);
      if (!requests)
        return requests.error();
      auto limits = listAt(kv.value().get_object(), "limits", path);
      if (!limits)
        return limits.error();
      cs = ExtendedContainerSpec{std::move(*requests), std::move(*limits)};
    }
    spec[std::string(kv.key())] = std::move(cs);
  }
  return spec;
}

}  // namespace koord::apis
