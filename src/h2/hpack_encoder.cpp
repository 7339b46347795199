// HPACK encoding that leaves the receiver's dynamic table alone: every field a literal without
// indexing with a literal name and raw (never Huffman) strings, RFC 7541 6.2.2.
#include "koord/h2/hpack.h"

#include <cstring>

namespace koord::h2 {
namespace {

// The most octets a string's length takes: a 7-bit prefix and 7 bits per octet after it.
constexpr std::size_t kMaxLengthOctets = 10;

// RFC 7541 5.1 with a 7-bit prefix and the H bit clear; returns the end of what it wrote.
char* putLength(std::size_t length, char* p) {
  if (length < 0x7f) {
    *p++ = static_cast<char>(length);
    return p;
  }
  *p++ = static_cast<char>(0x7f);
  length -= 0x7f;
  while (length >= 0x80) {
    *p++ = static_cast<char>(0x80 | (length & 0x7f));
    length >>= 7;
  }
  *p++ = static_cast<char>(length);
  return p;
}

char* putString(std::string_view s, char* p) {
  p = putLength(s.size(), p);
  if (!s.empty())
    std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace

void hpackEncode(const HeaderList& headers, std::string& out) {
  // Written in place into room for the longest encoding, then cut to what was written: the
  // relay re-encodes every call's header blocks, and this is one allocation at most.
  const std::size_t start = out.size();
  std::size_t most = 0;
  for (const HeaderField& field : headers)
    most += 1 + 2 * kMaxLengthOctets + field.name.size() + field.value.size();
  out.resize(start + most);
  char* const begin = out.data() + start;
  char* p = begin;
  for (const HeaderField& field : headers) {
    // 0000 0000: literal without indexing, new name.
    *p++ = '\0';
    p = putString(field.name, p);
    p = putString(field.value, p);
  }
  out.resize(start + static_cast<std::size_t>(p - begin));
}

}  // namespace koord::h2
