// Everything that keeps the admission webhooks answering on every replica: certificates issued
// and renewed, the TLS server started once they exist, the apiserver's configurations kept
// pointed at us with the current CA.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

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

  kube::RestClient& client_;
  boost::asio::io_context& io_;
  WebhookRuntimeOptions options_;
  std::map<std::string, AdmissionHandler> handlers_;
  CertProvisioner provisioner_;
  std::unique_ptr<WebhookServer> server_;
  struct Metrics;
  std::unique_ptr<Metrics> metrics_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool serving_ = false;
  std::thread thread_;
};

}  // namespace koord::roles::manager
