// koord manager: the co-location control plane (webhooks, SLO controllers, batch resources).
#include <cstdlib>

#include "koord/apis/features.h"
#include "koord/app/role_app.h"
#include "manager_options.h"

namespace koord::roles::manager {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    ManagerOptions o;
    FeatureGate gates(apis::managerFeatures());
    FlagSet flags(argv[0]);
    registerFlags(flags, o, gates);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    validate(o);
    readEnvironment(o, [](const char* n) -> const char* { return std::getenv(n); });

    app::RoleApp role("manager");
    role.serveOps(o.metrics_addr, app::OpsEndpoints::kMetrics);
    role.serveOps(o.health_probe_addr, app::OpsEndpoints::kHealth);
    return role.runNotImplemented("controllers and admission webhooks are");
  });
}

}  // namespace koord::roles::manager
