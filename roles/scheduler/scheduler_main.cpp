// koord scheduler: kube-scheduler's framework with Koordinator's load-aware plugins.
#include "config/expand_plugins.h"
#include "config/scheduler_config.h"
#include "framework/plugin_registry.h"
#include "koord/apis/features.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "scheduler_options.h"

namespace koord::roles::scheduler {

namespace {

// The configuration file, checked in full before anything starts: an unknown plugin, extension
// point, field or arg is a startup error naming it.
config::SchedulerConfig loadConfig(const SchedulerOptions& o) {
  if (o.config.empty()) {
    auto defaults = config::parseSchedulerConfigText(
        "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n",
        inTreeRegistry());
    if (!defaults)
      throw app::ConfigError("the default configuration: " + defaults.error().message);
    return std::move(*defaults);
  }
  auto cfg = config::loadSchedulerConfig(o.config, inTreeRegistry());
  if (!cfg)
    throw app::ConfigError("--config: " + cfg.error().message);
  return std::move(*cfg);
}

}  // namespace

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
    const auto cfg = loadConfig(o);
    KOORD_LOG_INFO("scheduler: {}", config::describe(cfg));

    app::RoleApp role("scheduler");
    if (o.port != 0)
      role.serveOps(app::joinHostPort(o.address, o.port));
    return role.runNotImplemented("the scheduling loop is");
  });
}

}  // namespace koord::roles::scheduler
