// koord runtime-proxy: a CRI proxy between kubelet and containerd that calls koordlet hooks.
#include "koord/app/role_app.h"
#include "runtime_proxy_options.h"

namespace koord::roles::runtime_proxy {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    RuntimeProxyOptions o;
    FlagSet flags(argv[0]);
    registerFlags(flags, o);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, nullptr);
    validate(o);

    app::RoleApp role("runtime-proxy");
    if (!o.metrics_addr.empty())
      role.serveOps(o.metrics_addr);
    return role.runNotImplemented("the CRI proxy is");
  });
}

}  // namespace koord::roles::runtime_proxy
