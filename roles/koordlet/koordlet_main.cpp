// koordlet: the node agent that measures usage and protects LS pods from BE pods.
#include <cstdlib>
#include <string_view>

#include "koord/apis/features.h"
#include "koord/app/role_app.h"
#include "koordlet_options.h"

namespace koord::roles::koordlet {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    KoordletOptions o;
    FeatureGate gates(apis::koordletFeatures());
    FlagSet flags(argv[0]);
    const char* mode = std::getenv("agent_mode");
    registerFlags(flags, o, gates, mode != nullptr && std::string_view(mode) == "hostMode");
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, &gates);
    if (const char* node = std::getenv("NODE_NAME"))
      o.node_name = node;
    validate(o);

    app::RoleApp role("koordlet");
    role.serveOps(o.addr);
    return role.runNotImplemented("metric collection, NodeMetric reporting and QoS management are");
  });
}

}  // namespace koord::roles::koordlet
