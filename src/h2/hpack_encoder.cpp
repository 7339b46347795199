// HPACK encoding that leaves the receiver's dynamic table alone: every field a literal without
// indexing with a literal name and raw (never Huffman) strings, RFC 7541 6.2.2.
#include "koord/h2/hpack.h"

namespace koord::h2 {
namespace {

// RFC 7541 5.1 with a 7-bit prefix and the H bit clear.
void appendLength(std::size_t length, std::string& out) {
  if (length < 0x7f) {
    out.push_back(static_cast<char>(length));
    return;
  }
  out.push_back(static_cast<char>(0x7f));
  length -= 0x7f;
  while (length >= 0x80) {
    out.push_back(static_cast<char>(0x80 | (length & 0x7f)));
    length >>= 7;
  }
  out.push_back(static_cast<char>(length));
}

void appendString(std::string_view s, std::string& out) {
  appendLength(s.size(), out);
  out.append(s);
}

}  // namespace

void hpackEncode(const HeaderList& headers, std::string& out) {
  for (const HeaderField& field : headers) {
    // 0000 0000: literal without indexing, new name.
    out.push_back('\0');
    appendString(field.name, out);
    appendString(field.value, out);
  }
}

}  // namespace koord::h2
