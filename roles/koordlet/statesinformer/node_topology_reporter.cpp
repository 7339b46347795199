#include "statesinformer/node_topology_reporter.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/kube/discovery.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::koordlet {

namespace asio = boost::asio;
namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

namespace {

const kube::ResourceRef kTopologies{std::string(apis::kTopologyGroup),
                                    std::string(apis::kTopologyVersion),
                                    std::string(apis::kNodeResourceTopologyResource),
                                    "",
                                    "",
                                    ""};

// An unchanged status is checked against the API server this often, so an object deleted or
// edited by someone else comes back without a koordlet restart.
constexpr seconds kResyncPeriod{60};
constexpr seconds kMaxBackoff{60};
// Warnings are logged once each; past this many distinct ones the memory of them starts over.
constexpr std::size_t kMaxLoggedWarnings = 1024;

// The kubelet's checkpoint; nullopt when it cannot be read (the warning says why).
std::optional<std::string> readCPUManagerState(const std::filesystem::path& path,
                                               std::vector<std::string>& warnings) {
  auto text = readFileBounded(path, kMaxCPUManagerStateBytes);
  if (!text) {
    warnings.push_back(text.error().message);
    return std::nullopt;
  }
  if (!*text) {
    warnings.push_back(fmt::format("{}: cannot open", path.string()));
    return std::nullopt;
  }
  return std::move(**text);
}

}  // namespace

struct NodeTopologyReporter::Impl : std::enable_shared_from_this<Impl> {
  Impl(kube::RestClient& c, asio::io_context& i, std::function<StatesSnapshot()> s,
       const cgroup::CpuTopology& t, NodeTopologyReporterOptions o, metrics::Registry& r)
      : client(c),
        io(i),
        snapshot(std::move(s)),
        topology(t),
        options(std::move(o)),
        timer(i),
        reports(r.counter("koordlet_node_topology_report_total",
                          "NodeResourceTopology writes by result (unchanged: the API server "
                          "already held it; error: refused or unreachable; invalid: the node's "
                          "NUMA files or the object held did not read)",
                          {"result"})) {}

  kube::RestClient& client;
  asio::io_context& io;
  const std::function<StatesSnapshot()> snapshot;
  const cgroup::CpuTopology& topology;
  const NodeTopologyReporterOptions options;
  asio::steady_timer timer;
  metrics::CounterFamily& reports;
  std::atomic<bool> stopped{false};

  // Io thread only.
  bool busy = false;
  bool again = false;
  std::optional<NodeTopologyStatus> applied;
  steady_clock::time_point applied_at;
  std::optional<apis::CPUBasicInfo> cpu_basic_info;
  milliseconds backoff{0};
  bool waiting_logged = false;
  bool configz_wait_logged = false;
  bool crd_missing = false;
  std::string read_error;
  std::string write_error;
  std::set<std::string> warnings_logged;

  mutable std::mutex mu;
  std::shared_ptr<const NodeTopologyStatus> reported;  // guarded by mu

  void schedule(milliseconds after) {
    timer.expires_after(after);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec && !self->stopped)
        self->sync();
    });
  }

  // The round is over: the next one after `after`, or at once when pods changed meanwhile.
  void finish(milliseconds after) {
    busy = false;
    if (stopped)
      return;
    if (again) {
      again = false;
      return schedule(milliseconds(0));
    }
    schedule(after);
  }

  void failed(std::string_view result, const std::string& message) {
    reports.with({std::string(result)}).inc();
    if (message != write_error)
      KOORD_LOG_WARNING("node topology reporter: NodeResourceTopology {}: {}; retrying",
                        options.node_name, message);
    write_error = message;
    backoff = std::min<milliseconds>(std::max(backoff * 2, options.sync_interval), kMaxBackoff);
    applied.reset();
    finish(backoff);
  }

  void succeeded(NodeTopologyStatus status, std::string_view result) {
    reports.with({std::string(result)}).inc();
    if (!write_error.empty())
      KOORD_LOG_INFO("node topology reporter: NodeResourceTopology {} written again",
                     options.node_name);
    write_error.clear();
    backoff = milliseconds(0);
    {
      std::lock_guard lock(mu);
      reported = std::make_shared<const NodeTopologyStatus>(status);
    }
    applied = std::move(status);
    applied_at = steady_clock::now();
    finish(options.sync_interval);
  }

  void logWarnings(const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) {
      if (warnings_logged.size() >= kMaxLoggedWarnings)
        warnings_logged.clear();
      if (warnings_logged.insert(w).second)
        KOORD_LOG_WARNING("node topology reporter: {}", w);
    }
  }

  void podsChanged() {
    if (stopped)
      return;
    if (busy) {
      again = true;
      return;
    }
    timer.cancel();
    sync();
  }

  void sync() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    const StatesSnapshot states = snapshot();
    if (!states.synced || states.node == nullptr || states.pods == nullptr) {
      if (!waiting_logged)
        KOORD_LOG_INFO("node topology reporter: waiting for Node {} and its pods",
                       options.node_name);
      waiting_logged = true;
      return finish(options.sync_interval);
    }
    waiting_logged = false;
    auto numa = readNumaMemory(options.sys_root, options.hugepages);
    if (!numa) {
      if (numa.error().message != read_error) {
        KOORD_LOG_ERROR("node topology reporter: {}; keeping what was reported",
                        numa.error().message);
        reports.with({"invalid"}).inc();
      }
      read_error = numa.error().message;
      return finish(options.sync_interval);
    }
    read_error.clear();
    if (!cpu_basic_info) {
      cpu_basic_info =
          readCPUBasicInfo(options.proc_root, options.sys_root, options.sys_fs_root, topology);
    }
    std::vector<std::string> warnings;
    apis::KubeletCPUManagerPolicy kubelet_policy = options.kubelet_policy;
    std::string topology_policy = options.topology_policy;
    if (states.kubelet_config_queried) {
      // Koordinator reports nothing without the kubelet's configuration: with a static CPU
      // manager, CPUs the kubelet pinned would read as free.
      if (states.kubelet_config == nullptr) {
        if (!configz_wait_logged)
          KOORD_LOG_INFO("node topology reporter: waiting for the kubelet's /configz");
        configz_wait_logged = true;
        return finish(options.sync_interval);
      }
      configz_wait_logged = false;
      std::string warning;
      kubelet_policy = cpuManagerPolicyOf(*states.kubelet_config, topology, warning);
      if (!warning.empty())
        warnings.push_back("kubelet reserved CPUs: " + warning);
      topology_policy =
          std::string(topologyPolicyOf(states.kubelet_config->topology_manager_policy,
                                       states.kubelet_config->topology_manager_scope));
    }
    std::optional<std::string> state;
    if (kubelet_policy.policy == apis::kKubeletCPUManagerPolicyStatic)
      state = readCPUManagerState(options.var_lib_kubelet_dir / "cpu_manager_state", warnings);
    NodeTopologyReport report = buildNodeTopology({
        .topology = topology,
        .numa = *numa,
        .cpu_basic_info = *cpu_basic_info,
        .node = *states.node,
        .pods = *states.pods,
        .kubelet_policy = kubelet_policy,
        .topology_policy = topology_policy,
        .cpu_manager_state = std::move(state),
    });
    logWarnings(warnings);
    logWarnings(report.warnings);
    if (applied && *applied == report.status && steady_clock::now() - applied_at < kResyncPeriod)
      return finish(options.sync_interval);
    fetch(*states.node, std::move(report.status));
  }

  // What the API server holds decides between nothing, a patch and a create.
  void fetch(NodeInfo node, NodeTopologyStatus desired) {
    kube::ResourceRef ref = kTopologies;
    ref.name = options.node_name;
    client.get(ref, [self = shared_from_this(), node = std::move(node),
                     desired = std::move(desired)](kube::ApiResult<json::value> r) mutable {
      if (self->stopped)
        return;
      if (!r && kube::isNotFound(r.error()))
        return self->createIfServed(std::move(node), std::move(desired));
      if (!r)
        return self->failed("error", r.error().message);
      self->foundCrd();
      auto current = apis::decodeNodeResourceTopology(*r);
      if (!current)
        return self->failed("invalid", current.error().message);
      const std::string why = nodeTopologyDifference(*current, desired);
      if (why.empty())
        return self->succeeded(std::move(desired), "unchanged");
      KOORD_VLOG(4, "node topology reporter: NodeResourceTopology {}: {}", self->options.node_name,
                 why);
      self->patch(*current, std::move(desired));
    });
  }

  void patch(const apis::NodeResourceTopology& current, NodeTopologyStatus desired) {
    kube::ResourceRef ref = kTopologies;
    ref.name = options.node_name;
    // Built before `desired` moves into the callback.
    json::value body = nodeTopologyPatch(current, desired);
    client.patch(ref, kube::PatchType::kMergePatch, std::move(body),
                 [self = shared_from_this(),
                  desired = std::move(desired)](kube::ApiResult<json::value> r) mutable {
                   if (self->stopped)
                     return;
                   if (!r)
                     return self->failed("error", r.error().message);
                   self->succeeded(std::move(desired), "success");
                 });
  }

  // A 404 is also what a cluster without the CRD answers: ask discovery before creating.
  void createIfServed(NodeInfo node, NodeTopologyStatus desired) {
    kube::discoverResources(
        client, std::string(apis::kTopologyGroup), std::string(apis::kTopologyVersion),
        [self = shared_from_this(), node = std::move(node),
         desired = std::move(desired)](kube::ApiResult<kube::ServedResources> r) mutable {
          if (self->stopped)
            return;
          if (!r)
            return self->failed("error", r.error().message);
          if (r->find(apis::kNodeResourceTopologyResource) == nullptr) {
            if (!self->crd_missing)
              KOORD_LOG_WARNING(
                  "node topology reporter: the API server serves no {}.{}/{} (is the CRD "
                  "installed?); the node's topology is not reported, asking again every {}s",
                  apis::kNodeResourceTopologyResource, apis::kTopologyGroup, apis::kTopologyVersion,
                  std::chrono::duration_cast<seconds>(self->options.crd_retry).count());
            self->crd_missing = true;
            self->applied.reset();
            return self->finish(self->options.crd_retry);
          }
          self->foundCrd();
          self->create(node, std::move(desired));
        });
  }

  void foundCrd() {
    if (crd_missing)
      KOORD_LOG_INFO("node topology reporter: {}.{} is served now",
                     apis::kNodeResourceTopologyResource, apis::kTopologyGroup);
    crd_missing = false;
  }

  void create(const NodeInfo& node, NodeTopologyStatus desired) {
    json::value body = nodeTopologyObject(desired, options.node_name, node.uid);
    client.create(kTopologies, std::move(body),
                  [self = shared_from_this(),
                   desired = std::move(desired)](kube::ApiResult<json::value> r) mutable {
                    if (self->stopped)
                      return;
                    // AlreadyExists: another writer was first; the next round patches it.
                    if (!r)
                      return self->failed("error", r.error().message);
                    KOORD_LOG_INFO("node topology reporter: NodeResourceTopology {} created",
                                   self->options.node_name);
                    self->succeeded(std::move(desired), "success");
                  });
  }
};

NodeTopologyReporter::NodeTopologyReporter(kube::RestClient& client, asio::io_context& io,
                                           std::function<StatesSnapshot()> snapshot,
                                           const cgroup::CpuTopology& topology,
                                           NodeTopologyReporterOptions options,
                                           metrics::Registry& registry)
    : impl_(std::make_shared<Impl>(client, io, std::move(snapshot), topology, std::move(options),
                                   registry)) {}

NodeTopologyReporter::~NodeTopologyReporter() {
  stop();
}

void NodeTopologyReporter::start() {
  asio::post(impl_->io, [impl = impl_] {
    if (!impl->stopped)
      impl->sync();
  });
}

void NodeTopologyReporter::stop() {
  if (impl_->stopped.exchange(true))
    return;
  asio::post(impl_->io, [impl = impl_] { impl->timer.cancel(); });
}

std::function<void()> NodeTopologyReporter::podsChangedHandler() const {
  return [weak = std::weak_ptr<Impl>(impl_)] {
    if (auto impl = weak.lock())
      asio::post(impl->io, [impl] { impl->podsChanged(); });
  };
}

std::shared_ptr<const NodeTopologyStatus> NodeTopologyReporter::reported() const {
  std::lock_guard lock(impl_->mu);
  return impl_->reported;
}

}  // namespace koord::roles::koordlet
