#include "snapshot/api_connection.h"

#include <fmt/format.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>

#include "koord/kube/kubeconfig.h"

namespace koord::roles::cli {
namespace {

// kubectl's order for a named context: the flag, the first file of $KUBECONFIG (kubectl merges
// them all; the first holding the context is what matters in practice), then ~/.kube/config.
std::string kubeconfigPath(const std::string& flag) {
  if (!flag.empty())
    return flag;
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string_view list(env);
    return std::string(list.substr(0, list.find(':')));
  }
  if (const char* home = std::getenv("HOME"); home && *home)
    return (std::filesystem::path(home) / ".kube" / "config").string();
  return "";
}

kube::RestConfig loadConfig(const std::string& kubeconfig, const std::string& context) {
  kube::Expected<kube::RestConfig> config =
      context.empty() ? kube::resolveConfig(kubeconfig)
                      : kube::loadKubeconfig(kubeconfigPath(kubeconfig), context);
  if (!config) {
    throw std::runtime_error(
        context.empty() ? fmt::format("no API server: {}", config.error().message)
                        : fmt::format("context {:?}: {}", context, config.error().message));
  }
  // kubectl's limits, not a controller's: an operator's one-off lists should not crawl.
  config->qps = 50;
  config->burst = 100;
  config->user_agent = "kubectl-koord";
  return std::move(*config);
}

}  // namespace

struct ApiConnection::Impl {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{io.get_executor()};
  std::optional<kube::RestClient> client;
  std::string default_namespace;
  std::thread thread;
};

ApiConnection::ApiConnection(const std::string& kubeconfig, const std::string& context)
    : impl_(std::make_unique<Impl>()) {
  kube::RestConfig config = loadConfig(kubeconfig, context);
  impl_->default_namespace =
      config.default_namespace.empty() ? "default" : config.default_namespace;
  impl_->client.emplace(impl_->io, std::move(config));
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
}

ApiConnection::~ApiConnection() {
  impl_->client.reset();
  impl_->work.reset();
  impl_->io.stop();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

kube::RestClient& ApiConnection::client() {
  return *impl_->client;
}

const std::string& ApiConnection::defaultNamespace() const {
  return impl_->default_namespace;
}

}  // namespace koord::roles::cli
