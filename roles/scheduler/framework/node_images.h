// The images a node reports (status.images) with their names interned once per process, and the
// per-name node counts that ImageLocality's spread factor reads through the snapshot.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace koord::roles::scheduler {

/// An interned image name: a small number shared by every node reporting that name.
using ImageNameId = std::uint32_t;

/// Bounds the distinct image names alive at once (the names of every node the process holds).
/// A name past it is left out of its node, logged once: ImageLocality then counts the node as
/// not having it.
inline constexpr std::size_t kMaxImageNameIds = std::size_t{1} << 20;

/// The hash NodeImages orders its names by; a pod's names are looked up with the same.
std::uint32_t imageNameHash(std::string_view name);

/// The text of an interned name. Safe from any thread without a lock while a NodeImages holding
/// the id is alive (Score reads the names of the snapshot's nodes).
std::string_view imageName(ImageNameId id);

/// Distinct names interned now (for tests and memory accounting).
std::size_t internedImageNames();

/// One entry of node.status.images as reported: the names it is known by (tags and digests)
/// and its size.
struct ContainerImage {
  std::vector<std::string> names;
  std::int64_t size_bytes = 0;
};

/// A node's images, names interned: each distinct name once (12 bytes) plus each image's size,
/// where plain strings would cost a hundred bytes or more per name on every node. Copies share
/// the names (reference-counted in the table, which frees a name with its last holder).
class NodeImages {
 public:
  struct Name {
    std::uint32_t hash = 0;  // imageNameHash of the text
    ImageNameId id = 0;
    std::uint32_t image = 0;  // which reported image (its size); the first that lists the name
  };

  NodeImages() = default;
  /// Interns the names of `images`; `node` names the owner in the log line a full table gives.
  explicit NodeImages(const std::vector<ContainerImage>& images, std::string_view node = {});
  NodeImages(const NodeImages& other);
  NodeImages(NodeImages&& other) noexcept;
  NodeImages& operator=(const NodeImages& other);
  NodeImages& operator=(NodeImages&& other) noexcept;
  ~NodeImages();

  bool empty() const { return names_.empty(); }
  /// How many images the node reported.
  std::size_t imageCount() const { return sizes_.size(); }
  /// Each distinct name once, ordered by (hash, id).
  std::span<const Name> names() const { return names_; }
  std::int64_t sizeBytes(const Name& n) const { return sizes_[n.image]; }
  /// The entry of exactly `name`, whose imageNameHash is `hash`; null when the node lacks it.
  const Name* find(std::string_view name, std::uint32_t hash) const;
  const Name* find(std::string_view name) const { return find(name, imageNameHash(name)); }
  /// Whether both hold the same set of names (sizes aside): what the node counts depend on.
  bool sameNames(const NodeImages& other) const;

 private:
  void release() noexcept;

  std::vector<Name> names_;
  std::vector<std::int64_t> sizes_;
};

/// How many nodes report each image name, by id. The scheduler cache keeps one up to date as
/// nodes come, change and go, and hands each snapshot an immutable copy: copy-on-write in
/// chunks, so a copy costs the chunks changed since the last one, and reads take no lock.
class ImageNodeCounts {
 public:
  std::uint32_t count(ImageNameId id) const {
    const std::size_t c = id >> kChunkBits;
    if (c >= chunks_.size() || chunks_[c] == nullptr)
      return 0;
    return (*chunks_[c])[id & (kChunkSize - 1)];
  }
  /// Names that at least one node reports.
  std::size_t countedNames() const { return counted_names_; }
  /// Counts (delta +1) or uncounts (-1) one node's names; a count never goes below zero.
  void add(const NodeImages& images, int delta);
  /// An immutable copy for a snapshot; this one copies a chunk before it next changes it.
  std::shared_ptr<const ImageNodeCounts> publish();

 private:
  static constexpr std::size_t kChunkBits = 10;
  static constexpr std::size_t kChunkSize = std::size_t{1} << kChunkBits;
  using Chunk = std::array<std::uint32_t, kChunkSize>;

  std::vector<std::shared_ptr<Chunk>> chunks_;
  std::size_t counted_names_ = 0;
  /// Whether chunks_[i] is this object's alone (not in a published copy).
  std::vector<bool> owned_;
};

}  // namespace koord::roles::scheduler
