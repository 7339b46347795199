#include "koord/kube/json_document.h"

#include <boost/json.hpp>

#include <cstddef>
#include <new>

namespace koord::kube {

namespace json = boost::json;

namespace {

// Measures what a copy needs: the heap does the work, this only adds up the sizes as a
// monotonic_resource would lay them out (each block aligned).
class CountingResource final : public json::memory_resource {
 public:
  std::size_t bytes = 0;

 private:
  void* do_allocate(std::size_t n, std::size_t align) override {
    bytes = (bytes + align - 1) / align * align + n;
    return ::operator new(n, std::align_val_t(align));
  }
  void do_deallocate(void* p, std::size_t, std::size_t align) override {
    ::operator delete(p, std::align_val_t(align));
  }
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

// A bump allocator over one block of the measured size. The measurement is exact, so the
// heap fallback only guards against a Boost.JSON that copies differently than it measured.
class ArenaResource final : public json::memory_resource {
 public:
  explicit ArenaResource(std::size_t size)
      : block_(static_cast<unsigned char*>(::operator new(size))), size_(size) {}
  ~ArenaResource() override { ::operator delete(block_); }
  ArenaResource(const ArenaResource&) = delete;
  ArenaResource& operator=(const ArenaResource&) = delete;

 private:
  void* do_allocate(std::size_t n, std::size_t align) override {
    std::size_t at = (used_ + align - 1) / align * align;
    if (align <= alignof(std::max_align_t) && at + n <= size_) {
      used_ = at + n;
      return block_ + at;
    }
    return ::operator new(n, std::align_val_t(align));
  }
  void do_deallocate(void* p, std::size_t, std::size_t align) override {
    auto* b = static_cast<unsigned char*>(p);
    if (b < block_ || b >= block_ + size_)
      ::operator delete(p, std::align_val_t(align));
  }
  bool do_is_equal(const json::memory_resource& other) const noexcept override {
    return this == &other;
  }

  unsigned char* block_;
  std::size_t size_;
  std::size_t used_ = 0;
};

}  // namespace

json::value compactCopy(const json::value& v) {
  std::size_t need = 0;
  {
    CountingResource counter;
    json::value probe(v, &counter);
    need = counter.bytes;
  }
  return json::value(v, json::make_shared_resource<ArenaResource>(need));
}

namespace {

// `v` without metadata.managedFields; copies only when there is something to drop.
const json::value& withoutManagedFields(const json::value& v, json::value& scratch) {
  const auto* md = v.get_object().if_contains("metadata");
  if (md == nullptr || !md->is_object() || !md->get_object().contains("managedFields"))
    return v;
  scratch = v;
  scratch.get_object()["metadata"].get_object().erase("managedFields");
  return scratch;
}

}  // namespace

Expected<json::value> wholeDocument(const json::value& v) {
  if (!v.is_object())
    return makeKubeError("the object is not a JSON object");
  json::value scratch;
  return compactCopy(withoutManagedFields(v, scratch));
}

Expected<std::string> wholeDocumentText(const json::value& v) {
  if (!v.is_object())
    return makeKubeError("the object is not a JSON object");
  json::value scratch;
  std::string text = json::serialize(withoutManagedFields(v, scratch));
  text.shrink_to_fit();
  return text;
}

}  // namespace koord::kube
