#include "koord/kube/list_decoder.h"

#include <fmt/format.h>
#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include <cstdint>
#include <string>

#include "koord/kube/json_limits.h"

namespace koord::kube {

namespace json = boost::json;

namespace {

// SAX events of the whole list in; values out for the parts we keep. Containers inside a kept
// value go onto a value_stack; the item's memory comes from a monotonic arena that is rewound
// after every item, so decoding allocates almost nothing once warmed up.
class ListHandler {
 public:
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  explicit ListHandler(ListDecoder::ItemSink sink)
      : sink_(std::move(sink)), arena_(buffer_, sizeof buffer_), stack_() {}

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }

  bool on_object_begin(boost::system::error_code& ec) {
    if (depth_ == 0) {
      depth_ = 1;
      return true;
    }
    if (!capturing_ && !beginValue(ec))
      return false;
    ++depth_;
    return true;
  }
  bool on_object_end(std::size_t n, boost::system::error_code& ec) {
    --depth_;
    if (!capturing_)
      return true;
    stack_.push_object(n);
    return depth_ == base_ ? complete(ec) : true;
  }
  bool on_array_begin(boost::system::error_code& ec) {
    if (depth_ == 0)
      return fail(ec, "the list is not a JSON object");
    if (!capturing_ && depth_ == 1 && key_ == "items") {
      in_items_ = true;
      ++depth_;
      return true;
    }
    if (!capturing_ && !beginValue(ec))
      return false;
    ++depth_;
    return true;
  }
  bool on_array_end(std::size_t n, boost::system::error_code& ec) {
    --depth_;
    if (capturing_) {
      stack_.push_array(n);
      return depth_ == base_ ? complete(ec) : true;
    }
    if (in_items_ && depth_ == 1)
      in_items_ = false;
    return true;
  }

  bool on_key_part(json::string_view s, std::size_t, boost::system::error_code&) {
    if (capturing_)
      stack_.push_chars(s);
    else if (depth_ == 1)
      key_part_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, boost::system::error_code&) {
    if (capturing_) {
      stack_.push_key(s);
    } else if (depth_ == 1) {
      key_part_.append(s.data(), s.size());
      key_.swap(key_part_);
      key_part_.clear();
    }
    return true;
  }

  bool on_string_part(json::string_view s, std::size_t, boost::system::error_code& ec) {
    if (!scalar(ec))
      return false;
    if (capturing_)
      stack_.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, boost::system::error_code& ec) {
    if (!scalar(ec))
      return false;
    if (capturing_)
      stack_.push_string(s);
    return true;
  }
  bool on_number_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_int64(std::int64_t i, json::string_view, boost::system::error_code& ec) {
    if (!scalar(ec))
      return false;
    if (capturing_)
      stack_.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, boost::system::error_code& ec) {
    if (!scalar(ec))
      return false;
    if (capturing_)
      stack_.push_uint64(u);
    return true;
  }
  bool on_double(double d, json::string_view, boost::system::error_code& ec) {
    if (!scalar(ec))
      return false;
    if (capturing_)
      stack_.push_double(d);
    return true;
  }
  bool on_bool(bool b, boost::system::error_code& ec) {
    if (!scalar(ec))
      return false;
    if (capturing_)
      stack_.push_bool(b);
    return true;
  }
  bool on_null(boost::system::error_code& ec) {
    if (!scalar(ec, true))
      return false;
    if (capturing_)
      stack_.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(json::string_view, boost::system::error_code&) { return true; }

  const std::string& failure() const { return failure_; }
  const json::value& metadata() const { return metadata_; }
  std::size_t items() const { return items_; }

 private:
  enum class Target { kItem, kMetadata };

  // A container starts outside any kept value: keep it if it is an item or the metadata.
  bool beginValue(boost::system::error_code& ec) {
    if (depth_ == 1 && key_ == "items")
      return fail(ec, "items is not an array");
    if (in_items_ && depth_ == 2) {
      target_ = Target::kItem;
    } else if (depth_ == 1 && key_ == "metadata") {
      target_ = Target::kMetadata;
    } else {
      return true;  // kind, apiVersion, or something we do not know: skipped
    }
    capturing_ = true;
    base_ = depth_;
    stack_.reset(json::storage_ptr(&arena_));
    return true;
  }

  // Scalars outside kept values are skipped, except as items: an item must be an object, and
  // items an array (or null: no items), so that a list of the wrong shape is never an empty one.
  bool scalar(boost::system::error_code& ec, bool is_null = false) {
    if (!capturing_ && depth_ == 1 && key_ == "items" && !is_null)
      return fail(ec, "items is not an array");
    if (!capturing_ && in_items_ && depth_ == 2)
      return fail(ec, fmt::format("items[{}] is not an object", items_));
    if (depth_ == 0)
      return fail(ec, "the list is not a JSON object");
    return true;
  }

  bool complete(boost::system::error_code& ec) {
    capturing_ = false;
    bool keep_going = true;
    {
      json::value v = stack_.release();
      if (target_ == Target::kMetadata) {
        metadata_ = json::value(v, json::storage_ptr());
      } else {
        ++items_;
        keep_going = sink_(v);
      }
    }
    arena_.release();
    if (!keep_going)
      return fail(ec, "the item consumer stopped the list");
    return true;
  }

  bool fail(boost::system::error_code& ec, std::string message) {
    failure_ = std::move(message);
    ec = json::error::syntax;
    return false;
  }

  ListDecoder::ItemSink sink_;
  // Most objects fit the inline buffer; bigger ones borrow heap blocks until the next rewind.
  unsigned char buffer_[64 << 10];
  json::monotonic_resource arena_;
  json::value_stack stack_;
  int depth_ = 0;
  bool in_items_ = false;
  bool capturing_ = false;
  int base_ = 0;
  Target target_ = Target::kItem;
  std::string key_, key_part_;
  json::value metadata_;
  std::size_t items_ = 0;
  std::string failure_;
};

}  // namespace

struct ListDecoder::Impl {
  explicit Impl(ItemSink sink) : parser(apiObjectParseOptions(), std::move(sink)) {}

  std::string errorText(const boost::system::error_code& ec) const {
    const auto& why = parser.handler().failure();
    return why.empty() ? fmt::format("the list is not valid JSON: {}", ec.message())
                       : fmt::format("the list is malformed: {}", why);
  }

  json::basic_parser<ListHandler> parser;
  bool broken = false;
};

ListDecoder::ListDecoder(ItemSink sink) : impl_(std::make_unique<Impl>(std::move(sink))) {}

ListDecoder::~ListDecoder() = default;

bool ListDecoder::feed(std::string_view chunk, std::string& error) {
  if (impl_->broken) {
    error = "the list decoder already failed";
    return false;
  }
  boost::system::error_code ec;
  impl_->parser.write_some(true, chunk.data(), chunk.size(), ec);
  if (ec) {
    impl_->broken = true;
    error = impl_->errorText(ec);
    return false;
  }
  return true;
}

bool ListDecoder::finish(std::string& error) {
  if (impl_->broken) {
    error = "the list decoder already failed";
    return false;
  }
  boost::system::error_code ec;
  impl_->parser.write_some(false, nullptr, 0, ec);
  if (ec || !impl_->parser.done()) {
    impl_->broken = true;
    error = ec ? impl_->errorText(ec) : "the list ended early";
    return false;
  }
  return true;
}

const json::value& ListDecoder::metadata() const {
  return impl_->parser.handler().metadata();
}

std::size_t ListDecoder::items() const {
  return impl_->parser.handler().items();
}

}  // namespace koord::kube
