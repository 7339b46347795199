#include "fixed_factory.h"

#include <utility>

namespace koord::roles::scheduler::testkit {

PluginFactory fixedFactory(std::shared_ptr<Plugin> plugin) {
  PluginFactory f;
  f.decode_args = [](const boost::json::value*,
                     std::string_view) -> kube::Expected<std::shared_ptr<const PluginArgs>> {
    return nullptr;
  };
  f.create = [plugin = std::move(plugin)](
                 std::shared_ptr<const PluginArgs>,
                 FrameworkHandle&) -> kube::Expected<std::shared_ptr<Plugin>> { return plugin; };
  return f;
}

}  // namespace koord::roles::scheduler::testkit
