// slo-controller-config is a ConfigMap any cluster admin (or a typo) writes; the manager parses
// every key and then merges the per-node strategies. The first byte picks the key, the rest is its
// JSON text; accepted configs are also resolved for a node so the merge code sees them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "koord/apis/extension.h"
#include "koord/apis/slo_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace koord::apis;
  static constexpr std::array<std::string_view, 5> kKeys = {
      "colocation-config", "resource-threshold-config", "resource-qos-config", "cpu-burst-config",
      "system-config"};
  if (size == 0)
    return 0;
  const auto key = kKeys[data[0] % kKeys.size()];
  const std::string_view json(reinterpret_cast<const char*>(data) + 1, size - 1);
  const koord::kube::Labels labels = {{"node-pool", "batch"}, {"kubernetes.io/hostname", "n1"}};
  if (key == kKeys[0]) {
    auto config = parseColocationConfig(json);
    // The same text as a node's colocation-strategy annotation, which any node writer sets.
    const koord::kube::Labels annotations = {
        {std::string(kAnnotationNodeColocationStrategy), std::string(json)}};
    if (config)
      (void)colocationStrategyForNode(*config, labels, annotations);
    return 0;
  }
  auto config = parseNodeStrategyConfig(key, json);
  if (!config)
    return 0;
  (void)checkNodeProfiles("nodeStrategies", config->node_strategies, true);
  (void)strategyForNode(key, *config, labels);
  return 0;
}
