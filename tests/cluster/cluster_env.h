// What the cluster tests know about the running test cluster: the env file cluster.sh writes
// (path in $KOORD_CLUSTER_ENV) and a RestConfig for its admin token.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "koord/kube/kubeconfig.h"

namespace koord::testing {

/// KEY=value lines, as cluster.sh writes them. Fails the test when the file is not there.
inline std::map<std::string, std::string> readClusterEnv() {
  const char* path = std::getenv("KOORD_CLUSTER_ENV");
  if (path == nullptr || *path == '\0')
    FAIL("KOORD_CLUSTER_ENV is not set; run these tests through ctest -L cluster");
  std::ifstream in(path);
  if (!in)
    FAIL("cannot read the cluster env file " << path << "; did cluster/up run?");
  std::map<std::string, std::string> env;
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos)
      continue;
    env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

/// A value the env file must carry; fails the test naming the key otherwise.
inline std::string needEnv(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  if (it == env.end() || it->second.empty())
    FAIL("the cluster env file has no " << key);
  return it->second;
}

/// The apiserver with its CA and admin token; limits high enough not to slow the tests.
inline kube::RestConfig tokenConfig() {
  auto env = readClusterEnv();
  kube::RestConfig c;
  c.host = needEnv(env, "KOORD_APISERVER");
  c.ca_file = needEnv(env, "KOORD_CA_FILE");
  c.bearer_token = needEnv(env, "KOORD_TOKEN");
  c.qps = 50;
  c.burst = 100;
  return c;
}

}  // namespace koord::testing
