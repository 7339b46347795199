#include "node_images.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "koord/core/log.h"

namespace koord::roles::scheduler {
namespace {

constexpr ImageNameId kNoId = ~ImageNameId{0};

// What a node pays per name, against a hundred bytes and more for each name as a string.
static_assert(sizeof(NodeImages::Name) == 12);

// Entries live in chunks reached through a fixed array of pointers, so a reader finds a name
// by id with one acquire load and no lock while writers add chunks for other ids.
constexpr std::size_t kEntryChunkBits = 8;
constexpr std::size_t kEntryChunkSize = std::size_t{1} << kEntryChunkBits;
constexpr std::size_t kMaxEntryChunks = kMaxImageNameIds / kEntryChunkSize;

struct Entry {
  std::string name;
  std::uint32_t refs = 0;
};
using EntryChunk = std::array<Entry, kEntryChunkSize>;

// The process's image names, each with the number of NodeImages holding it; a name goes with
// its last holder and its id is handed out again. Writers hold mu.
class NameTable {
 public:
  std::mutex mu;
  bool warned_full = false;

  ImageNameId acquireLocked(std::string_view name) {
    if (auto it = index_.find(name); it != index_.end()) {
      ++entry(it->second).refs;
      return it->second;
    }
    ImageNameId id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else if (next_ < kMaxImageNameIds) {
      id = static_cast<ImageNameId>(next_++);
      auto& chunk = chunks_[id >> kEntryChunkBits];
      if (chunk.load(std::memory_order_relaxed) == nullptr)
        chunk.store(new EntryChunk, std::memory_order_release);
    } else {
      return kNoId;
    }
    Entry& e = entry(id);
    e.name.assign(name);
    e.refs = 1;
    index_.emplace(e.name, id);
    ++live_;
    return id;
  }

  void retainLocked(ImageNameId id) { ++entry(id).refs; }

  void releaseLocked(ImageNameId id) {
    Entry& e = entry(id);
    if (--e.refs != 0)
      return;
    index_.erase(std::string_view(e.name));
    std::string().swap(e.name);  // a long name's buffer goes too
    free_.push_back(id);
    --live_;
  }

  std::string_view name(ImageNameId id) const {
    return (*chunks_[id >> kEntryChunkBits].load(
        std::memory_order_acquire))[id & (kEntryChunkSize - 1)]
        .name;
  }

  std::size_t liveLocked() const { return live_; }

 private:
  Entry& entry(ImageNameId id) {
    return (*chunks_[id >> kEntryChunkBits].load(
        std::memory_order_relaxed))[id & (kEntryChunkSize - 1)];
  }

  std::array<std::atomic<EntryChunk*>, kMaxEntryChunks> chunks_{};
  std::unordered_map<std::string_view, ImageNameId> index_;  // keys view the entries' names
  std::vector<ImageNameId> free_;
  std::size_t next_ = 0;
  std::size_t live_ = 0;
};

// Never destroyed: a NodeImages in some other static may outlive any destruction order.
NameTable& table() {
  static NameTable* t = new NameTable;
  return *t;
}

}  // namespace

std::uint32_t imageNameHash(std::string_view name) {
  // 32 bits keep a node's entry at 12 bytes; equal hashes are told apart by the text.
  const std::uint64_t h = std::hash<std::string_view>{}(name);
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

std::string_view imageName(ImageNameId id) {
  return table().name(id);
}

std::size_t internedImageNames() {
  NameTable& t = table();
  std::lock_guard lock(t.mu);
  return t.liveLocked();
}

NodeImages::NodeImages(const std::vector<ContainerImage>& images, std::string_view node) {
  struct Wanted {
    std::string_view name;
    std::uint32_t image;
    std::uint32_t hash;
  };
  std::vector<Wanted> wanted;
  sizes_.reserve(images.size());
  for (std::size_t i = 0; i < images.size(); ++i) {
    sizes_.push_back(images[i].size_bytes);
    for (const auto& name : images[i].names)
      wanted.push_back({name, static_cast<std::uint32_t>(i), 0});
  }
  // Each distinct name once, with the first image that lists it.
  std::stable_sort(wanted.begin(), wanted.end(),
                   [](const Wanted& a, const Wanted& b) { return a.name < b.name; });
  wanted.erase(std::unique(wanted.begin(), wanted.end(),
                           [](const Wanted& a, const Wanted& b) { return a.name == b.name; }),
               wanted.end());
  for (auto& w : wanted)
    w.hash = imageNameHash(w.name);

  names_.reserve(wanted.size());
  bool full = false;
  std::string_view dropped;
  std::size_t full_at = 0;
  {
    NameTable& t = table();
    std::lock_guard lock(t.mu);
    for (const auto& w : wanted) {
      const ImageNameId id = t.acquireLocked(w.name);
      if (id != kNoId) {
        names_.push_back({w.hash, id, w.image});
      } else if (!t.warned_full) {
        t.warned_full = true;
        full = true;
        dropped = w.name;
        full_at = t.liveLocked();
      }
    }
  }
  if (full) {
    KOORD_LOG_WARNING(
        "node {}: image name {} left out: {} distinct image names are interned, the most the "
        "scheduler keeps; ImageLocality counts nodes as not having such names (logged once)",
        node, dropped, full_at);
  }
  std::sort(names_.begin(), names_.end(), [](const Name& a, const Name& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.id < b.id;
  });
}

NodeImages::NodeImages(const NodeImages& other) : names_(other.names_), sizes_(other.sizes_) {
  if (names_.empty())
    return;
  NameTable& t = table();
  std::lock_guard lock(t.mu);
  for (const auto& n : names_)
    t.retainLocked(n.id);
}

NodeImages::NodeImages(NodeImages&& other) noexcept
    : names_(std::move(other.names_)), sizes_(std::move(other.sizes_)) {
  other.names_.clear();
  other.sizes_.clear();
}

NodeImages& NodeImages::operator=(const NodeImages& other) {
  if (this != &other) {
    NodeImages copy(other);
    *this = std::move(copy);
  }
  return *this;
}

NodeImages& NodeImages::operator=(NodeImages&& other) noexcept {
  if (this != &other) {
    release();
    names_ = std::move(other.names_);
    sizes_ = std::move(other.sizes_);
    other.names_.clear();
    other.sizes_.clear();
  }
  return *this;
}

NodeImages::~NodeImages() {
  release();
}

void NodeImages::release() noexcept {
  if (!names_.empty()) {
    NameTable& t = table();
    std::lock_guard lock(t.mu);
    for (const auto& n : names_)
      t.releaseLocked(n.id);
  }
  names_.clear();
  sizes_.clear();
}

const NodeImages::Name* NodeImages::find(std::string_view name, std::uint32_t hash) const {
  auto it = std::lower_bound(names_.begin(), names_.end(), hash,
                             [](const Name& n, std::uint32_t h) { return n.hash < h; });
  for (; it != names_.end() && it->hash == hash; ++it) {
    if (imageName(it->id) == name)
      return &*it;
  }
  return nullptr;
}

bool NodeImages::sameNames(const NodeImages& other) const {
  return std::equal(names_.begin(), names_.end(), other.names_.begin(), other.names_.end(),
                    [](const Name& a, const Name& b) { return a.id == b.id; });
}

void ImageNodeCounts::add(const NodeImages& images, int delta) {
  for (const auto& n : images.names()) {
    const std::size_t c = n.id >> kChunkBits;
    if (c >= chunks_.size()) {
      chunks_.resize(c + 1);
      owned_.resize(c + 1, false);
    }
    if (chunks_[c] == nullptr) {
      chunks_[c] = std::make_shared<Chunk>();
      owned_[c] = true;
    } else if (!owned_[c]) {
      chunks_[c] = std::make_shared<Chunk>(*chunks_[c]);
      owned_[c] = true;
    }
    std::uint32_t& v = (*chunks_[c])[n.id & (kChunkSize - 1)];
    if (delta > 0) {
      if (v++ == 0)
        ++counted_names_;
    } else if (v > 0) {
      if (--v == 0)
        --counted_names_;
    }
  }
}

std::shared_ptr<const ImageNodeCounts> ImageNodeCounts::publish() {
  auto copy = std::make_shared<ImageNodeCounts>();
  copy->chunks_ = chunks_;
  copy->counted_names_ = counted_names_;
  std::fill(owned_.begin(), owned_.end(), false);
  return copy;
}

}  // namespace koord::roles::scheduler
