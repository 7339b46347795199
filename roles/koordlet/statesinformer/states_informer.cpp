#include "statesinformer/states_informer.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <atomic>
#include <mutex>

#include <fmt/format.h>

#include "koord/core/log.h"
#include "koord/http/client.h"
#include "koord/kube/informer.h"
#include "koord/kube/json_limits.h"
#include "koord/kube/rest_client.h"
#include "statesinformer/kubelet_stub.h"

namespace koord::roles::koordlet {

namespace json = boost::json;
namespace asio = boost::asio;

namespace {

kube::ResourceRef nodesRef() {
  return {"", "v1", "nodes", "", "", ""};
}
kube::ResourceRef nodeSLOsRef() {
  return {"slo.koordinator.sh", "v1alpha1", "nodeslos", "", "", ""};
}
kube::ResourceRef nodeMetricsRef() {
  return {"slo.koordinator.sh", "v1alpha1", "nodemetrics", "", "", ""};
}

kube::ReflectorOptions byName(const std::string& name) {
  kube::ReflectorOptions o;
  o.field_selector = "metadata.name=" + name;
  return o;
}

// What decides whether the collectors and hooks must look again: pods and their containers.
std::string podSetSignature(const std::vector<PodMeta>& pods) {
  std::string sig;
  for (const auto& p : pods) {
    sig += p.uid;
    sig += static_cast<char>('0' + static_cast<int>(p.phase));
    for (const auto& c : p.containers)
      sig += c.id;
    sig += ';';
  }
  return sig;
}

}  // namespace

struct StatesInformer::Impl : std::enable_shared_from_this<Impl> {
  Impl(kube::RestClient& c, asio::io_context& i, StatesInformerOptions o)
      : client(c),
        io(i),
        options(std::move(o)),
        nodes(c, i, nodesRef(), decodeNodeInfo, byName(options.node_name)),
        node_slos(c, i, nodeSLOsRef(), decodeNodeSLOInfo, byName(options.node_name)),
        node_metrics(c, i, nodeMetricsRef(), apis::decodeNodeMetric, byName(options.node_name)),
        timer(i) {}

  // The client for the kubelet, made at the first sync: the name its certificate must carry
  // comes from the Node, and a CA file the kubelet has not written yet is tried again on the
  // next sync instead of failing the koordlet. Null when the last attempt failed.
  http::Client* kubeletClient(const NodeInfo& node, std::string& why) {
    if (options.kubelet_insecure_tls) {
      if (kubelet == nullptr) {
        http::ClientOptions co;
        co.request_timeout = options.kubelet_sync_timeout;
        co.connect_timeout = options.kubelet_sync_timeout;
        co.max_idle_per_host = 1;
        co.user_agent = "koordlet";
        kubelet = std::make_unique<http::Client>(io, co);
      }
      return kubelet.get();
    }
    auto name = kubeletServerName(options.kubelet_tls, node);
    if (kubelet != nullptr && name == kubelet_server_name && !reload_kubelet_ca)
      return kubelet.get();
    reload_kubelet_ca = false;
    if (kubelet != nullptr)
      kubelet->closeIdleConnections();
    kubelet.reset();
    try {
      kubelet = std::make_unique<http::Client>(
          io, kubeletClientOptions(options.kubelet_tls, client.config(), name,
                                   options.kubelet_sync_timeout));
    } catch (const std::runtime_error& e) {
      why = e.what();
      return nullptr;
    }
    kubelet_server_name = std::move(name);
    return kubelet.get();
  }

  kube::RestClient& client;
  asio::io_context& io;
  StatesInformerOptions options;
  kube::Informer<NodeInfo> nodes;
  kube::Informer<NodeSLOInfo> node_slos;
  kube::Informer<apis::NodeMetric> node_metrics;
  asio::steady_timer timer;
  std::unique_ptr<http::Client> kubelet;
  std::string kubelet_server_name;
  // Set when the kubelet's certificate failed verification: the CA file is read again at the
  // next sync, so a kubelet certificate renewed with its CA (tlsCertFile) is followed.
  bool reload_kubelet_ca = false;

  mutable std::mutex mu;
  std::shared_ptr<const KubeletConfig> kubelet_config;
  std::chrono::steady_clock::time_point kubelet_config_read{};
  bool configz_in_flight = false;
  bool configz_failing = false;
  std::shared_ptr<const std::vector<PodMeta>> pods;
  PodSource source = PodSource::kNone;
  std::chrono::steady_clock::time_point pods_updated{};
  std::string signature;
  std::vector<std::function<void()>> on_changed;
  std::atomic<bool> stopped{false};
  bool sync_in_flight = false;
  bool kubelet_failing = false;

  template <typename T>
  std::shared_ptr<const T> single(const kube::Informer<T>& inf) const {
    auto all = inf.store().list();
    return all.empty() ? nullptr : all.front();
  }

  void scheduleSync(std::chrono::milliseconds after) {
    timer.expires_after(after);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec && !self->stopped)
        self->syncPods();
    });
  }

  void syncPods() {
    if (sync_in_flight || stopped)
      return;
    auto node = single(nodes);
    if (node == nullptr) {
      // The kubelet's address comes from the Node: wait for it.
      scheduleSync(std::chrono::milliseconds(500));
      return;
    }
    sync_in_flight = true;
    auto address = kubeletAddress(*node, options.kubelet_preferred_address_type);
    if (address.empty()) {
      kubeletFailed("the Node lists no address", "");
      return;
    }
    if (address.find(':') != std::string::npos)
      address = "[" + address + "]";
    std::string url;
    if (options.kubelet_insecure_tls) {
      url = fmt::format("http://{}:{}/pods/", address, options.kubelet_read_only_port);
    } else {
      url = fmt::format("https://{}:{}/pods/", address,
                        node->kubelet_port > 0 ? node->kubelet_port : 10250);
    }
    std::string why;
    http::Client* kc = kubeletClient(*node, why);
    if (kc == nullptr) {
      kubeletFailed(why, url);
      return;
    }
    http::ClientRequest req;
    req.url = url;
    req.timeout = options.kubelet_sync_timeout;
    if (!options.kubelet_insecure_tls) {
      if (auto auth = authorize(req); !auth) {
        kubeletFailed(auth.error().message, url);
        return;
      }
    }
    kc->send(std::move(req), [self = shared_from_this(), url](Result<http::Response> r) {
      if (self->stopped)
        return;
      std::string why;
      if (!r) {
        why = r.error().message();
        if (r.error() == makeError(Errc::kTlsVerifyFailed))
          self->reload_kubelet_ca = true;
      } else if (r->status != 200) {
        why = fmt::format("HTTP {}", r->status);
      } else {
        if (auto list = decodePodListText(r->body); !list) {
          why = "body is not a pod list: " + list.error().message;
        } else {
          if (self->kubelet_failing)
            KOORD_LOG_INFO("states informer: pods from the kubelet at {} again", url);
          self->kubelet_failing = false;
          self->publish(std::move(*list), PodSource::kKubelet);
          self->readConfigzIfDue(url);
          return;
        }
      }
      self->kubeletFailed(why, url);
    });
  }

  // The API server credentials' token, re-read from its file as the RestClient's verbs do
  // (projected service-account tokens rotate); the kubelet's webhook authenticator checks it.
  kube::Expected<void> authorize(http::ClientRequest& req) {
    auto prepared = client.prepareRequest("GET", "/");
    if (!prepared)
      return kube::makeKubeError(prepared.error().message);
    for (auto& [k, v] : prepared->headers) {
      if (k == "Authorization")
        req.headers.emplace_back(k, std::move(v));
    }
    return {};
  }

  bool queriesConfigz() const {
    return options.query_kubelet_config && !options.kubelet_insecure_tls;
  }

  // The kubelet's /configz on the client that just served /pods (the same credentials: the
  // kubelet authorizes it as nodes/proxy), at the first pod sync and then every
  // kubelet_config_interval. A failure keeps what was read before.
  void readConfigzIfDue(const std::string& pods_url) {
    if (!queriesConfigz() || configz_in_flight || kubelet == nullptr)
      return;
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mu);
      if (kubelet_config != nullptr && now - kubelet_config_read < options.kubelet_config_interval)
        return;
    }
    std::string url = pods_url;
    url.replace(url.rfind("/pods/"), std::string::npos, "/configz");
    http::ClientRequest req;
    req.url = url;
    req.timeout = options.kubelet_sync_timeout;
    if (auto auth = authorize(req); !auth)
      return configzFailed(url, auth.error().message);
    configz_in_flight = true;
    kubelet->send(std::move(req), [self = shared_from_this(), url](Result<http::Response> r) {
      self->configz_in_flight = false;
      if (self->stopped)
        return;
      if (!r)
        return self->configzFailed(url, r.error().message());
      if (r->status != 200)
        return self->configzFailed(url, fmt::format("HTTP {}", r->status));
      auto config = parseKubeletConfigz(r->body);
      if (!config)
        return self->configzFailed(url, config.error().message);
      if (self->configz_failing || self->kubelet_config == nullptr)
        KOORD_LOG_INFO("states informer: kubelet {}: cpuManagerPolicy {}, topologyManagerPolicy {}",
                       url, config->cpu_manager_policy, config->topology_manager_policy);
      self->configz_failing = false;
      std::lock_guard lock(self->mu);
      self->kubelet_config_read = std::chrono::steady_clock::now();
      if (self->kubelet_config == nullptr || *self->kubelet_config != *config)
        self->kubelet_config = std::make_shared<const KubeletConfig>(std::move(*config));
    });
  }

  void configzFailed(const std::string& url, const std::string& why) {
    if (!configz_failing)
      KOORD_LOG_WARNING(
          "states informer: kubelet {}: {}; the NodeResourceTopology waits for it (set "
          "-disable-query-kubelet-config to report without the kubelet's CPU manager)",
          url, why);
    configz_failing = true;
  }

  // Once per failure streak: the kubelet's pods are the better source (fresher, and the
  // containers' IDs), so say why the API server stands in.
  void kubeletFailed(const std::string& why, const std::string& url) {
    if (!kubelet_failing) {
      KOORD_LOG_WARNING("states informer: kubelet {}: {}; listing pods from the API server",
                        url.empty() ? "-" : url, why);
    }
    kubelet_failing = true;
    listFromApiServer();
  }

  void listFromApiServer() {
    kube::ListOptions lo;
    lo.field_selector = "spec.nodeName=" + options.node_name;
    // Decoded item by item as it streams in: the list never exists whole as JSON.
    auto list = std::make_shared<PodListResult>();
    client.listEach(
        {"", "v1", "pods", "", "", ""}, lo,
        [list](const json::value& item) {
          addPodListItem(*list, list->pods.size() + list->errors.size(), item);
          return true;
        },
        [self = shared_from_this(), list](kube::ApiResult<json::value> r) {
          if (self->stopped)
            return;
          if (!r) {
            // Neither source answered: keep the last good list (never act on a guess) and
            // say so once per failure streak.
            KOORD_LOG_WARNING("states informer: listing pods from the API server: {}",
                              r.error().message);
            self->finishSync();
            return;
          }
          self->publish(std::move(*list), PodSource::kApiServer);
        });
  }

  void publish(PodListResult list, PodSource from) {
    for (const auto& e : list.errors)
      KOORD_LOG_WARNING("states informer: pod skipped: {}", e);
    auto sig = podSetSignature(list.pods);
    bool changed;
    std::vector<std::function<void()>> callbacks;
    {
      std::lock_guard lock(mu);
      changed = sig != signature || pods == nullptr;
      signature = std::move(sig);
      pods = std::make_shared<const std::vector<PodMeta>>(std::move(list.pods));
      source = from;
      pods_updated = std::chrono::steady_clock::now();
      if (changed)
        callbacks = on_changed;
    }
    for (auto& cb : callbacks)
      cb();
    finishSync();
  }

  void finishSync() {
    sync_in_flight = false;
    scheduleSync(options.kubelet_sync_interval);
  }
};

StatesInformer::StatesInformer(kube::RestClient& client, asio::io_context& io,
                               StatesInformerOptions options)
    : impl_(std::make_shared<Impl>(client, io, std::move(options))) {}

StatesInformer::~StatesInformer() {
  stop();
}

void StatesInformer::start() {
  impl_->nodes.start();
  impl_->node_slos.start();
  impl_->node_metrics.start();
  asio::post(impl_->io, [impl = impl_] { impl->syncPods(); });
}

void StatesInformer::stop() {
  if (impl_->stopped.exchange(true))
    return;
  impl_->nodes.stop();
  impl_->node_slos.stop();
  impl_->node_metrics.stop();
  // An idle keep-alive connection to the kubelet would hold the io_context until its deadline.
  // On the io thread: syncPods replaces the client there.
  asio::post(impl_->io, [impl = impl_] {
    impl->timer.cancel();
    if (impl->kubelet != nullptr)
      impl->kubelet->closeIdleConnections();
  });
}

bool StatesInformer::hasSynced() const {
  std::lock_guard lock(impl_->mu);
  return impl_->pods != nullptr && impl_->nodes.hasSynced() && impl_->nodes.store().size() > 0;
}

std::shared_ptr<const NodeInfo> StatesInformer::node() const {
  return impl_->single(impl_->nodes);
}
std::shared_ptr<const NodeSLOInfo> StatesInformer::nodeSLO() const {
  return impl_->single(impl_->node_slos);
}
std::shared_ptr<const apis::NodeMetric> StatesInformer::nodeMetric() const {
  return impl_->single(impl_->node_metrics);
}

std::shared_ptr<const std::vector<PodMeta>> StatesInformer::pods() const {
  std::lock_guard lock(impl_->mu);
  return impl_->pods;
}

StatesSnapshot StatesInformer::snapshot() const {
  StatesSnapshot s;
  s.node = node();
  s.node_slo = nodeSLO();
  s.node_metric = nodeMetric();
  s.pods = pods();
  s.synced = hasSynced();
  s.kubelet_config = kubeletConfig();
  s.kubelet_config_queried = impl_->queriesConfigz();
  return s;
}

std::shared_ptr<const KubeletConfig> StatesInformer::kubeletConfig() const {
  std::lock_guard lock(impl_->mu);
  return impl_->kubelet_config;
}

PodSource StatesInformer::podSource() const {
  std::lock_guard lock(impl_->mu);
  return impl_->source;
}

std::chrono::steady_clock::time_point StatesInformer::podsUpdated() const {
  std::lock_guard lock(impl_->mu);
  return impl_->pods_updated;
}

void StatesInformer::onPodsChanged(std::function<void()> fn) {
  std::lock_guard lock(impl_->mu);
  impl_->on_changed.push_back(std::move(fn));
}

void StatesInformer::syncPodsSoon() {
  asio::post(impl_->io, [impl = impl_] {
    if (!impl->sync_in_flight && !impl->stopped) {
      impl->timer.cancel();
      impl->syncPods();
    }
  });
}

}  // namespace koord::roles::koordlet
