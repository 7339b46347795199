// HPACK (RFC 7541) for koord's HTTP/2 code: a decoder that follows one peer's dynamic table,
// and an encoder whose blocks never change the receiver's table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "koord/h2/limits.h"

namespace koord::h2 {

struct HeaderField {
  std::string name;
  std::string value;
};
using HeaderList = std::vector<HeaderField>;

/// One direction of one connection. Copyable: a copy is an independent decoder in the same state.
class HpackDecoder {
 public:
  /// `table_size_limit`: the largest dynamic table a size update may ask for (the receiving
  /// side's SETTINGS_HEADER_TABLE_SIZE; 4096 by default). The table starts at that size.
  /// `max_list_size` and `max_fields` bound each decoded list (SETTINGS_MAX_HEADER_LIST_SIZE
  /// semantics: names, values and 32 per field): decoding stops as soon as a list would pass
  /// them, so a small block that names a large table entry over and over costs at most that.
  explicit HpackDecoder(std::size_t table_size_limit = 4096,
                        std::size_t max_list_size = kMaxHeaderListSize,
                        std::size_t max_fields = kMaxHeaderFields);

  /// A later SETTINGS_HEADER_TABLE_SIZE of the receiving side, in effect from where the
  /// encoder's side acknowledges it. A limit below the table's size obliges the next block to
  /// open with a size update to at most that limit (RFC 7541 4.2); a block without one fails.
  void setTableSizeLimit(std::size_t limit);

  /// Decodes one complete header block (HEADERS + CONTINUATION fragments already joined),
  /// appending to `out`. false with `error` set (one line naming what is wrong) on a malformed
  /// block or one past the list limits; `out` is then as it was, and the decoder is unusable
  /// (the connection has a COMPRESSION_ERROR, or ENHANCE_YOUR_CALM when overLimit()).
  bool decode(std::string_view block, HeaderList& out, std::string& error);

  /// As decode(), but `out` is replaced, and the fields it already has are written over in
  /// place: a list kept for every block of a connection stops allocating once its strings have
  /// held the longest names and values (the relay decodes two blocks per call). On failure
  /// `out` is empty.
  bool decodeReplacing(std::string_view block, HeaderList& out, std::string& error);

  /// The last failure was a list past the limits rather than a malformed block.
  bool overLimit() const { return over_limit_; }

 private:
  struct Cursor;
  struct Output;

  bool decodeInto(std::string_view block, Output& out, std::string& error);
  bool decodeBlock(Cursor& in, Output& out, std::string& error);
  bool decodeIndexed(Cursor& in, Output& out, std::string& error);
  /// Counts a field of `size` (name + value + 32) against the list limits.
  bool fits(Output& out, std::size_t size, std::string& error);
  bool decodeLiteral(Cursor& in, int prefix_bits, bool index, Output& out, std::string& error);
  bool setMaxSize(std::uint32_t size, std::string& error);
  /// `index` as a block spells it: 1..61 static, then the dynamic table, newest first. The
  /// views die with the next insert.
  bool lookup(std::uint32_t index, std::string_view& name, std::string_view& value,
              std::string& error) const;
  std::size_t dynamicCount() const { return entries_.size() - oldest_; }
  void insert(const HeaderField& field);
  void evictDownTo(std::size_t size);

  std::size_t limit_;
  std::size_t max_size_;
  std::size_t max_list_size_;
  std::size_t max_fields_;
  bool over_limit_ = false;
  std::size_t size_ = 0;  // RFC 7541 4.1: name + value + 32 per entry
  // Set by a limit lower than the table's size: the next block must open with a size update to
  // at most `lowest_limit_`, the lowest limit set since the last block (RFC 7541 4.2).
  bool size_update_due_ = false;
  std::size_t lowest_limit_ = 0;
  bool failed_ = false;
  // The dynamic table, oldest first, from `oldest_` on: eviction only moves `oldest_`, and the
  // dead prefix is dropped once it is as long as the live part.
  std::vector<HeaderField> entries_;
  std::size_t oldest_ = 0;
};

/// Appends `headers` as one header block of literals without indexing (never Huffman, never a
/// dynamic table entry), so the receiver's dynamic table never changes because of us.
void hpackEncode(const HeaderList& headers, std::string& out);

}  // namespace koord::h2
