// HPACK decoding (RFC 7541 sections 4 to 6) and the decoder's copy of the peer's dynamic table.
#include "koord/h2/hpack.h"

#include <algorithm>
#include <array>
#include <limits>

#include "koord/h2/huffman_code.h"

namespace koord::h2 {
namespace {

struct StaticEntry {
  std::string_view name;
  std::string_view value;
};

// RFC 7541 Appendix A; index 1 is element 0.
constexpr std::array<StaticEntry, 61> kStaticTable = {{
    {":authority", ""},
    {":method", "GET"},
    {":method", "POST"},
    {":path", "/"},
    {":path", "/index.html"},
    {":scheme", "http"},
    {":scheme", "https"},
    {":status", "200"},
    {":status", "204"},
    {":status", "206"},
    {":status", "304"},
    {":status", "400"},
    {":status", "404"},
    {":status", "500"},
    {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"},
    {"accept-language", ""},
    {"accept-ranges", ""},
    {"accept", ""},
    {"access-control-allow-origin", ""},
    {"age", ""},
    {"allow", ""},
    {"authorization", ""},
    {"cache-control", ""},
    {"content-disposition", ""},
    {"content-encoding", ""},
    {"content-language", ""},
    {"content-length", ""},
    {"content-location", ""},
    {"content-range", ""},
    {"content-type", ""},
    {"cookie", ""},
    {"date", ""},
    {"etag", ""},
    {"expect", ""},
    {"expires", ""},
    {"from", ""},
    {"host", ""},
    {"if-match", ""},
    {"if-modified-since", ""},
    {"if-none-match", ""},
    {"if-range", ""},
    {"if-unmodified-since", ""},
    {"last-modified", ""},
    {"link", ""},
    {"location", ""},
    {"max-forwards", ""},
    {"proxy-authenticate", ""},
    {"proxy-authorization", ""},
    {"range", ""},
    {"referer", ""},
    {"refresh", ""},
    {"retry-after", ""},
    {"server", ""},
    {"set-cookie", ""},
    {"strict-transport-security", ""},
    {"transfer-encoding", ""},
    {"user-agent", ""},
    {"vary", ""},
    {"via", ""},
    {"www-authenticate", ""},
}};

constexpr std::size_t kEntryOverhead = 32;

std::size_t entrySize(const HeaderField& f) {
  return f.name.size() + f.value.size() + kEntryOverhead;
}

}  // namespace

struct HpackDecoder::Cursor {
  const unsigned char* p;
  const unsigned char* end;

  std::size_t left() const { return static_cast<std::size_t>(end - p); }

  // RFC 7541 5.1; the caller has checked that the first octet is there. Nothing the protocol
  // counts needs more than 32 bits, and a 32-bit value needs at most 5 continuation octets
  // (padding with 0x80 octets is legal but no encoder does more).
  bool readInteger(int prefix_bits, std::uint32_t& value, std::string& error) {
    const unsigned prefix_max = (1u << prefix_bits) - 1;
    std::uint64_t v = *p++ & prefix_max;
    if (v == prefix_max) {
      for (int shift = 0;; shift += 7) {
        if (p == end) {
          error = "integer truncated by the end of the block";
          return false;
        }
        if (shift > 28) {
          error = "integer encoding longer than 32 bits can need";
          return false;
        }
        const unsigned char octet = *p++;
        v += std::uint64_t{octet & 0x7fu} << shift;
        if (v > std::numeric_limits<std::uint32_t>::max()) {
          error = "integer does not fit in 32 bits";
          return false;
        }
        if ((octet & 0x80) == 0) {
          break;
        }
      }
    }
    value = static_cast<std::uint32_t>(v);
    return true;
  }

  // RFC 7541 5.2, appended to `dst`.
  bool readString(std::string& dst, std::string& error) {
    if (p == end) {
      error = "block ends where a string literal should start";
      return false;
    }
    const bool huffman = (*p & 0x80) != 0;
    std::uint32_t length = 0;
    if (!readInteger(7, length, error)) {
      return false;
    }
    if (length > left()) {
      error = "string length " + std::to_string(length) + " past the block end (" +
              std::to_string(left()) + " octets left)";
      return false;
    }
    const std::string_view raw(reinterpret_cast<const char*>(p), length);
    p += length;
    if (!huffman) {
      dst.append(raw);
      return true;
    }
    switch (huffmanDecode(raw, dst)) {
      case HuffmanResult::kOk:
        return true;
      case HuffmanResult::kEos:
        error = "Huffman string contains EOS";
        return false;
      case HuffmanResult::kBadPadding:
        error = "Huffman padding longer than 7 bits or not a prefix of EOS";
        return false;
    }
    return false;
  }
};

HpackDecoder::HpackDecoder(std::size_t table_size_limit, std::size_t max_list_size,
                           std::size_t max_fields)
    : limit_(table_size_limit),
      max_size_(table_size_limit),
      max_list_size_(max_list_size),
      max_fields_(max_fields) {}

void HpackDecoder::setTableSizeLimit(std::size_t limit) {
  limit_ = limit;
  if (limit < max_size_) {
    lowest_limit_ = size_update_due_ ? std::min(lowest_limit_, limit) : limit;
    size_update_due_ = true;
  }
}

// Where decoded fields go: after the first `used` of `list`, over the fields already there
// (cleared, their storage kept) and then appended.
struct HpackDecoder::Output {
  HeaderList& list;
  std::size_t used;
  // What this block decoded so far, as the list limits count it.
  std::size_t fields = 0;
  std::size_t bytes = 0;

  HeaderField& next() {
    if (used < list.size()) {
      HeaderField& field = list[used++];
      field.name.clear();
      field.value.clear();
      return field;
    }
    ++used;
    return list.emplace_back();
  }
};

bool HpackDecoder::decodeInto(std::string_view block, Output& out, std::string& error) {
  if (failed_) {
    error = "the HPACK decoder already failed on an earlier block";
    return false;
  }
  const auto* data = reinterpret_cast<const unsigned char*>(block.data());
  Cursor in{data, data + block.size()};
  if (decodeBlock(in, out, error)) {
    return true;
  }
  failed_ = true;
  return false;
}

bool HpackDecoder::decode(std::string_view block, HeaderList& out, std::string& error) {
  const std::size_t start = out.size();
  Output fields{out, start};
  if (decodeInto(block, fields, error)) {
    return true;
  }
  out.resize(start);
  return false;
}

bool HpackDecoder::decodeReplacing(std::string_view block, HeaderList& out, std::string& error) {
  Output fields{out, 0};
  const bool ok = decodeInto(block, fields, error);
  out.resize(ok ? fields.used : 0);
  return ok;
}

bool HpackDecoder::decodeBlock(Cursor& in, Output& out, std::string& error) {
  // RFC 7541 4.2: size updates only before the first field.
  std::uint64_t smallest_update = std::numeric_limits<std::uint64_t>::max();
  while (in.p != in.end && (*in.p & 0xe0) == 0x20) {
    std::uint32_t size = 0;
    if (!in.readInteger(5, size, error) || !setMaxSize(size, error)) {
      return false;
    }
    smallest_update = std::min<std::uint64_t>(smallest_update, size);
  }
  if (size_update_due_) {
    if (smallest_update > lowest_limit_) {
      error = "block does not open with a dynamic table size update to at most " +
              std::to_string(lowest_limit_) + " after SETTINGS_HEADER_TABLE_SIZE went down";
      return false;
    }
    size_update_due_ = false;
  }
  while (in.p != in.end) {
    const unsigned char first = *in.p;
    bool ok = false;
    if ((first & 0x80) != 0) {
      ok = decodeIndexed(in, out, error);
    } else if ((first & 0x40) != 0) {
      ok = decodeLiteral(in, 6, true, out, error);
    } else if ((first & 0x20) != 0) {
      error = "dynamic table size update after a header field";
    } else {
      // 0000 without indexing, 0001 never indexed: the same to a decoder.
      ok = decodeLiteral(in, 4, false, out, error);
    }
    if (!ok) {
      return false;
    }
  }
  return true;
}

bool HpackDecoder::fits(Output& out, std::size_t size, std::string& error) {
  ++out.fields;
  out.bytes += size;
  if (out.fields <= max_fields_ && out.bytes <= max_list_size_) {
    return true;
  }
  over_limit_ = true;
  error = out.fields > max_fields_
              ? "header list of more than " + std::to_string(max_fields_) + " fields"
              : "header list past " + std::to_string(max_list_size_) +
                    " bytes (SETTINGS_MAX_HEADER_LIST_SIZE)";
  return false;
}

bool HpackDecoder::decodeIndexed(Cursor& in, Output& out, std::string& error) {
  std::uint32_t index = 0;
  std::string_view name;
  std::string_view value;
  if (!in.readInteger(7, index, error) || !lookup(index, name, value, error)) {
    return false;
  }
  // Counted before the copy: this is the representation that makes a bomb.
  if (!fits(out, name.size() + value.size() + kEntryOverhead, error)) {
    return false;
  }
  HeaderField& field = out.next();
  field.name.assign(name);
  field.value.assign(value);
  return true;
}

bool HpackDecoder::decodeLiteral(Cursor& in, int prefix_bits, bool index, Output& out,
                                 std::string& error) {
  std::uint32_t name_index = 0;
  if (!in.readInteger(prefix_bits, name_index, error)) {
    return false;
  }
  HeaderField& field = out.next();
  if (name_index == 0) {
    if (!in.readString(field.name, error)) {
      return false;
    }
  } else {
    std::string_view name;
    std::string_view unused;
    if (!lookup(name_index, name, unused, error)) {
      return false;
    }
    field.name = name;
  }
  if (!in.readString(field.value, error)) {
    return false;
  }
  // A literal's strings come from the block itself, which the caller bounds.
  if (!fits(out, entrySize(field), error)) {
    return false;
  }
  if (index) {
    insert(field);
  }
  return true;
}

bool HpackDecoder::setMaxSize(std::uint32_t size, std::string& error) {
  if (size > limit_) {
    error = "dynamic table size update to " + std::to_string(size) + " above the limit " +
            std::to_string(limit_);
    return false;
  }
  max_size_ = size;
  evictDownTo(max_size_);
  return true;
}

bool HpackDecoder::lookup(std::uint32_t index, std::string_view& name, std::string_view& value,
                          std::string& error) const {
  if (index == 0) {
    error = "header field index 0";
    return false;
  }
  if (index <= kStaticTable.size()) {
    name = kStaticTable[index - 1].name;
    value = kStaticTable[index - 1].value;
    return true;
  }
  const std::size_t age = index - kStaticTable.size() - 1;
  if (age >= dynamicCount()) {
    error = "header field index " + std::to_string(index) + " past the table (" +
            std::to_string(kStaticTable.size()) + " static and " + std::to_string(dynamicCount()) +
            " dynamic entries)";
    return false;
  }
  const HeaderField& entry = entries_[entries_.size() - 1 - age];
  name = entry.name;
  value = entry.value;
  return true;
}

void HpackDecoder::insert(const HeaderField& field) {
  const std::size_t size = entrySize(field);
  if (size > max_size_) {
    // RFC 7541 4.4: not an error; the table just ends up empty.
    evictDownTo(0);
    return;
  }
  evictDownTo(max_size_ - size);
  if (oldest_ != 0 && oldest_ >= dynamicCount()) {
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(oldest_));
    oldest_ = 0;
  }
  entries_.push_back(field);
  size_ += size;
}

void HpackDecoder::evictDownTo(std::size_t size) {
  while (size_ > size) {
    size_ -= entrySize(entries_[oldest_]);
    // Free the strings now rather than at the next compaction.
    entries_[oldest_] = HeaderField{};
    ++oldest_;
  }
}

}  // namespace koord::h2
