// koord device-daemon: discovers accelerators and writes the device report the koordlet reads.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>

#include "device_daemon_options.h"
#include "device_reporter.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "nvml_library.h"
#include "untimed_log.h"

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
    if (o.no_timestamp)
      logWithoutTimestamps();
    if (!o.config_file.empty()) {
      // Refused rather than ignored: settings an operator wrote must not silently not apply.
      throw app::ConfigError(
          "--config-file is not supported yet; give the settings as flags or KDD_* variables");
    }

    std::unique_ptr<GpuInfoSource> gpus = loadNvml();
    DeviceReporter::Config config{.sysfs_root = o.sysfs_root, .output_file = o.prints_output_file};
    if (o.oneshot) {
      // An init script must be able to tell that no report was written.
      DeviceReporter reporter(config, gpus.get(), nullptr);
      return reporter.runRound() ? 0 : 1;
    }

    app::RoleApp role("device-daemon");
    role.health().setReady(false, "no device report written yet");
    DeviceReporter reporter(config, gpus.get(), &role.health());
    if (!o.metrics_addr.empty())
      role.serveOps(o.metrics_addr);

    Reactor& reactor = role.reactor();
    boost::asio::steady_timer timer(reactor.context());
    std::function<void()> round = [&] {
      // A signal may have begun shutdown while this round waited to run: arming the timer now
      // would hold the loop open until the shutdown deadline.
      if (reactor.stopping())
        return;
      reporter.runRound();
      if (reactor.stopping())
        return;
      timer.expires_after(o.sleep_interval);
      timer.async_wait([&](boost::system::error_code ec) {
        if (!ec)
          round();
      });
    };
    reactor.onShutdown([&] { timer.cancel(); });
    boost::asio::post(reactor.context(), round);
    KOORD_LOG_INFO("device-daemon: reporting devices under {} to {} every {} ms", o.sysfs_root,
                   o.prints_output_file, o.sleep_interval.count());
    return role.run();
  });
}

}  // namespace koord::roles::device_daemon
