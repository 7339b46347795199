#include "device_reporter.h"

#include <fmt/format.h>

#include "device_discovery.h"
#include "device_report_writer.h"
#include "koord/core/health.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"

namespace koord::roles::device_daemon {

namespace {

metrics::CounterFamily& roundsTotal() {
  static auto& family = metrics::Registry::global().counter(
      "koord_device_daemon_rounds_total",
      "Discovery rounds by result: written, discovery_failed, write_failed.", {"result"});
  return family;
}

metrics::Gauge& devicesReported() {
  static auto& gauge =
      metrics::Registry::global()
          .gauge("koord_device_daemon_devices", "Devices in the last report written.")
          .with({});
  return gauge;
}

}  // namespace

DeviceReporter::DeviceReporter(Config config, GpuInfoSource* gpus, Health* health)
    : config_(std::move(config)), gpus_(gpus), health_(health) {}

bool DeviceReporter::fail(const std::string& reason) {
  KOORD_LOG_ERROR("device-daemon: {}; the last report written stays, retrying next round", reason);
  if (health_ != nullptr)
    health_->setReady(false, reason);
  return false;
}

bool DeviceReporter::runRound() {
  auto devices = discoverDevices(config_.sysfs_root, gpus_);
  if (!devices) {
    roundsTotal().with({"discovery_failed"}).inc();
    return fail(fmt::format("device discovery failed: {}", devices.error().message));
  }
  if (auto written = writeDeviceReport(config_.output_file, *devices); !written) {
    roundsTotal().with({"write_failed"}).inc();
    return fail(fmt::format("cannot write {}: {}", config_.output_file, written.error().message()));
  }
  roundsTotal().with({"written"}).inc();
  devicesReported().set(static_cast<double>(devices->size()));
  KOORD_LOG_INFO("device-daemon: wrote {} device(s) to {}", devices->size(), config_.output_file);
  if (health_ != nullptr)
    health_->setReady(true);
  return true;
}

}  // namespace koord::roles::device_daemon
