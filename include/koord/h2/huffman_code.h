// Internal to the HPACK codec: the Huffman code of RFC 7541 Appendix B and its decoder. Tests
// read the code table to build Huffman strings; nothing outside h2/ should need it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace koord::h2 {

struct HuffmanCode {
  /// The code's bits, right-aligned: the first bit on the wire is bit `length - 1`.
  std::uint32_t bits;
  std::uint8_t length;
};

inline constexpr int kHuffmanEos = 256;

/// Codes of octets 0..255, then EOS (256).
const std::array<HuffmanCode, 257>& huffmanCodes();

enum class HuffmanResult { kOk, kEos, kBadPadding };

/// Appends the octets `in` encodes to `out`. On an error `out` may hold part of the string.
HuffmanResult huffmanDecode(std::string_view in, std::string& out);

}  // namespace koord::h2
