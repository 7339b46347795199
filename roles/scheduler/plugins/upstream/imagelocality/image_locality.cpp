#include "plugins/upstream/imagelocality/image_locality.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "framework/node_images.h"
#include "framework/snapshot.h"

namespace koord::roles::scheduler::upstream {
namespace {

constexpr std::string_view kDefaultTag = ":latest";
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Go's strings.LastIndex(name, ":") <= strings.LastIndex(name, "/"), with -1 for "absent".
bool needsTag(std::string_view name) {
  const std::size_t colon = name.rfind(':');
  const std::size_t slash = name.rfind('/');
  return colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash);
}

// Sizes are non-negative (decodeNode refuses others); a bogus huge one saturates the sum, which
// the clamp to the maximum threshold then absorbs.
std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) {
  if (b > 0 && a > kInt64Max - b)
    return kInt64Max;
  return a + b;
}

}  // namespace

std::string normalizedImageName(std::string_view name) {
  std::string out(name);
  if (needsTag(name))
    out.append(kDefaultTag);
  return out;
}

std::int64_t scaledImageScore(std::int64_t size_bytes, std::uint32_t num_nodes,
                              std::size_t total_nodes) {
  if (total_nodes == 0)
    return 0;
  const double spread = static_cast<double>(num_nodes) / static_cast<double>(total_nodes);
  const double scaled = static_cast<double>(size_bytes) * spread;
  // 2^63 and above does not fit (Go wraps there; only a bogus report gets that far).
  if (scaled >= 9223372036854775808.0)
    return kInt64Max;
  return static_cast<std::int64_t>(scaled);
}

std::int64_t calculatePriority(std::int64_t sum_scores, std::size_t num_containers) {
  // No pod comes near this many containers (the API's object size limit), and it keeps the
  // arithmetic below within int64.
  constexpr std::size_t kMaxContainers = std::size_t{1} << 16;
  const std::int64_t max_threshold =
      kImageMaxContainerThreshold *
      static_cast<std::int64_t>(std::min(num_containers, kMaxContainers));
  if (sum_scores < kImageMinThreshold)
    sum_scores = kImageMinThreshold;
  else if (sum_scores > max_threshold)
    sum_scores = max_threshold;
  return kMaxNodeScore * (sum_scores - kImageMinThreshold) / (max_threshold - kImageMinThreshold);
}

bool ImageLocality::scoresEveryNodeAlike(const PodInfo& pod) const {
  // Both leave every node's sum at zero, under the minimum threshold.
  return pod.container_images.empty() || !handle_.snapshot().anyNodeImages();
}

Status ImageLocality::score(const CycleState& /*state*/, const PodInfo& pod, const NodeInfo& node,
                            std::int64_t& score) const {
  score = 0;
  // The formula gives 0 for both (the sum stays under the minimum threshold).
  if (pod.container_images.empty() || node.node == nullptr || node.node->images.empty())
    return Status::success();
  const NodeImages& images = node.node->images;
  const Snapshot& snapshot = handle_.snapshot();
  const std::size_t total_nodes = snapshot.size();

  // The normalised name of an ordinary image is built here, not on the heap.
  std::array<char, 512> buffer;
  std::string long_name;
  std::int64_t sum = 0;
  // Every container counts, as upstream's: two containers of one image count it twice.
  for (const std::string& image : pod.container_images) {
    std::string_view name = image;
    if (needsTag(image)) {
      const std::size_t n = image.size() + kDefaultTag.size();
      if (n <= buffer.size()) {
        std::memcpy(buffer.data(), image.data(), image.size());
        std::memcpy(buffer.data() + image.size(), kDefaultTag.data(), kDefaultTag.size());
        name = std::string_view(buffer.data(), n);
      } else {
        long_name.assign(image).append(kDefaultTag);
        name = long_name;
      }
    }
    const NodeImages::Name* found = images.find(name, imageNameHash(name));
    if (found == nullptr)
      continue;
    sum = saturatingAdd(sum, scaledImageScore(images.sizeBytes(*found),
                                              snapshot.imageNodeCount(found->id), total_nodes));
  }
  score = calculatePriority(sum, pod.container_images.size());
  return Status::success();
}

}  // namespace koord::roles::scheduler::upstream
