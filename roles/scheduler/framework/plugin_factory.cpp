#include "plugin_factory.h"

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "koord/kube/json_fields.h"

namespace koord::roles::scheduler {

kube::Expected<std::shared_ptr<const PluginArgs>> refuseArgs(const boost::json::value* args,
                                                             std::string_view plugin) {
  if (args == nullptr || args->is_null())
    return std::shared_ptr<const PluginArgs>();
  if (!args->is_object())
    return kube::jsonfields::typeError("args", "object", *args);
  const auto& o = args->get_object();
  if (!o.empty()) {
    return kube::makeKubeError(fmt::format("{}: unknown field (plugin {} takes no args)",
                                           std::string_view(o.begin()->key()), plugin));
  }
  return std::shared_ptr<const PluginArgs>();
}

}  // namespace koord::roles::scheduler
