// Everything that keeps the admission webhooks answering on every replica: certificates issued
// and renewed, the TLS server started once they exist, the apiserver's configurations kept
// pointed at us with the current CA, again at once when someone changes or deletes them.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cert_provisioner.h"
#include "webhook_configuration.h"
#include "webhook_server.h"

namespace koord::roles::manager {

struct WebhookRuntimeOptions {
  CertProvisionerConfig certs;
  WebhookConfigurationOptions configurations;
  WebhookServerOptions server;  // cert_file/key_file are filled in from `certs`
  /// How often certificates and configurations are checked again (Koordinator: every minute).
  std::chrono::milliseconds resync{60000};
  /// After a failed pass, before the next try.
  std::chrono::milliseconds retry{5000};
  /// A change to the Secrets or configurations (watched by name) brings the next pass forward,
  /// but never closer than this to the previous pass: our own writes come back as events, and
  /// replicas that render differently (a rollout changing feature gates) must not rewrite each
  /// other's configurations in a tight loop.
  std::chrono::milliseconds min_interval{5000};
};

class WebhookRuntime {
 public:
  /// `handlers` maps each served path to its handler; the configurations list exactly these.
  WebhookRuntime(kube::RestClient& client, boost::asio::io_context& io,
                 WebhookRuntimeOptions options, std::map<std::string, AdmissionHandler> handlers,
                 metrics::Registry& registry);
  /// stop().
  ~WebhookRuntime();
  WebhookRuntime(const WebhookRuntime&) = delete;
  WebhookRuntime& operator=(const WebhookRuntime&) = delete;

  /// Starts the background thread; `on_serving` runs once, when the server listens and the
  /// configurations carry our CA (the replica is then ready for admission traffic).
  void start(std::function<void()> on_serving);
  /// Non-blocking (safe on an io thread): ends the loop and closes the server's acceptor.
  void requestStop();
  /// requestStop() and joins the background thread; not on an io thread.
  void stop();
  /// The bound port once serving, else 0.
  std::uint16_t port() const;

 private:
  void loop(std::function<void()> on_serving);
  bool passOnce(bool& announced, const std::function<void()>& on_serving);
  bool startServerOnIo();
  /// Starts the watches that have not started or have ended (a 410, a 403 where RBAC does not
  /// allow them); the periodic pass covers whatever they miss meanwhile.
  void ensureWatches();

  kube::RestClient& client_;
  boost::asio::io_context& io_;
  WebhookRuntimeOptions options_;
  std::map<std::string, AdmissionHandler> handlers_;
  CertProvisioner provisioner_;
  std::unique_ptr<WebhookServer> server_;
  struct Metrics;
  std::unique_ptr<Metrics> metrics_;

  // Shared with the watches' callbacks, which an io thread may still be running when stop()
  // returns.
  struct Wakeup;
  std::shared_ptr<Wakeup> wakeup_;
  struct Watch;
  std::mutex watch_mu_;
  std::vector<Watch> watches_;  // under watch_mu_

  mutable std::mutex mu_;
  bool stopping_ = false;
  bool serving_ = false;
  std::thread thread_;
};

}  // namespace koord::roles::manager
