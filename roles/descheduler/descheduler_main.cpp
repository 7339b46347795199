// koord descheduler: moves pods off nodes whose measured load is too high.
#include "descheduler_options.h"
#include "koord/apis/features.h"
#include "koord/app/role_app.h"

namespace koord::roles::descheduler {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    DeschedulerOptions o;
    FeatureGate gates(apis::managerFeatures());  // koordinator's pkg/features gate
    FlagSet flags(argv[0]);
    registerFlags(flags, o, gates);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    validate(o);

    app::RoleApp role("descheduler");
    if (o.port != 0)
      role.serveOps(app::joinHostPort(o.address, o.port));
    return role.runNotImplemented("descheduling plugins are");
  });
}

}  // namespace koord::roles::descheduler
