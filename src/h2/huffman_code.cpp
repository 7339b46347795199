// The Huffman code of RFC 7541 Appendix B, and the tables its decoder is built from.
#include "koord/h2/huffman_code.h"

#include <cstddef>

namespace koord::h2 {
namespace {

// RFC 7541 Appendix B, in symbol order.
constexpr std::array<HuffmanCode, 257> kCodes = {{
    {0x1ff8, 13},      //   0
    {0x7fffd8, 23},    //   1
    {0xfffffe2, 28},   //   2
    {0xfffffe3, 28},   //   3
    {0xfffffe4, 28},   //   4
    {0xfffffe5, 28},   //   5
    {0xfffffe6, 28},   //   6
    {0xfffffe7, 28},   //   7
    {0xfffffe8, 28},   //   8
    {0xffffea, 24},    //   9
    {0x3ffffffc, 30},  //  10
    {0xfffffe9, 28},   //  11
    {0xfffffea, 28},   //  12
    {0x3ffffffd, 30},  //  13
    {0xfffffeb, 28},   //  14
    {0xfffffec, 28},   //  15
    {0xfffffed, 28},   //  16
    {0xfffffee, 28},   //  17
    {0xfffffef, 28},   //  18
    {0xffffff0, 28},   //  19
    {0xffffff1, 28},   //  20
    {0xffffff2, 28},   //  21
    {0x3ffffffe, 30},  //  22
    {0xffffff3, 28},   //  23
    {0xffffff4, 28},   //  24
    {0xffffff5, 28},   //  25
    {0xffffff6, 28},   //  26
    {0xffffff7, 28},   //  27
    {0xffffff8, 28},   //  28
    {0xffffff9, 28},   //  29
    {0xffffffa, 28},   //  30
    {0xffffffb, 28},   //  31
    {0x14, 6},         // ' '
    {0x3f8, 10},       // '!'
    {0x3f9, 10},       // '"'
    {0xffa, 12},       // '#'
    {0x1ff9, 13},      // '$'
    {0x15, 6},         // '%'
    {0xf8, 8},         // '&'
    {0x7fa, 11},       // '''
    {0x3fa, 10},       // '('
    {0x3fb, 10},       // ')'
    {0xf9, 8},         // '*'
    {0x7fb, 11},       // '+'
    {0xfa, 8},         // ','
    {0x16, 6},         // '-'
    {0x17, 6},         // '.'
    {0x18, 6},         // '/'
    {0x0, 5},          // '0'
    {0x1, 5},          // '1'
    {0x2, 5},          // '2'
    {0x19, 6},         // '3'
    {0x1a, 6},         // '4'
    {0x1b, 6},         // '5'
    {0x1c, 6},         // '6'
    {0x1d, 6},         // '7'
    {0x1e, 6},         // '8'
    {0x1f, 6},         // '9'
    {0x5c, 7},         // ':'
    {0xfb, 8},         // ';'
    {0x7ffc, 15},      // '<'
    {0x20, 6},         // '='
    {0xffb, 12},       // '>'
    {0x3fc, 10},       // '?'
    {0x1ffa, 13},      // '@'
    {0x21, 6},         // 'A'
    {0x5d, 7},         // 'B'
    {0x5e, 7},         // 'C'
    {0x5f, 7},         // 'D'
    {0x60, 7},         // 'E'
    {0x61, 7},         // 'F'
    {0x62, 7},         // 'G'
    {0x63, 7},         // 'H'
    {0x64, 7},         // 'I'
    {0x65, 7},         // 'J'
    {0x66, 7},         // 'K'
    {0x67, 7},         // 'L'
    {0x68, 7},         // 'M'
    {0x69, 7},         // 'N'
    {0x6a, 7},         // 'O'
    {0x6b, 7},         // 'P'
    {0x6c, 7},         // 'Q'
    {0x6d, 7},         // 'R'
    {0x6e, 7},         // 'S'
    {0x6f, 7},         // 'T'
    {0x70, 7},         // 'U'
    {0x71, 7},         // 'V'
    {0x72, 7},         // 'W'
    {0xfc, 8},         // 'X'
    {0x73, 7},         // 'Y'
    {0xfd, 8},         // 'Z'
    {0x1ffb, 13},      // '['
    {0x7fff0, 19},     // '\'
    {0x1ffc, 13},      // ']'
    {0x3ffc, 14},      // '^'
    {0x22, 6},         // '_'
    {0x7ffd, 15},      // '`'
    {0x3, 5},          // 'a'
    {0x23, 6},         // 'b'
    {0x4, 5},          // 'c'
    {0x24, 6},         // 'd'
    {0x5, 5},          // 'e'
    {0x25, 6},         // 'f'
    {0x26, 6},         // 'g'
    {0x27, 6},         // 'h'
    {0x6, 5},          // 'i'
    {0x74, 7},         // 'j'
    {0x75, 7},         // 'k'
    {0x28, 6},         // 'l'
    {0x29, 6},         // 'm'
    {0x2a, 6},         // 'n'
    {0x7, 5},          // 'o'
    {0x2b, 6},         // 'p'
    {0x76, 7},         // 'q'
    {0x2c, 6},         // 'r'
    {0x8, 5},          // 's'
    {0x9, 5},          // 't'
    {0x2d, 6},         // 'u'
    {0x77, 7},         // 'v'
    {0x78, 7},         // 'w'
    {0x79, 7},         // 'x'
    {0x7a, 7},         // 'y'
    {0x7b, 7},         // 'z'
    {0x7ffe, 15},      // '{'
    {0x7fc, 11},       // '|'
    {0x3ffd, 14},      // '}'
    {0x1ffd, 13},      // '~'
    {0xffffffc, 28},   // 127
    {0xfffe6, 20},     // 128
    {0x3fffd2, 22},    // 129
    {0xfffe7, 20},     // 130
    {0xfffe8, 20},     // 131
    {0x3fffd3, 22},    // 132
    {0x3fffd4, 22},    // 133
    {0x3fffd5, 22},    // 134
    {0x7fffd9, 23},    // 135
    {0x3fffd6, 22},    // 136
    {0x7fffda, 23},    // 137
    {0x7fffdb, 23},    // 138
    {0x7fffdc, 23},    // 139
    {0x7fffdd, 23},    // 140
    {0x7fffde, 23},    // 141
    {0xffffeb, 24},    // 142
    {0x7fffdf, 23},    // 143
    {0xffffec, 24},    // 144
    {0xffffed, 24},    // 145
    {0x3fffd7, 22},    // 146
    {0x7fffe0, 23},    // 147
    {0xffffee, 24},    // 148
    {0x7fffe1, 23},    // 149
    {0x7fffe2, 23},    // 150
    {0x7fffe3, 23},    // 151
    {0x7fffe4, 23},    // 152
    {0x1fffdc, 21},    // 153
    {0x3fffd8, 22},    // 154
    {0x7fffe5, 23},    // 155
    {0x3fffd9, 22},    // 156
    {0x7fffe6, 23},    // 157
    {0x7fffe7, 23},    // 158
    {0xffffef, 24},    // 159
    {0x3fffda, 22},    // 160
    {0x1fffdd, 21},    // 161
    {0xfffe9, 20},     // 162
    {0x3fffdb, 22},    // 163
    {0x3fffdc, 22},    // 164
    {0x7fffe8, 23},    // 165
    {0x7fffe9, 23},    // 166
    {0x1fffde, 21},    // 167
    {0x7fffea, 23},    // 168
    {0x3fffdd, 22},    // 169
    {0x3fffde, 22},    // 170
    {0xfffff0, 24},    // 171
    {0x1fffdf, 21},    // 172
    {0x3fffdf, 22},    // 173
    {0x7fffeb, 23},    // 174
    {0x7fffec, 23},    // 175
    {0x1fffe0, 21},    // 176
    {0x1fffe1, 21},    // 177
    {0x3fffe0, 22},    // 178
    {0x1fffe2, 21},    // 179
    {0x7fffed, 23},    // 180
    {0x3fffe1, 22},    // 181
    {0x7fffee, 23},    // 182
    {0x7fffef, 23},    // 183
    {0xfffea, 20},     // 184
    {0x3fffe2, 22},    // 185
    {0x3fffe3, 22},    // 186
    {0x3fffe4, 22},    // 187
    {0x7ffff0, 23},    // 188
    {0x3fffe5, 22},    // 189
    {0x3fffe6, 22},    // 190
    {0x7ffff1, 23},    // 191
    {0x3ffffe0, 26},   // 192
    {0x3ffffe1, 26},   // 193
    {0xfffeb, 20},     // 194
    {0x7fff1, 19},     // 195
    {0x3fffe7, 22},    // 196
    {0x7ffff2, 23},    // 197
    {0x3fffe8, 22},    // 198
    {0x1ffffec, 25},   // 199
    {0x3ffffe2, 26},   // 200
    {0x3ffffe3, 26},   // 201
    {0x3ffffe4, 26},   // 202
    {0x7ffffde, 27},   // 203
    {0x7ffffdf, 27},   // 204
    {0x3ffffe5, 26},   // 205
    {0xfffff1, 24},    // 206
    {0x1ffffed, 25},   // 207
    {0x7fff2, 19},     // 208
    {0x1fffe3, 21},    // 209
    {0x3ffffe6, 26},   // 210
    {0x7ffffe0, 27},   // 211
    {0x7ffffe1, 27},   // 212
    {0x3ffffe7, 26},   // 213
    {0x7ffffe2, 27},   // 214
    {0xfffff2, 24},    // 215
    {0x1fffe4, 21},    // 216
    {0x1fffe5, 21},    // 217
    {0x3ffffe8, 26},   // 218
    {0x3ffffe9, 26},   // 219
    {0xffffffd, 28},   // 220
    {0x7ffffe3, 27},   // 221
    {0x7ffffe4, 27},   // 222
    {0x7ffffe5, 27},   // 223
    {0xfffec, 20},     // 224
    {0xfffff3, 24},    // 225
    {0xfffed, 20},     // 226
    {0x1fffe6, 21},    // 227
    {0x3fffe9, 22},    // 228
    {0x1fffe7, 21},    // 229
    {0x1fffe8, 21},    // 230
    {0x7ffff3, 23},    // 231
    {0x3fffea, 22},    // 232
    {0x3fffeb, 22},    // 233
    {0x1ffffee, 25},   // 234
    {0x1ffffef, 25},   // 235
    {0xfffff4, 24},    // 236
    {0xfffff5, 24},    // 237
    {0x3ffffea, 26},   // 238
    {0x7ffff4, 23},    // 239
    {0x3ffffeb, 26},   // 240
    {0x7ffffe6, 27},   // 241
    {0x3ffffec, 26},   // 242
    {0x3ffffed, 26},   // 243
    {0x7ffffe7, 27},   // 244
    {0x7ffffe8, 27},   // 245
    {0x7ffffe9, 27},   // 246
    {0x7ffffea, 27},   // 247
    {0x7ffffeb, 27},   // 248
    {0xffffffe, 28},   // 249
    {0x7ffffec, 27},   // 250
    {0x7ffffed, 27},   // 251
    {0x7ffffee, 27},   // 252
    {0x7ffffef, 27},   // 253
    {0x7fffff0, 27},   // 254
    {0x3ffffee, 26},   // 255
    {0x3fffffff, 30},  // EOS
}};

constexpr int kMaxLength = 30;
constexpr int kFastBits = 8;

struct FastEntry {
  std::uint16_t symbol;
  std::uint8_t length;  // 0: the code is longer than kFastBits
};

// The code is canonical (codes of one length are consecutive, in symbol order, and each length
// starts where the previous one ended, shifted), so a code longer than kFastBits is found by
// comparing the next 32 bits against one bound per length instead of walking a tree.
struct DecodeTables {
  std::array<FastEntry, 1 << kFastBits> fast{};
  // Left-aligned in 32 bits, one past the last code of each length; wider than 32 bits
  // because the bound past EOS (all ones, the last code) is 2^32.
  std::array<std::uint64_t, kMaxLength + 1> limit{};
  std::array<std::uint32_t, kMaxLength + 1> first_code{};
  std::array<std::uint16_t, kMaxLength + 1> first_index{};
  std::array<std::uint16_t, kCodes.size()> symbols{};  // ordered by (length, symbol)
  bool canonical = true;
};

consteval DecodeTables buildTables() {
  DecodeTables t{};
  std::array<std::uint16_t, kMaxLength + 1> count{};
  for (const HuffmanCode& c : kCodes) {
    ++count[c.length];
  }
  std::uint16_t index = 0;
  for (int len = 1; len <= kMaxLength; ++len) {
    t.first_index[len] = index;
    index += count[len];
  }
  auto next = t.first_index;
  for (std::size_t sym = 0; sym < kCodes.size(); ++sym) {
    t.symbols[next[kCodes[sym].length]++] = static_cast<std::uint16_t>(sym);
  }
  std::uint32_t code = 0;
  for (int len = 1; len <= kMaxLength; ++len) {
    t.first_code[len] = code;
    for (std::uint16_t i = 0; i < count[len]; ++i) {
      if (kCodes[t.symbols[t.first_index[len] + i]].bits != code + i) {
        t.canonical = false;
      }
    }
    code += count[len];
    t.limit[len] = std::uint64_t{code} << (32 - len);
    code <<= 1;
  }
  for (std::size_t sym = 0; sym < kCodes.size(); ++sym) {
    const HuffmanCode& c = kCodes[sym];
    if (c.length > kFastBits) {
      continue;
    }
    const std::uint32_t shift = kFastBits - c.length;
    for (std::uint32_t i = c.bits << shift; i < ((c.bits + 1) << shift); ++i) {
      t.fast[i] = {static_cast<std::uint16_t>(sym), c.length};
    }
  }
  return t;
}

constexpr DecodeTables kTables = buildTables();
static_assert(kTables.canonical, "the decoder relies on RFC 7541's code being canonical");
// A complete code: every 30-bit pattern starts with some code, so the search below ends.
static_assert(kTables.limit[kMaxLength] == std::uint64_t{1} << 32);
static_assert(kTables.fast[0].length == 5 && kTables.fast[0].symbol == '0');

}  // namespace

const std::array<HuffmanCode, 257>& huffmanCodes() {
  return kCodes;
}

HuffmanResult huffmanDecode(std::string_view in, std::string& out) {
  const std::size_t start = out.size();
  // No code is shorter than 5 bits, so this bounds the decoded length.
  out.resize(start + in.size() * 8 / 5);
  char* dst = out.data() + start;
  const auto* src = reinterpret_cast<const unsigned char*>(in.data());
  const auto* const end = src + in.size();

  // The unread bits, left-aligned; past `nbits` they are zeros.
  std::uint64_t bits = 0;
  int nbits = 0;
  HuffmanResult result = HuffmanResult::kOk;
  for (;;) {
    while (nbits <= 56 && src != end) {
      bits |= std::uint64_t{*src++} << (56 - nbits);
      nbits += 8;
    }
    if (nbits == 0) {
      break;
    }
    const auto top = static_cast<std::uint32_t>(bits >> 32);
    const FastEntry fast = kTables.fast[top >> (32 - kFastBits)];
    int length = fast.length;
    std::uint16_t symbol = fast.symbol;
    if (length == 0) {
      length = kFastBits + 1;
      while (top >= kTables.limit[length]) {
        ++length;
      }
      symbol = kTables.symbols[kTables.first_index[length] +
                               ((top >> (32 - length)) - kTables.first_code[length])];
    }
    if (length > nbits) {
      // The input ends inside a code: what is left is padding, which must be a prefix of EOS
      // (all ones) and shorter than an octet.
      const std::uint32_t ones = (std::uint32_t{1} << nbits) - 1;
      if (nbits > 7 || (top >> (32 - nbits)) != ones) {
        result = HuffmanResult::kBadPadding;
      }
      break;
    }
    if (symbol == kHuffmanEos) {
      result = HuffmanResult::kEos;
      break;
    }
    *dst++ = static_cast<char>(symbol);
    bits <<= length;
    nbits -= length;
  }
  out.resize(static_cast<std::size_t>(dst - out.data()));
  return result;
}

}  // namespace koord::h2
