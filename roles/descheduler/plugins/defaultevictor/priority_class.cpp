// A PriorityClass's value by name, read once when DefaultEvictor is built.
#include "plugins/defaultevictor/priority_class.h"

#include <boost/json.hpp>

#include <string>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::descheduler::defaultevictor {

Expected<std::int32_t> priorityClassValue(kube::RestClient& client, std::string_view name) {
  const std::string what = fmt::format("priorityThreshold.name: PriorityClass {:?}", name);
  auto got = client.getSync(
      kube::ResourceRef{"scheduling.k8s.io", "v1", "priorityclasses", "", std::string(name), ""});
  if (!got)
    return invalidArgument(fmt::format("{}: {}", what, got.error().message));
  const auto* o = got->if_object();
  const boost::json::value* value = o == nullptr ? nullptr : kube::jsonfields::field(*o, "value");
  if (value == nullptr)
    return invalidArgument(what + ": no value");
  auto v = kube::jsonfields::int32Value(*value, "value");
  if (!v)
    return invalidArgument(fmt::format("{}: {}", what, v.error().message));
  return *v;
}

}  // namespace koord::roles::descheduler::defaultevictor
