// koord_test_leader_elector: one leader-election candidate as a real process, so the cluster
// test can kill it (SIGKILL) or stop it (SIGTERM) as a node failure or a rollout would.
//
//   koord_test_leader_elector --identity A --namespace ns --name lease
//                             [--lease-ms 4000 --renew-ms 3000 --retry-ms 1000]
//
// Reads the apiserver, CA and token from the env file in $KOORD_CLUSTER_ENV. Prints
// "LEADING <identity>" and "STOPPED <identity>" lines on stdout (flushed). Exits 0 on
// SIGTERM/SIGINT after releasing the lease, 3 when it loses leadership, 2 on bad arguments.
#include <fmt/format.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <csignal>
#include <ctime>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "koord/kube/leader_election.h"
#include "koord/kube/rest_client.h"

namespace {

int usage(const std::string& why) {
  fmt::print(stderr, "koord_test_leader_elector: {}\n", why);
  return 2;
}

void say(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

std::map<std::string, std::string> readEnvFile(const char* path) {
  std::map<std::string, std::string> env;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (!line.empty() && line[0] != '#' && eq != std::string::npos)
      env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags{{"identity", ""},     {"namespace", ""},
                                           {"name", ""},         {"lease-ms", "4000"},
                                           {"renew-ms", "3000"}, {"retry-ms", "1000"}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0)
      return usage("unexpected argument " + arg);
    arg.erase(0, 2);
    std::string value;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.erase(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return usage("--" + arg + " needs a value");
    }
    if (!flags.contains(arg))
      return usage("unknown flag --" + arg);
    flags[arg] = value;
  }

  const char* env_path = std::getenv("KOORD_CLUSTER_ENV");
  if (env_path == nullptr)
    return usage("KOORD_CLUSTER_ENV is not set");
  auto env = readEnvFile(env_path);
  koord::kube::RestConfig rest;
  rest.host = env["KOORD_APISERVER"];
  rest.ca_file = env["KOORD_CA_FILE"];
  rest.bearer_token = env["KOORD_TOKEN"];
  if (rest.host.empty() || rest.bearer_token.empty())
    return usage(std::string("no apiserver or token in ") + env_path);
  // Renews must not queue behind a low client-side limit; the test measures their timing.
  rest.qps = 50;
  rest.burst = 100;

  koord::kube::LeaderElectionConfig config;
  config.identity = flags["identity"];
  config.lease_namespace = flags["namespace"];
  config.lease_name = flags["name"];
  try {
    config.lease_duration = std::chrono::milliseconds(std::stoll(flags["lease-ms"]));
    config.renew_deadline = std::chrono::milliseconds(std::stoll(flags["renew-ms"]));
    config.retry_period = std::chrono::milliseconds(std::stoll(flags["retry-ms"]));
  } catch (const std::exception&) {
    return usage("--lease-ms, --renew-ms and --retry-ms take integers");
  }
  std::atomic<bool> stopping{false};
  std::atomic<bool> lost{false};
  config.on_started_leading = [&] { say("LEADING " + config.identity); };
  config.on_stopped_leading = [&] {
    say("STOPPED " + config.identity);
    if (!stopping.load())
      lost.store(true);
  };
  config.on_new_leader = [](const std::string& holder) { say("LEADER " + holder); };

  // Signals are taken synchronously on this thread, so every other thread must block them
  // first; this thread is then free to call the blocking stop().
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&io] { io.run(); });
  int code = 0;
  {
    auto client = std::make_unique<koord::kube::RestClient>(io, rest);
    std::unique_ptr<koord::kube::LeaderElector> elector;
    try {
      elector = std::make_unique<koord::kube::LeaderElector>(*client, io, config);
    } catch (const std::invalid_argument& e) {
      code = usage(e.what());
    }
    if (elector) {
      elector->start();
      const timespec tick{0, 50'000'000};
      while (true) {
        if (::sigtimedwait(&signals, nullptr, &tick) > 0) {
          stopping.store(true);
          elector->stop();  // releases the lease, then on_stopped_leading
          break;
        }
        if (lost.load()) {
          code = 3;
          break;
        }
      }
    }
    elector.reset();
    client.reset();
  }
  guard.reset();
  io.stop();
  for (auto& t : threads)
    t.join();
  return code;
}
