// koord device-daemon: discovers accelerators and writes the device report the koordlet reads.
#include "device_daemon_options.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"

namespace koord::roles::device_daemon {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    DeviceDaemonOptions o;
    FlagSet flags(argv[0]);
    registerFlags(flags, o);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(o.common, nullptr);
    validate(o);

    if (o.oneshot) {
      // An init script must not believe a device file was written.
      KOORD_LOG_ERROR(
          "koord device-daemon: device discovery is not implemented yet; {} not written",
          o.prints_output_file);
      return 1;
    }
    app::RoleApp role("device-daemon");
    if (!o.metrics_addr.empty())
      role.serveOps(o.metrics_addr);
    return role.runNotImplemented("device discovery is");
  });
}

}  // namespace koord::roles::device_daemon
