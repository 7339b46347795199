#include "statesinformer/node_device_reporter.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>

#include "koord/core/log.h"
#include "koord/kube/rest_client.h"
#include "statesinformer/states_informer.h"

namespace koord::roles::koordlet {

namespace asio = boost::asio;
namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

namespace {

const kube::ResourceRef kDevices{"scheduling.koordinator.sh", "v1alpha1", "devices", "", "", ""};
const kube::ResourceRef kNodes{"", "v1", "nodes", "", "", ""};

kube::ResourceRef named(kube::ResourceRef ref, const std::string& name) {
  ref.name = name;
  return ref;
}

// Unchanged reports are written again this often, so a Device deleted or edited by hand comes
// back without a koordlet restart.
constexpr seconds kResyncPeriod{60};
constexpr seconds kMaxBackoff{60};

}  // namespace

struct NodeDeviceReporter::Impl : std::enable_shared_from_this<Impl> {
  Impl(kube::RestClient& c, asio::io_context& i, StatesInformer& s, NodeDeviceReporterOptions o,
       metrics::Registry& r)
      : client(c),
        io(i),
        states(s),
        options(std::move(o)),
        timer(i),
        reports(r.counter("koordlet_device_report_total",
                          "Device object writes by result (error: the API server refused or "
                          "could not be reached; invalid: a report file did not read)",
                          {"result"})) {}

  kube::RestClient& client;
  asio::io_context& io;
  StatesInformer& states;
  const NodeDeviceReporterOptions options;
  asio::steady_timer timer;
  metrics::CounterFamily& reports;
  std::atomic<bool> stopped{false};

  // What the API server holds as far as we know, and since when.
  std::optional<NodeDevices> applied;
  steady_clock::time_point applied_at;
  // Each fault is logged when it starts, not every round it lasts.
  std::string report_error;
  std::string write_error;
  std::string label_error;
  std::set<std::string> skipped_logged;
  bool waiting_logged = false;
  milliseconds backoff{0};

  void schedule(milliseconds after) {
    timer.expires_after(after);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec && !self->stopped)
        self->sync();
    });
  }

  void scheduleNext() { schedule(options.sync_interval); }

  void sync() {
    auto node = states.node();
    if (node == nullptr) {
      // The owner reference needs the Node's UID.
      if (!waiting_logged)
        KOORD_LOG_INFO("device reporter: waiting for Node {}", options.node_name);
      waiting_logged = true;
      return scheduleNext();
    }
    waiting_logged = false;
    auto loaded = loadNodeDevices(options.device_infos_dir, options.devices);
    if (!loaded) {
      if (loaded.error().message != report_error) {
        KOORD_LOG_ERROR("device reporter: Device {}: {}; keeping the devices last reported",
                        options.node_name, loaded.error().message);
        reports.with({"invalid"}).inc();
      }
      report_error = loaded.error().message;
      return scheduleNext();
    }
    if (!report_error.empty())
      KOORD_LOG_INFO("device reporter: {} reads again", options.device_infos_dir.string());
    report_error.clear();
    for (const auto& s : loaded->skipped) {
      if (skipped_logged.insert(s).second)
        KOORD_LOG_WARNING("device reporter: Device {}: {}", options.node_name, s);
    }
    if (applied && *applied == *loaded && steady_clock::now() - applied_at < kResyncPeriod)
      return labelNode(*node, std::move(*loaded));
    writeDevice(*node, std::move(*loaded));
  }

  // A merge patch first (the usual case: the object exists); create only on NotFound.
  void writeDevice(const NodeInfo& node, NodeDevices devices) {
    auto patch = devicePatch(devices);
    client.patch(named(kDevices, options.node_name), kube::PatchType::kMergePatch, std::move(patch),
                 [self = shared_from_this(), node,
                  devices = std::move(devices)](kube::ApiResult<json::value> r) mutable {
                   if (self->stopped)
                     return;
                   if (!r && kube::isNotFound(r.error()))
                     return self->createDevice(std::move(node), std::move(devices));
                   self->written(std::move(r), node, std::move(devices));
                 });
  }

  void createDevice(NodeInfo node, NodeDevices devices) {
    auto body = deviceObject(devices, node.name, node.uid);
    client.create(kDevices, std::move(body),
                  [self = shared_from_this(), node = std::move(node),
                   devices = std::move(devices)](kube::ApiResult<json::value> r) mutable {
                    if (self->stopped)
                      return;
                    self->written(std::move(r), node, std::move(devices));
                  });
  }

  void written(kube::ApiResult<json::value> r, const NodeInfo& node, NodeDevices devices) {
    if (!r) {
      reports.with({"error"}).inc();
      if (r.error().message != write_error)
        KOORD_LOG_WARNING("device reporter: Device {}: {}; retrying", options.node_name,
                          r.error().message);
      write_error = r.error().message;
      // An AlreadyExists (a create raced another writer) is patched on the next round.
      backoff = std::min<milliseconds>(std::max(backoff * 2, milliseconds(options.sync_interval)),
                                       kMaxBackoff);
      applied.reset();
      return schedule(backoff);
    }
    reports.with({"success"}).inc();
    if (!write_error.empty())
      KOORD_LOG_INFO("device reporter: Device {} written again", options.node_name);
    write_error.clear();
    backoff = milliseconds(0);
    if (!applied || *applied != devices)
      KOORD_LOG_INFO("device reporter: Device {}: {} device(s) reported", options.node_name,
                     devices.devices.size());
    applied = devices;
    applied_at = steady_clock::now();
    labelNode(node, std::move(devices));
  }

  // Koordinator's manager copies the Device's GPU labels onto the Node; koord's manager has no
  // GPU plugin yet, so the koordlet sets them itself.
  void labelNode(const NodeInfo& node, NodeDevices devices) {
    auto patch = nodeLabelsPatch(devices, node.labels);
    if (!patch)
      return scheduleNext();
    client.patch(named(kNodes, options.node_name), kube::PatchType::kMergePatch, std::move(*patch),
                 [self = shared_from_this()](kube::ApiResult<json::value> r) {
                   if (self->stopped)
                     return;
                   if (!r) {
                     if (r.error().message != self->label_error)
                       KOORD_LOG_WARNING("device reporter: Node {} GPU labels: {}; retrying",
                                         self->options.node_name, r.error().message);
                     self->label_error = r.error().message;
                     return self->schedule(kMaxBackoff / 4);
                   }
                   self->label_error.clear();
                   KOORD_LOG_INFO("device reporter: Node {} GPU labels set",
                                  self->options.node_name);
                   self->scheduleNext();
                 });
  }
};

NodeDeviceReporter::NodeDeviceReporter(kube::RestClient& client, asio::io_context& io,
                                       StatesInformer& states, NodeDeviceReporterOptions options,
                                       metrics::Registry& registry)
    : impl_(std::make_shared<Impl>(client, io, states, std::move(options), registry)) {}

NodeDeviceReporter::~NodeDeviceReporter() {
  stop();
}

void NodeDeviceReporter::start() {
  asio::post(impl_->io, [impl = impl_] { impl->sync(); });
}

void NodeDeviceReporter::stop() {
  if (impl_->stopped.exchange(true))
    return;
  asio::post(impl_->io, [impl = impl_] { impl->timer.cancel(); });
}

}  // namespace koord::roles::koordlet
