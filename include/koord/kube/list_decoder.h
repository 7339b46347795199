// Decodes a Kubernetes list response ({"kind":..., "metadata":{...}, "items":[...]}) while it
// streams in, one item at a time, so a 10,000-pod list never exists whole in memory.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace koord::kube {

class ListDecoder {
 public:
  /// Gets each element of "items" in order. The value lives only for the call (its memory is
  /// reused for the next item). Answering false stops the decoding (feed then fails).
  using ItemSink = std::function<bool(const boost::json::value& item)>;

  explicit ListDecoder(ItemSink sink);
  ~ListDecoder();
  ListDecoder(const ListDecoder&) = delete;
  ListDecoder& operator=(const ListDecoder&) = delete;

  /// Any chunking of the body. False with `error` set on malformed JSON or a refusing sink; the
  /// decoder is then unusable.
  bool feed(std::string_view chunk, std::string& error);
  /// The body has ended: false unless it was exactly one complete JSON object.
  bool finish(std::string& error);

  /// The top-level "metadata" (resourceVersion, continue, remainingItemCount); null until seen.
  const boost::json::value& metadata() const;
  /// Items handed to the sink so far.
  std::size_t items() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace koord::kube
