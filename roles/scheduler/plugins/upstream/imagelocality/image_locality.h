// ImageLocality (kube-scheduler 1.20, Score only): favours nodes that already hold the pod's
// container images, each image's size scaled by the share of nodes holding it, so that a few
// nodes with a popular image are not piled on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "framework/framework_handle.h"
#include "framework/plugin.h"

namespace koord::roles::scheduler::upstream {

inline constexpr std::string_view kImageLocalityName = "ImageLocality";

/// Upstream's bounds of the score range: a node holding less than 23 MiB of the pod's images
/// (after scaling) scores 0, one holding 1000 MiB per container scores 100.
inline constexpr std::int64_t kImageMinThreshold = std::int64_t{23} * 1024 * 1024;
inline constexpr std::int64_t kImageMaxContainerThreshold = std::int64_t{1000} * 1024 * 1024;

class ImageLocality final : public ScorePlugin {
 public:
  explicit ImageLocality(const FrameworkHandle& handle) : handle_(handle) {}
  std::string_view name() const override { return kImageLocalityName; }
  /// Returns at once, 0, for a pod without containers or a node without images.
  Status score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               std::int64_t& score) const override;
  bool scoresEveryNodeAlike(const PodInfo& pod) const override;

 private:
  const FrameworkHandle& handle_;
};

/// The pod's image name as a node reports it: ":latest" appended when no tag follows the last
/// '/' (a digest reference keeps its form). The node's names are matched as reported.
std::string normalizedImageName(std::string_view name);

/// size_bytes * num_nodes / total_nodes, truncated; 0 without nodes.
std::int64_t scaledImageScore(std::int64_t size_bytes, std::uint32_t num_nodes,
                              std::size_t total_nodes);

/// The node's score in [0, 100] for the summed scaled sizes of a pod with that many containers.
std::int64_t calculatePriority(std::int64_t sum_scores, std::size_t num_containers);

}  // namespace koord::roles::scheduler::upstream
