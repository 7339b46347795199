// HPACK against RFC 7541's Appendix C examples, round trips through our encoder, and the
// malformed blocks a decoder must refuse.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "koord/h2/hpack.h"
#include "koord/h2/huffman_code.h"

using namespace koord::h2;
using Catch::Contains;
using namespace std::string_literals;

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// "82 86 8441" as the RFC prints blocks.
std::string hex(std::string_view text) {
  std::string out;
  int high = -1;
  for (char c : text) {
    if (c == ' ' || c == '\n') {
      continue;
    }
    const int nibble = c <= '9' ? c - '0' : c - 'a' + 10;
    if (high < 0) {
      high = nibble;
    } else {
      out.push_back(static_cast<char>((high << 4) | nibble));
      high = -1;
    }
  }
  return out;
}

Fields pairs(const HeaderList& list) {
  Fields out;
  for (const HeaderField& f : list) {
    out.emplace_back(f.name, f.value);
  }
  return out;
}

// RFC 7541 5.1: `flags` are the bits above the prefix in the first octet.
std::string integer(int prefix_bits, unsigned flags, std::uint64_t value) {
  const std::uint64_t prefix_max = (std::uint64_t{1} << prefix_bits) - 1;
  std::string out;
  if (value < prefix_max) {
    out.push_back(static_cast<char>(flags | value));
    return out;
  }
  out.push_back(static_cast<char>(flags | prefix_max));
  value -= prefix_max;
  while (value >= 0x80) {
    out.push_back(static_cast<char>(0x80 | (value & 0x7f)));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

std::string indexed(std::uint64_t index) {
  return integer(7, 0x80, index);
}
std::string sizeUpdate(std::uint64_t size) {
  return integer(5, 0x20, size);
}

// The Huffman code of `s`, padded with ones; `then_eos` puts EOS after the last octet.
std::string huffman(std::string_view s, bool then_eos = false) {
  std::string out;
  std::uint64_t acc = 0;
  int nbits = 0;
  auto put = [&](const HuffmanCode& code) {
    acc = (acc << code.length) | code.bits;
    nbits += code.length;
    while (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((acc >> nbits) & 0xff));
    }
    acc &= (std::uint64_t{1} << nbits) - 1;
  };
  for (unsigned char c : s) {
    put(huffmanCodes()[c]);
  }
  if (then_eos) {
    put(huffmanCodes()[kHuffmanEos]);
  }
  if (nbits > 0) {
    const int pad = 8 - nbits;
    out.push_back(static_cast<char>(((acc << pad) | ((1u << pad) - 1)) & 0xff));
  }
  return out;
}

// A string literal as RFC 7541 5.2 frames it.
std::string literal(std::string_view s, bool use_huffman) {
  const std::string body = use_huffman ? huffman(s) : std::string(s);
  return integer(7, use_huffman ? 0x80 : 0, body.size()) + body;
}

// Literal with incremental indexing and a new name.
std::string indexedLiteral(std::string_view name, std::string_view value, bool use_huffman) {
  return "\x40" + literal(name, use_huffman) + literal(value, use_huffman);
}

Fields decodeOk(HpackDecoder& decoder, std::string_view block) {
  HeaderList out;
  std::string error;
  const bool ok = decoder.decode(block, out, error);
  CHECK(error.empty());
  REQUIRE(ok);
  return pairs(out);
}

std::string decodeError(HpackDecoder& decoder, std::string_view block) {
  HeaderList out = {HeaderField{"kept", "yes"}};
  std::string error;
  CHECK_FALSE(decoder.decode(block, out, error));
  CHECK(!error.empty());
  CHECK(error.find('\n') == std::string::npos);
  // Fields decoded before the bad one are not left behind.
  CHECK(pairs(out) == Fields{{"kept", "yes"}});
  return error;
}

// The dynamic table, newest first, as the decoder reads it back: copies of it decode indexed
// fields 62, 63, ... until one is past the table.
Fields dynamicTable(const HpackDecoder& decoder) {
  Fields entries;
  for (std::uint32_t index = 62; index < 62 + 1000; ++index) {
    HpackDecoder probe = decoder;
    HeaderList out;
    std::string error;
    if (!probe.decode(indexed(index), out, error)) {
      CHECK_THAT(error, Contains("past the table"));
      break;
    }
    REQUIRE(out.size() == 1);
    entries.emplace_back(out[0].name, out[0].value);
  }
  return entries;
}

std::size_t tableSize(const Fields& entries) {
  std::size_t size = 0;
  for (const auto& [name, value] : entries) {
    size += name.size() + value.size() + 32;
  }
  return size;
}

}  // namespace

TEST_CASE("hpack: the Huffman code is RFC 7541's canonical, complete code",
          "[runtime-proxy][hpack]") {
  const auto& codes = huffmanCodes();
  REQUIRE(codes.size() == 257);
  // Spot checks against Appendix B.
  CHECK(codes[0].bits == 0x1ff8);
  CHECK(codes[0].length == 13);
  CHECK(codes[' '].bits == 0x14);
  CHECK(codes[' '].length == 6);
  CHECK(codes['0'].bits == 0x0);
  CHECK(codes['0'].length == 5);
  CHECK(codes['a'].bits == 0x3);
  CHECK(codes['a'].length == 5);
  CHECK(codes[255].bits == 0x3ffffee);
  CHECK(codes[255].length == 26);
  CHECK(codes[kHuffmanEos].bits == 0x3fffffff);
  CHECK(codes[kHuffmanEos].length == 30);

  // Canonical: ordered by (length, symbol), each code is the previous one plus one, shifted
  // left by the growth in length. The decoder's length-by-length search depends on it.
  std::vector<int> order(codes.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = static_cast<int>(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return codes[a].length < codes[b].length; });
  std::uint32_t expected = codes[order[0]].bits;
  CHECK(expected == 0);
  for (std::size_t i = 1; i < order.size(); ++i) {
    const HuffmanCode& prev = codes[order[i - 1]];
    const HuffmanCode& code = codes[order[i]];
    expected = (expected + 1) << (code.length - prev.length);
    INFO("symbol " << order[i]);
    CHECK(code.bits == expected);
  }
  // Complete: the Kraft sum is exactly 1, so every bit pattern starts with some code.
  std::uint64_t kraft = 0;
  for (const HuffmanCode& code : codes) {
    REQUIRE(code.length >= 5);
    REQUIRE(code.length <= 30);
    CHECK(code.bits < (std::uint32_t{1} << code.length));
    kraft += std::uint64_t{1} << (30 - code.length);
  }
  CHECK(kraft == std::uint64_t{1} << 30);
}

TEST_CASE("hpack: Huffman strings of every octet and every padding length decode",
          "[runtime-proxy][hpack]") {
  std::string all;
  for (int c = 0; c < 256; ++c) {
    all.push_back(static_cast<char>(c));
  }
  std::string out;
  REQUIRE(huffmanDecode(huffman(all), out) == HuffmanResult::kOk);
  CHECK(out == all);

  for (int c = 0; c < 256; ++c) {
    const std::string s(3, static_cast<char>(c));
    std::string decoded = "prefix";
    INFO("octet " << c);
    REQUIRE(huffmanDecode(huffman(s), decoded) == HuffmanResult::kOk);
    CHECK(decoded == "prefix" + s);
  }
  // 'a' is 5 bits: 1..8 of them leave every padding length from 0 to 7.
  for (int n = 1; n <= 8; ++n) {
    const std::string s(static_cast<std::size_t>(n), 'a');
    const std::string code = huffman(s);
    CHECK(code.size() == (5 * static_cast<std::size_t>(n) + 7) / 8);
    std::string decoded;
    REQUIRE(huffmanDecode(code, decoded) == HuffmanResult::kOk);
    CHECK(decoded == s);
  }
  out.clear();
  CHECK(huffmanDecode("", out) == HuffmanResult::kOk);
  CHECK(out.empty());
}

TEST_CASE("hpack: RFC 7541 C.2 one field of each representation", "[runtime-proxy][hpack]") {
  HpackDecoder decoder;
  SECTION("C.2.1 literal with indexing") {
    CHECK(decodeOk(decoder, hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164"
                                "6572")) == Fields{{"custom-key", "custom-header"}});
    const Fields table = dynamicTable(decoder);
    CHECK(table == Fields{{"custom-key", "custom-header"}});
    CHECK(tableSize(table) == 55);
  }
  SECTION("C.2.2 literal without indexing") {
    CHECK(decodeOk(decoder, hex("040c 2f73 616d 706c 652f 7061 7468")) ==
          Fields{{":path", "/sample/path"}});
    CHECK(dynamicTable(decoder).empty());
  }
  SECTION("C.2.3 literal never indexed") {
    CHECK(decodeOk(decoder, hex("1008 7061 7373 776f 7264 0673 6563 7265 74")) ==
          Fields{{"password", "secret"}});
    CHECK(dynamicTable(decoder).empty());
  }
  SECTION("C.2.4 indexed") {
    CHECK(decodeOk(decoder, hex("82")) == Fields{{":method", "GET"}});
    CHECK(dynamicTable(decoder).empty());
  }
  SECTION("never indexed with an indexed name, and the last static entry") {
    CHECK(decodeOk(decoder, "\x1f\x08" + literal("secret", false) + "\xbd") ==
          Fields{{"authorization", "secret"}, {"www-authenticate", ""}});
    CHECK(dynamicTable(decoder).empty());
  }
}

namespace {

const Fields kRequest1 = {
    {":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {":authority", "www.example.com"}};
const Fields kRequest2 = {{":method", "GET"},
                          {":scheme", "http"},
                          {":path", "/"},
                          {":authority", "www.example.com"},
                          {"cache-control", "no-cache"}};
const Fields kRequest3 = {{":method", "GET"},
                          {":scheme", "https"},
                          {":path", "/index.html"},
                          {":authority", "www.example.com"},
                          {"custom-key", "custom-value"}};

void checkRequests(const std::string blocks[3]) {
  HpackDecoder decoder;
  CHECK(decodeOk(decoder, blocks[0]) == kRequest1);
  Fields table = dynamicTable(decoder);
  CHECK(table == Fields{{":authority", "www.example.com"}});
  CHECK(tableSize(table) == 57);

  // Request 2 reads :authority back from the dynamic table (index 62).
  CHECK(decodeOk(decoder, blocks[1]) == kRequest2);
  table = dynamicTable(decoder);
  CHECK(table == Fields{{"cache-control", "no-cache"}, {":authority", "www.example.com"}});
  CHECK(tableSize(table) == 110);

  // Request 3 reads :authority at 63, now that cache-control is newer.
  CHECK(decodeOk(decoder, blocks[2]) == kRequest3);
  table = dynamicTable(decoder);
  CHECK(table == Fields{{"custom-key", "custom-value"},
                        {"cache-control", "no-cache"},
                        {":authority", "www.example.com"}});
  CHECK(tableSize(table) == 164);
}

}  // namespace

TEST_CASE("hpack: RFC 7541 C.3 requests without Huffman", "[runtime-proxy][hpack]") {
  const std::string blocks[3] = {
      hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"),
      hex("8286 84be 5808 6e6f 2d63 6163 6865"),
      hex("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"),
  };
  checkRequests(blocks);
}

TEST_CASE("hpack: RFC 7541 C.4 requests with Huffman", "[runtime-proxy][hpack]") {
  const std::string blocks[3] = {
      hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"),
      hex("8286 84be 5886 a8eb 1064 9cbf"),
      hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"),
  };
  checkRequests(blocks);
}

namespace {

const Fields kResponse1 = {{":status", "302"},
                           {"cache-control", "private"},
                           {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                           {"location", "https://www.example.com"}};
const Fields kResponse2 = {{":status", "307"},
                           {"cache-control", "private"},
                           {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                           {"location", "https://www.example.com"}};
const Fields kResponse3 = {
    {":status", "200"},
    {"cache-control", "private"},
    {"date", "Mon, 21 Oct 2013 20:13:22 GMT"},
    {"location", "https://www.example.com"},
    {"content-encoding", "gzip"},
    {"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"}};

void checkResponses(const std::string blocks[3]) {
  HpackDecoder decoder(256);
  CHECK(decodeOk(decoder, blocks[0]) == kResponse1);
  Fields table = dynamicTable(decoder);
  CHECK(table == Fields{{"location", "https://www.example.com"},
                        {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                        {"cache-control", "private"},
                        {":status", "302"}});
  CHECK(tableSize(table) == 222);

  // ":status: 307" (42 octets) does not fit beside 222: ":status: 302" goes.
  CHECK(decodeOk(decoder, blocks[1]) == kResponse2);
  table = dynamicTable(decoder);
  CHECK(table == Fields{{":status", "307"},
                        {"location", "https://www.example.com"},
                        {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                        {"cache-control", "private"}});
  CHECK(tableSize(table) == 222);

  // Three insertions; the last (set-cookie, 98 octets) leaves only two older entries.
  CHECK(decodeOk(decoder, blocks[2]) == kResponse3);
  table = dynamicTable(decoder);
  CHECK(table == Fields{{"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"},
                        {"content-encoding", "gzip"},
                        {"date", "Mon, 21 Oct 2013 20:13:22 GMT"}});
  CHECK(tableSize(table) == 215);
}

}  // namespace

TEST_CASE("hpack: RFC 7541 C.5 responses without Huffman, 256-octet table",
          "[runtime-proxy][hpack]") {
  const std::string blocks[3] = {
      hex("4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133"
          "2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70"
          "6c65 2e63 6f6d"),
      hex("4803 3330 37c1 c0bf"),
      hex("88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d"
          "54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049"
          "5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e"
          "3d31"),
  };
  checkResponses(blocks);
}

TEST_CASE("hpack: RFC 7541 C.6 responses with Huffman, 256-octet table", "[runtime-proxy][hpack]") {
  const std::string blocks[3] = {
      hex("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6"
          "2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3"),
      hex("4883 640e ffc1 c0bf"),
      hex("88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab"
          "77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f"
          "9587 3160 65c0 03ed 4ee5 b106 3d50 07"),
  };
  checkResponses(blocks);
}

TEST_CASE("hpack: dynamic table size updates", "[runtime-proxy][hpack]") {
  HpackDecoder decoder;
  decodeOk(decoder, indexedLiteral("a", "1", false) + indexedLiteral("b", "2", false) +
                        indexedLiteral("c", "3", true));
  REQUIRE(dynamicTable(decoder) == Fields{{"c", "3"}, {"b", "2"}, {"a", "1"}});

  SECTION("shrinking evicts the oldest entries first") {
    CHECK(decodeOk(decoder, sizeUpdate(2 * 34) + "\xbe") == Fields{{"c", "3"}});
    CHECK(dynamicTable(decoder) == Fields{{"c", "3"}, {"b", "2"}});
    // The table keeps its smaller size: a third entry pushes out the oldest.
    decodeOk(decoder, indexedLiteral("d", "4", false));
    CHECK(dynamicTable(decoder) == Fields{{"d", "4"}, {"c", "3"}});
  }
  SECTION("size 0 empties the table, and two updates may open a block") {
    CHECK(decodeOk(decoder, sizeUpdate(0) + sizeUpdate(4096) + "\x82") ==
          Fields{{":method", "GET"}});
    CHECK(dynamicTable(decoder).empty());
  }
  SECTION("an update alone is a complete block") {
    CHECK(decodeOk(decoder, sizeUpdate(34)).empty());
    CHECK(dynamicTable(decoder) == Fields{{"c", "3"}});
  }
  SECTION("the RFC's 1337 in a 5-bit prefix (C.1.2) is read as 1337") {
    CHECK(sizeUpdate(1337) == hex("3f9a 0a"));
    decoder.setTableSizeLimit(1336);
    CHECK_THAT(decodeError(decoder, hex("3f9a 0a")),
               Contains("update to 1337 above the limit 1336"));
  }
  SECTION("a lower SETTINGS_HEADER_TABLE_SIZE requires an update in the next block") {
    decoder.setTableSizeLimit(1000);
    CHECK_THAT(decodeError(decoder, "\x82"), Contains("at most 1000"));
  }
  SECTION("the required update must go down to the lowest limit set since the last block") {
    decoder.setTableSizeLimit(50);
    decoder.setTableSizeLimit(1000);
    CHECK_THAT(decodeError(decoder, sizeUpdate(1000) + "\x82"), Contains("at most 50"));
  }
  SECTION("a lower limit is met by updates down to it and back up") {
    decoder.setTableSizeLimit(50);
    decoder.setTableSizeLimit(1000);
    CHECK(decodeOk(decoder, sizeUpdate(40) + sizeUpdate(1000) + "\x82") ==
          Fields{{":method", "GET"}});
    CHECK(dynamicTable(decoder) == Fields{{"c", "3"}});
    // Later blocks need no update.
    CHECK(decodeOk(decoder, "\xbe") == Fields{{"c", "3"}});
  }
  SECTION("a higher limit requires nothing and lets the encoder grow the table") {
    decoder.setTableSizeLimit(8192);
    CHECK(decodeOk(decoder, "\xbe") == Fields{{"c", "3"}});
    CHECK(decodeOk(decoder, sizeUpdate(8192)).empty());
    CHECK_THAT(decodeError(decoder, sizeUpdate(8193)), Contains("above the limit 8192"));
  }
}

TEST_CASE("hpack: an entry larger than the table empties it", "[runtime-proxy][hpack]") {
  HpackDecoder decoder(100);
  decodeOk(decoder, indexedLiteral("a", "1", false));
  REQUIRE(dynamicTable(decoder) == Fields{{"a", "1"}});
  const std::string big(100 - 32, 'x');  // 1 + 68 + 32 = 101 octets
  CHECK(decodeOk(decoder, indexedLiteral("b", big, false)) == Fields{{"b", big}});
  CHECK(dynamicTable(decoder).empty());
  // Exactly the table's size fits.
  const std::string fits(100 - 32 - 1, 'y');
  decodeOk(decoder, indexedLiteral("c", fits, false));
  CHECK(dynamicTable(decoder) == Fields{{"c", fits}});
}

TEST_CASE("hpack: a new entry may take its name from the entry it evicts",
          "[runtime-proxy][hpack]") {
  HpackDecoder decoder(60);
  decodeOk(decoder, indexedLiteral("name", "old", false));  // 39 octets
  // Literal with indexing, name index 62: inserting it evicts entry 62 itself (RFC 7541 4.4).
  CHECK(decodeOk(decoder, "\x7e" + literal("new", false)) == Fields{{"name", "new"}});
  CHECK(dynamicTable(decoder) == Fields{{"name", "new"}});
}

TEST_CASE("hpack: a long run of insertions keeps the newest entries in order",
          "[runtime-proxy][hpack]") {
  HpackDecoder decoder(10 * 34);
  for (int i = 0; i < 1000; ++i) {
    decodeOk(decoder, indexedLiteral("k", std::to_string(i % 10), false));
  }
  Fields expected;
  for (int i = 999; i >= 990; --i) {
    expected.emplace_back("k", std::to_string(i % 10));
  }
  CHECK(dynamicTable(decoder) == expected);
}

TEST_CASE("hpack: a typical gRPC request, first with literals then indexed",
          "[runtime-proxy][hpack]") {
  const Fields request = {{":method", "POST"},
                          {":scheme", "http"},
                          {":path", "/runtime.v1.RuntimeService/ListContainers"},
                          {":authority", "localhost"},
                          {"content-type", "application/grpc"},
                          {"user-agent", "grpc-go/1.40.0"},
                          {"te", "trailers"},
                          {"grpc-timeout", "1999m"}};
  // As grpc-go's encoder sends it: static names where there are any, Huffman, indexing.
  std::string first = "\x83\x86";
  first += "\x44" + literal(request[2].second, true);
  first += "\x41" + literal(request[3].second, true);
  first += "\x5f" + literal(request[4].second, true);
  first += "\x7a" + literal(request[5].second, true);
  first += indexedLiteral("te", "trailers", true);
  first += indexedLiteral("grpc-timeout", "1999m", true);
  HpackDecoder decoder;
  CHECK(decodeOk(decoder, first) == request);
  CHECK(dynamicTable(decoder).size() == 6);
  // The second request: every field indexed (newest entry first at 62).
  CHECK(decodeOk(decoder, hex("8386 c3c2 c1c0 bfbe")) == request);
  CHECK(dynamicTable(decoder).size() == 6);
}

TEST_CASE("hpack: decodeReplacing writes over the list it is given, and follows the table",
          "[runtime-proxy][hpack]") {
  HpackDecoder decoder;
  HeaderList fields = {{"stale", "a value from an earlier block that must not survive"},
                       {"x", "y"},
                       {"z", "w"},
                       {"u", "v"},
                       {"more", "than the next block has"}};
  std::string error;
  // RFC 7541 C.3's first request: four fields, one of them inserted into the table.
  REQUIRE(decoder.decodeReplacing(hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"), fields,
                                  error));
  CHECK(pairs(fields) == kRequest1);
  // The second reads :authority back from the table; the list grows to five fields.
  REQUIRE(decoder.decodeReplacing(hex("8286 84be 5808 6e6f 2d63 6163 6865"), fields, error));
  CHECK(pairs(fields) == kRequest2);
  // A shorter block leaves no field of the longer one behind.
  REQUIRE(decoder.decodeReplacing(hex("82"), fields, error));
  CHECK(pairs(fields) == Fields{{":method", "GET"}});
  CHECK(dynamicTable(decoder) ==
        Fields{{"cache-control", "no-cache"}, {":authority", "www.example.com"}});
  // A malformed block empties the list, and the decoder refuses what comes after.
  CHECK_FALSE(decoder.decodeReplacing("\xff", fields, error));
  CHECK_THAT(error, Contains("integer truncated"));
  CHECK(fields.empty());
  fields = {{"kept", "no"}};
  CHECK_FALSE(decoder.decodeReplacing(hex("82"), fields, error));
  CHECK_THAT(error, Contains("failed on an earlier block"));
  CHECK(fields.empty());
}

TEST_CASE("hpack: hpackEncode round trips through the decoder and leaves its table alone",
          "[runtime-proxy][hpack]") {
  std::string every_octet;
  for (int c = 0; c < 256; ++c) {
    every_octet.push_back(static_cast<char>(c));
  }
  HeaderList headers = {
      {":method", "POST"},
      {"empty", ""},
      {"every-octet", every_octet},
      {std::string("na\0me", 5), std::string("va\0lue", 6)},
      {"", "empty name"},
      {std::string(126, 'a'), std::string(127, 'b')},
      {std::string(128, 'c'), std::string(70000, 'd')},
  };
  for (int c = 0; c < 256; ++c) {
    headers.push_back({"octet-" + std::to_string(c), std::string(1, static_cast<char>(c))});
  }
  std::string block = "keep";
  hpackEncode(headers, block);
  REQUIRE(block.substr(0, 4) == "keep");
  block.erase(0, 4);

  HpackDecoder decoder;
  HeaderList out;
  std::string error;
  REQUIRE(decoder.decode(block, out, error));
  CHECK(error.empty());
  CHECK(pairs(out) == pairs(headers));
  CHECK(dynamicTable(decoder).empty());
}

TEST_CASE("hpack: hpackEncode's exact bytes", "[runtime-proxy][hpack]") {
  std::string out;
  hpackEncode({}, out);
  CHECK(out.empty());
  // Literal without indexing, new name, raw strings: 0x00, length, octets, length, octets.
  hpackEncode({{"a", "b"}, {"te", ""}}, out);
  CHECK(out == std::string("\x00\x01"
                           "a\x01"
                           "b\x00\x02te\x00",
                           10));
  // Lengths of 127 and more continue the 7-bit prefix (RFC 7541 5.1).
  out.clear();
  hpackEncode({{"x", std::string(127, 'v')}}, out);
  CHECK(out.substr(0, 5) == std::string("\x00\x01x\x7f\x00", 5));
  CHECK(out.size() == 5 + 127);
  out.clear();
  hpackEncode({{"x", std::string(1337 + 127, 'v')}}, out);
  CHECK(out.substr(0, 6) == std::string("\x00\x01x\x7f\xb9\x0a", 6));
}

TEST_CASE("hpack: malformed blocks fail with a COMPRESSION_ERROR", "[runtime-proxy][hpack]") {
  HpackDecoder decoder;
  SECTION("truncated integer") {
    CHECK_THAT(decodeError(decoder, "\xff"), Contains("integer truncated"));
  }
  SECTION("truncated integer inside its continuation") {
    CHECK_THAT(decodeError(decoder, "\x82\xff\x80"), Contains("integer truncated"));
  }
  SECTION("integer past 32 bits") {
    CHECK_THAT(decodeError(decoder, hex("ffff ffff ff0f")), Contains("does not fit in 32 bits"));
  }
  SECTION("integer of exactly 2^32") {
    decoder.setTableSizeLimit(std::numeric_limits<std::size_t>::max());
    CHECK_THAT(decodeError(decoder, sizeUpdate(std::uint64_t{1} << 32)),
               Contains("does not fit in 32 bits"));
  }
  SECTION("integer padded with too many continuation octets") {
    CHECK_THAT(decodeError(decoder, hex("ff80 8080 8080 00")), Contains("longer than"));
  }
  SECTION("index 0") {
    CHECK_THAT(decodeError(decoder, "\x82\x80"), Contains("index 0"));
  }
  SECTION("index past the static table with an empty dynamic table") {
    CHECK_THAT(decodeError(decoder, "\xbe"), Contains("index 62 past the table"));
  }
  SECTION("index past the dynamic table") {
    decodeOk(decoder, indexedLiteral("a", "1", false));
    CHECK_THAT(decodeError(decoder, "\xbe\xbf"), Contains("index 63 past the table"));
  }
  SECTION("literal name index past the table") {
    CHECK_THAT(decodeError(decoder, "\x7f\x00"s + literal("v", false)),
               Contains("index 63 past the table"));
  }
  SECTION("a huge index") {
    CHECK_THAT(decodeError(decoder, indexed(0xffffffffu)), Contains("index 4294967295 past"));
  }
  SECTION("size update above the limit") {
    CHECK_THAT(decodeError(decoder, sizeUpdate(4097)), Contains("above the limit 4096"));
  }
  SECTION("size update after a field") {
    CHECK_THAT(decodeError(decoder, "\x82" + sizeUpdate(0)), Contains("after a header field"));
  }
  SECTION("Huffman string that is EOS") {
    CHECK_THAT(decodeError(decoder,
                           "\x00\x01"
                           "a\x84"s +
                               hex("ffff ffff")),
               Contains("EOS"));
  }
  SECTION("Huffman EOS after an octet") {
    const std::string value = huffman("a", true);
    REQUIRE(value.size() == 5);
    CHECK_THAT(decodeError(decoder,
                           "\x00\x01"
                           "a"s +
                               integer(7, 0x80, value.size()) + value),
               Contains("EOS"));
  }
  SECTION("Huffman padding that is not all ones") {
    REQUIRE(huffman("a") == "\x1f");
    CHECK_THAT(decodeError(decoder, "\x00\x81\x1f\x81\x18"s), Contains("padding"));
  }
  SECTION("Huffman padding longer than 7 bits") {
    CHECK_THAT(decodeError(decoder, "\x00\x81\x1f\x82\x1f\xff"s), Contains("padding"));
  }
  SECTION("Huffman padding of a whole octet alone") {
    CHECK_THAT(decodeError(decoder, "\x00\x81\x1f\x81\xff"s), Contains("padding"));
  }
  SECTION("string length past the block end") {
    CHECK_THAT(decodeError(decoder,
                           "\x82\x00\x05"
                           "ab"s),
               Contains("string length 5 past"));
  }
  SECTION("Huffman string length past the block end") {
    CHECK_THAT(decodeError(decoder, "\x40\x81\x1f\x85\x1f"), Contains("string length 5 past"));
  }
  SECTION("block ends before the value") {
    CHECK_THAT(decodeError(decoder,
                           "\x00\x01"
                           "a"s),
               Contains("string literal should start"));
  }
  // Whatever failed, the connection is gone: the decoder refuses even a good block.
  HeaderList out;
  std::string error;
  CHECK_FALSE(decoder.decode("\x82", out, error));
  CHECK(out.empty());
  CHECK_THAT(error, Contains("already failed"));
}

TEST_CASE("hpack: a valid Huffman field next to the malformed ones decodes",
          "[runtime-proxy][hpack]") {
  // The same shapes as the padding cases above, done right, so those fail for their reason.
  HpackDecoder decoder;
  CHECK(decodeOk(decoder, "\x00\x81\x1f\x81\x1f"s) == Fields{{"a", "a"}});
  CHECK(decodeOk(decoder, "\x00\x81\x1f\x80"s) == Fields{{"a", ""}});
  CHECK(decodeOk(decoder, std::string("\x00\x00\x00", 3)) == Fields{{"", ""}});
}

TEST_CASE("hpack: a header list past the limits stops decoding (an HPACK bomb)",
          "[runtime-proxy][hpack]") {
  // One 4 KB entry, then one-octet references to it: 8 KB of block, 16 MB of header list.
  const std::string entry = indexedLiteral("x-bomb", std::string(4000, 'a'), false);
  std::string bomb = entry;
  for (int i = 0; i < 4000; ++i) {
    bomb += indexed(62);
  }
  HpackDecoder decoder;
  CHECK_THAT(decodeError(decoder, bomb), Contains("SETTINGS_MAX_HEADER_LIST_SIZE"));
  CHECK(decoder.overLimit());

  // A list just under the limit decodes; the limit counts 32 per field, as SETTINGS does.
  HpackDecoder small(4096, 3 * (6 + 4000 + 32));
  CHECK(decodeOk(small, entry + indexed(62) + indexed(62)).size() == 3);
  HpackDecoder over(4096, 3 * (6 + 4000 + 32) - 1);
  CHECK_THAT(decodeError(over, entry + indexed(62) + indexed(62)), Contains("past"));

  // Many small fields: the count is bounded too.
  std::string many;
  for (std::size_t i = 0; i < kMaxHeaderFields + 1; ++i) {
    many += indexed(2);  // :method GET
  }
  HpackDecoder counted;
  CHECK_THAT(decodeError(counted, many), Contains("fields"));
  CHECK(counted.overLimit());
  // decodeReplacing follows the same limits.
  HpackDecoder replacing;
  HeaderList out;
  std::string error;
  CHECK_FALSE(replacing.decodeReplacing(bomb, out, error));
  CHECK(out.empty());
}
