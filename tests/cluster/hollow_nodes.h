// Hollow nodes for cluster tests: `cluster.sh hollow-nodes N` (kubemark's hollow kubelets, whose
// pods run in a fake runtime) brought up for a test, waited for until Ready, and stopped after it.
#pragma once

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "resources.h"
#include "subprocess.h"

namespace koord::testing {

/// What `cluster.sh hollow-nodes` starts: nodes hollow-node-1..count, each with this capacity
/// (allocatable the same: kubemark reserves nothing; ephemeral-storage is 0).
struct HollowNodeOptions {
  int count = 3;
  int cpu = 4;  // whole cores only: kubemark's fake cAdvisor counts cores
  std::string memory = "16Gi";
  int pods = 110;
  /// Labels besides koord.test/hollow-node=true, which every hollow node carries.
  std::map<std::string, std::string> labels;
  /// Leave the nodes running after the test (cluster.sh down stops them), so the next test that
  /// asks for the same ones finds them up.
  bool keep = false;
  /// For cluster.sh (a first kubemark build included) and again for the Nodes to read Ready.
  std::chrono::seconds timeout{900};
};

/// The Node's Ready condition is True.
inline bool nodeIsReady(const boost::json::value& node) {
  const auto* status = node.as_object().if_contains("status");
  const auto* conditions = status != nullptr && status->is_object()
                               ? status->as_object().if_contains("conditions")
                               : nullptr;
  if (conditions == nullptr || !conditions->is_array())
    return false;
  for (const auto& c : conditions->as_array()) {
    if (str(c, {"type"}) == "Ready")
      return str(c, {"status"}) == "True";
  }
  return false;
}

/// `count` hollow nodes for the life of this object. The constructor runs `cluster.sh
/// hollow-nodes count` ($KOORD_CLUSTER_SH) and returns once every Node reads Ready through the
/// API; the destructor runs `cluster.sh hollow-nodes 0` unless `keep`. Make it before any client
/// of the test: the daemons cluster.sh starts inherit the test's open descriptors.
class HollowNodes {
 public:
  explicit HollowNodes(HollowNodeOptions options = {}) : options_(std::move(options)) {
    for (int i = 1; i <= options_.count; ++i)
      names_.push_back("hollow-node-" + std::to_string(i));
    auto env = readClusterEnv();
    cluster_dir_ = needEnv(env, "KOORD_CLUSTER_DIR");
    auto started = clusterSh(options_.count);
    INFO("cluster.sh hollow-nodes " << options_.count << ":\n" << started.err);
    REQUIRE(started.exit_code == 0);
    try {
      KubeApi api(tokenConfig());
      for (const auto& name : names_) {
        INFO("hollow node " << name);
        REQUIRE(eventually(options_.timeout, [&] {
          auto node = api->getSync(named(kNodes, name));
          return node && nodeIsReady(*node);
        }));
      }
    } catch (...) {
      showLogs();
      stop();
      throw;
    }
  }

  ~HollowNodes() {
    if (std::uncaught_exceptions() > 0)
      showLogs();
    if (!options_.keep)
      stop();
  }
  HollowNodes(const HollowNodes&) = delete;
  HollowNodes& operator=(const HollowNodes&) = delete;

  /// hollow-node-1..count.
  const std::vector<std::string>& names() const { return names_; }
  /// The run dir: the nodes' logs are <dir>/hollow-node-<i>.log, their state <dir>/hollow/.
  const std::string& clusterDir() const { return cluster_dir_; }

  /// Stops every hollow node now (their pods and Nodes are deleted); the destructor then has
  /// nothing left to do. Errors are reported, not thrown: it runs in destructors.
  void stop() {
    if (stopped_)
      return;
    stopped_ = true;
    auto r = clusterSh(0);
    if (r.exit_code != 0)
      std::cerr << "cluster.sh hollow-nodes 0 failed:\n" << r.err << "\n";
  }

 private:
  ProcessResult clusterSh(int count) const {
    const char* sh = std::getenv("KOORD_CLUSTER_SH");
    if (sh == nullptr || *sh == '\0')
      throw std::runtime_error("KOORD_CLUSTER_SH is not set (CTest sets it)");
    std::string labels;
    for (const auto& [k, v] : options_.labels)
      labels += (labels.empty() ? "" : ",") + k + "=" + v;
    return run({sh, "hollow-nodes", std::to_string(count)},
               {{"KOORD_CLUSTER_DIR", cluster_dir_},
                {"KOORD_HOLLOW_CPU", std::to_string(options_.cpu)},
                {"KOORD_HOLLOW_MEMORY", options_.memory},
                {"KOORD_HOLLOW_PODS", std::to_string(options_.pods)},
                {"KOORD_HOLLOW_LABELS", labels}},
               options_.timeout);
  }

  // The last lines of each hollow kubelet's log, for a failed test.
  void showLogs() const {
    constexpr std::size_t kTail = 8 * 1024;
    for (const auto& name : names_) {
      std::ifstream in(cluster_dir_ + "/" + name + ".log");
      std::string log(std::istreambuf_iterator<char>(in), {});
      if (log.size() > kTail)
        log = "...\n" + log.substr(log.size() - kTail);
      std::cerr << "---- " << name << ".log ----\n" << log << "\n";
    }
  }

  HollowNodeOptions options_;
  std::vector<std::string> names_;
  std::string cluster_dir_;
  bool stopped_ = false;
};

}  // namespace koord::testing
