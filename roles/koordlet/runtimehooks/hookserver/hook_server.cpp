#include "runtimehooks/hookserver/hook_server.h"

#include <fmt/format.h>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "koord/app/role_app.h"
#include "koord/app/unix_socket.h"
#include "koord/core/log.h"
#include "koord/h2/grpc_unary_server.h"
#include "runtimehooks/hookserver/runtime_hook_service.h"

namespace koord::roles::koordlet {

const std::vector<std::string>& koordletHookTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < kHookStageCount; ++i)
      names.emplace_back(hookStageName(static_cast<HookStage>(i)));
    return names;
  }();
  return types;
}

std::string hookRegistration(const HookServerOptions& o) {
  boost::json::array hooks;
  for (const auto& t : koordletHookTypes()) {
    if (std::find(o.disable_stages.begin(), o.disable_stages.end(), t) == o.disable_stages.end())
      hooks.emplace_back(t);
  }
  return boost::json::serialize(boost::json::object{{"remote-endpoint", o.host_endpoint},
                                                    {"failure-policy", o.failure_policy},
                                                    {"runtime-hooks", std::move(hooks)}});
}

HookServer::HookServer(HookServerOptions options) : options_(std::move(options)) {}

HookServer::~HookServer() {
  stop();
}

void HookServer::start() {
  // The socket's directory is the DaemonSet's host mount: without it there is no proxy to
  // serve, and the koordlet does not make directories on the host.
  app::prepareUnixSocketPath(options_.addr, /*create_directory=*/false);
  // koord's own gRPC server, one thread: an answer is computed on the thread that read the
  // request, so a hook costs the proxy one round trip and no hand-offs between threads.
  auto server = std::make_unique<h2::GrpcUnaryServer>();
  static const HookRegistry kNoHooks{};
  addRuntimeHookService(*server, options_.hooks != nullptr ? *options_.hooks : kNoHooks,
                        options_.cgroups);
  try {
    server->start(options_.addr);
  } catch (const std::system_error& e) {
    throw app::ConfigError(
        fmt::format("runtime hooks: cannot serve on {}: {}", options_.addr, e.code().message()));
  }
  server_ = std::move(server);

  // Written to a temp file and renamed, so that the proxy never reads half a registration.
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options_.config_path, ec);
  const fs::path file = fs::path(options_.config_path) / "koordlet.json";
  const fs::path tmp = fs::path(options_.config_path) / ".koordlet.json.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << hookRegistration(options_) << "\n";
    if (!out)
      throw app::ConfigError(fmt::format("runtime hooks: cannot write {}", tmp.string()));
  }
  fs::rename(tmp, file, ec);
  if (ec)
    throw app::ConfigError(
        fmt::format("runtime hooks: cannot write {}: {}", file.string(), ec.message()));
  KOORD_LOG_INFO("runtime hooks: serving on {}, registered in {} as {}", options_.addr,
                 file.string(), options_.host_endpoint);
}

void HookServer::stop() {
  if (!server_)
    return;
  server_->stop();
  server_.reset();
}

}  // namespace koord::roles::koordlet
