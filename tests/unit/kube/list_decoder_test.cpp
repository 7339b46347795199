// koord::kube::ListDecoder: a list response decoded item by item, whatever its chunking.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "koord/kube/json_limits.h"
#include "koord/kube/list_decoder.h"

namespace json = boost::json;
using koord::kube::ListDecoder;

namespace {

const std::string kList =
    R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"812","continue":"abc",)"
    R"("remainingItemCount":3},"items":[{"metadata":{"name":"a","labels":{"x":"1"}},)"
    R"("spec":{"containers":[{"name":"c","args":["--v=\u00e9\"q\"",2,3.5,true,null]}]}},)"
    R"({"metadata":{"name":"b"},"n":18446744073709551615,"e":[],"o":{}}]})";

struct Collected {
  std::vector<std::string> items;  // serialized
  std::string metadata;
  std::string error;
  bool ok = true;
};

Collected decodeInChunks(const std::string& body, std::size_t chunk) {
  Collected c;
  ListDecoder d([&](const json::value& item) {
    c.items.push_back(json::serialize(item));
    return true;
  });
  for (std::size_t at = 0; at < body.size() && c.ok; at += chunk)
    c.ok = d.feed(std::string_view(body).substr(at, chunk), c.error);
  if (c.ok)
    c.ok = d.finish(c.error);
  c.metadata = json::serialize(d.metadata());
  return c;
}

}  // namespace

TEST_CASE("ListDecoder hands over items and keeps metadata, at every chunking", "[kube]") {
  auto whole = json::parse(kList);
  std::vector<std::string> want;
  for (const auto& item : whole.at("items").as_array())
    want.push_back(json::serialize(item));
  const std::string want_md = json::serialize(whole.at("metadata"));
  for (std::size_t chunk : {std::size_t{1}, std::size_t{2}, std::size_t{7}, kList.size()}) {
    INFO("chunk size " << chunk);
    auto c = decodeInChunks(kList, chunk);
    REQUIRE(c.ok);
    CHECK(c.items == want);
    CHECK(c.metadata == want_md);
  }
}

TEST_CASE("ListDecoder takes metadata after the items and unknown members", "[kube]") {
  auto c = decodeInChunks(
      R"({"items":[{"metadata":{"name":"a"}}],"extra":{"items":[1]},"metadata":{"resourceVersion":"9"}})",
      3);
  REQUIRE(c.ok);
  CHECK(c.items.size() == 1);
  CHECK(c.metadata == R"({"resourceVersion":"9"})");
}

TEST_CASE("ListDecoder accepts empty and null items", "[kube]") {
  auto empty = decodeInChunks(R"({"metadata":{},"items":[]})", 4);
  REQUIRE(empty.ok);
  CHECK(empty.items.empty());
  auto null = decodeInChunks(R"({"metadata":{},"items":null})", 4);
  REQUIRE(null.ok);
  CHECK(null.items.empty());
}

TEST_CASE("ListDecoder refuses malformed lists with a reason", "[kube]") {
  auto scalar_item = decodeInChunks(R"({"items":[{"a":1},"oops"]})", 5);
  CHECK_FALSE(scalar_item.ok);
  CHECK_THAT(scalar_item.error, Catch::Contains("items[1] is not an object"));
  CHECK(scalar_item.items.size() == 1);

  auto truncated = decodeInChunks(R"({"items":[{"a":1})", 5);
  CHECK_FALSE(truncated.ok);

  auto not_object = decodeInChunks(R"([{"a":1}])", 5);
  CHECK_FALSE(not_object.ok);
  CHECK_THAT(not_object.error, Catch::Contains("not a JSON object"));

  auto garbage = decodeInChunks(R"({"items":[{"a":tru}]})", 5);
  CHECK_FALSE(garbage.ok);
  CHECK_THAT(garbage.error, Catch::Contains("not valid JSON"));

  auto trailing = decodeInChunks(R"({"items":[]} {})", 5);
  CHECK_FALSE(trailing.ok);

  // items of another shape is not an empty list (a caller would take it for "no pods").
  for (const char* body : {R"({"items":3})", R"({"items":"x"})", R"({"items":{"a":1}})",
                           R"({"items":true,"metadata":{}})"}) {
    INFO(body);
    auto wrong = decodeInChunks(body, 3);
    CHECK_FALSE(wrong.ok);
    CHECK_THAT(wrong.error, Catch::Contains("items is not an array"));
  }
  auto other_scalars = decodeInChunks(R"({"kind":"PodList","n":3,"o":{"items":1},"items":[]})", 3);
  CHECK(other_scalars.ok);
}

TEST_CASE("ListDecoder stops when the consumer says so", "[kube]") {
  int seen = 0;
  ListDecoder d([&](const json::value&) { return ++seen < 2; });
  std::string error;
  CHECK_FALSE(d.feed(R"({"items":[{},{},{}]})", error));
  CHECK(seen == 2);
  CHECK_THAT(error, Catch::Contains("stopped"));
  CHECK_FALSE(d.feed("x", error));
}

TEST_CASE("ListDecoder handles items larger than its inline arena", "[kube]") {
  std::string big(200000, 'x');
  std::string body = R"({"items":[{"big":")" + big + R"("},{"small":1}]})";
  auto c = decodeInChunks(body, 4096);
  REQUIRE(c.ok);
  REQUIRE(c.items.size() == 2);
  CHECK(c.items[0].size() == big.size() + 10);
  CHECK(c.items[1] == R"({"small":1})");
}

TEST_CASE("ListDecoder takes an item nested as deep as Go decodes", "[kube]") {
  // Boost.JSON's default depth (32) refused the whole list, and the informer relisted for good.
  std::string open, close;
  for (std::size_t i = 4; i < koord::kube::kMaxApiObjectDepth; ++i) {  // list, items, item, status
    open += (i % 2) != 0u ? "[" : R"({"a":)";
    close.insert(0, (i % 2) != 0u ? "]" : "}");
  }
  std::string body = R"({"items":[{"metadata":{"name":"deep"},"status":)" + open + "1" + close +
                     R"(},{"metadata":{"name":"next"}}]})";
  std::vector<std::string> names;
  ListDecoder d([&](const json::value& item) {
    names.emplace_back(item.at("metadata").at("name").as_string());
    return true;
  });
  std::string error;
  REQUIRE(d.feed(body, error));
  REQUIRE(d.finish(error));
  CHECK(names == std::vector<std::string>{"deep", "next"});
}
