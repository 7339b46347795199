// Pods for the cluster tests that run on the real node (kubelet + containerd): the manifest of a
// pod pinned to the node with the local image, and whether it runs yet.
#pragma once

#include <boost/json.hpp>

#include <fstream>
#include <string>

#include "cluster_api.h"
#include "cluster_env.h"

namespace koord::testing {

/// A pod on `node` running `script` under sh: host network (the node's CNI is loopback only) and
/// the local image, never pulled.
inline boost::json::object nodePod(const std::string& name, const std::string& ns,
                                   const std::string& node, const std::string& script,
                                   boost::json::object labels, boost::json::object requests,
                                   boost::json::object limits,
                                   const std::string& priority_class = "") {
  namespace json = boost::json;
  auto env = readClusterEnv();
  json::object spec{
      {"nodeName", node},
      {"hostNetwork", true},
      {"terminationGracePeriodSeconds", 1},
      {"containers",
       json::array{json::object{{"name", "main"},
                                {"image", needEnv(env, "KOORD_TEST_IMAGE")},
                                {"imagePullPolicy", "Never"},
                                {"command", json::array{"sh", "-c", script}},
                                {"resources", json::object{{"requests", std::move(requests)},
                                                           {"limits", std::move(limits)}}}}}}};
  if (!priority_class.empty())
    spec["priorityClassName"] = priority_class;
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec", std::move(spec)}};
}

inline bool podRunning(kube::RestClient& api, const std::string& ns, const std::string& name) {
  auto p = api.getSync(named(resources::kPods, name, ns));
  return p && str(*p, {"status", "phase"}) == "Running";
}

/// The first line of a file; "" when it cannot be read.
inline std::string firstLineOf(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace koord::testing
