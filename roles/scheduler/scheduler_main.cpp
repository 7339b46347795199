// koord scheduler: kube-scheduler's framework with Koordinator's load-aware plugins.
#include "koord/apis/features.h"
#include "koord/app/role_app.h"
#include "scheduler_options.h"

namespace koord::roles::scheduler {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    SchedulerOptions o;
    FeatureGate gates(apis::schedulerFeatures());
    FlagSet flags(argv[0]);
    registerFlags(flags, o, gates);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    validate(o);

    app::RoleApp role("scheduler");
    if (o.port != 0)
      role.serveOps(app::joinHostPort(o.address, o.port));
    return role.runNotImplemented("the scheduling framework is");
  });
}

}  // namespace koord::roles::scheduler
