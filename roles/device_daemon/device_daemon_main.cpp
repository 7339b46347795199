// koord device-daemon: discovers accelerators and writes the device report the koordlet reads.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <functional>

#include "device_daemon_config_file.h"
#include "device_daemon_options.h"
#include "device_reporter.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "nvml_library.h"
#include "untimed_log.h"

namespace koord::roles::device_daemon {

int roleMain(int argc, char** argv) {
  return app::runRole(argv[0], [&] {
    DeviceDaemonOptions from_flags;
    FlagSet flags(argv[0]);
    registerFlags(flags, from_flags);
    if (app::parseOrHelp(flags, argc, argv))
      return 0;
    app::applyCommonOptions(from_flags.common, nullptr);
    DeviceDaemonOptions o = withConfigFile(from_flags, flags);
    if (o.no_timestamp)
      logWithoutTimestamps();

    std::unique_ptr<GpuInfoSource> gpus = loadNvml();
    auto configOf = [&](const DeviceDaemonOptions& opts) {
      return DeviceReporter::Config{.sysfs_root = opts.sysfs_root,
                                    .output_file = opts.prints_output_file};
    };
    if (o.oneshot) {
      // An init script must be able to tell that no report was written.
      DeviceReporter reporter(configOf(o), gpus.get(), nullptr);
      return reporter.runRound() ? 0 : 1;
    }

    app::RoleApp role("device-daemon");
    role.health().setReady(false, "no device report written yet");
    auto reporter = std::make_unique<DeviceReporter>(configOf(o), gpus.get(), &role.health());
    if (!o.metrics_addr.empty())
      role.serveOps(o.metrics_addr);

    Reactor& reactor = role.reactor();
    boost::asio::steady_timer timer(reactor.context());
    std::function<void()> round = [&] {
      // A signal may have begun shutdown while this round waited to run: arming the timer now
      // would hold the loop open until the shutdown deadline.
      if (reactor.stopping())
        return;
      reporter->runRound();
      if (reactor.stopping())
        return;
      timer.expires_after(o.sleep_interval);
      timer.async_wait([&](boost::system::error_code ec) {
        if (!ec)
          round();
      });
    };
    // SIGHUP, as in Koordinator: read --config-file again and discover at once. A file that no
    // longer reads keeps the settings in force.
    boost::asio::signal_set hangup(reactor.context(), SIGHUP);
    std::function<void()> awaitHangup = [&] {
      hangup.async_wait([&](boost::system::error_code ec, int) {
        if (ec || reactor.stopping())
          return;
        DeviceDaemonOptions next;
        try {
          next = withConfigFile(from_flags, flags);
        } catch (const std::exception& e) {
          KOORD_LOG_ERROR("device-daemon: SIGHUP: {}; the settings in force stay", e.what());
          return awaitHangup();
        }
        o.sleep_interval = next.sleep_interval;
        o.prints_output_file = next.prints_output_file;
        reporter = std::make_unique<DeviceReporter>(configOf(o), gpus.get(), &role.health());
        KOORD_LOG_INFO("device-daemon: SIGHUP: reporting to {} every {} ms", o.prints_output_file,
                       o.sleep_interval.count());
        round();  // re-arms the timer, dropping the wait in progress
        awaitHangup();
      });
    };
    awaitHangup();
    reactor.onShutdown([&] {
      timer.cancel();
      hangup.cancel();
    });
    boost::asio::post(reactor.context(), round);
    KOORD_LOG_INFO("device-daemon: reporting devices under {} to {} every {} ms", o.sysfs_root,
                   o.prints_output_file, o.sleep_interval.count());
    return role.run();
  });
}

}  // namespace koord::roles::device_daemon
