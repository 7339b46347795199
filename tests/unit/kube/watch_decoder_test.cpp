#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "koord/kube/watch.h"

namespace json = boost::json;
using namespace koord::kube;

namespace {

std::vector<WatchEvent> decodeAll(const std::string& body, const std::vector<std::size_t>& cuts,
                                  std::size_t limit = 1 << 20) {
  WatchDecoder d(limit);
  std::vector<WatchEvent> out;
  std::string err;
  std::size_t pos = 0;
  for (std::size_t cut : cuts) {
    REQUIRE(d.feed(
        std::string_view(body).substr(pos, cut - pos),
        [&](WatchEvent e) { out.push_back(std::move(e)); }, err));
    pos = cut;
  }
  REQUIRE(d.feed(
      std::string_view(body).substr(pos), [&](WatchEvent e) { out.push_back(e); }, err));
  CHECK(d.pending() == 0);
  return out;
}

const std::string kBody =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"\xc3\xa9\xe2\x82\xac\","
    "\"resourceVersion\":\"2\"}}}\n"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"3\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"4\"}}}\n";

void checkEvents(const std::vector<WatchEvent>& ev) {
  REQUIRE(ev.size() == 4);
  CHECK(ev[0].type == WatchEventType::kAdded);
  CHECK(ev[1].type == WatchEventType::kModified);
  CHECK(ev[1].object.at("metadata").at("name").as_string() == "\xc3\xa9\xe2\x82\xac");
  CHECK(ev[2].type == WatchEventType::kBookmark);
  CHECK(ev[3].type == WatchEventType::kDeleted);
  CHECK(ev[3].object.at("metadata").at("resourceVersion").as_string() == "4");
}

}  // namespace

TEST_CASE("watch decoder: all events in one chunk", "[kube][watch]") {
  checkEvents(decodeAll(kBody, {}));
}

TEST_CASE("watch decoder: one byte at a time, splitting UTF-8 sequences", "[kube][watch]") {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < kBody.size(); ++i)
    cuts.push_back(i);
  checkEvents(decodeAll(kBody, cuts));
}

TEST_CASE("watch decoder: every two-piece split", "[kube][watch]") {
  for (std::size_t i = 0; i <= kBody.size(); ++i)
    checkEvents(decodeAll(kBody, {i}));
}

TEST_CASE("watch decoder: refuses an oversized event and a malformed one", "[kube][watch]") {
  std::string err;
  WatchDecoder small(64);
  std::string big = "{\"type\":\"ADDED\",\"object\":{\"x\":\"" + std::string(100, 'x') + "\"}}\n";
  // Refused before the newline arrives: the buffer must not grow past the limit.
  CHECK_FALSE(small.feed(
      big.substr(0, 80), [](WatchEvent) {}, err));
  CHECK(err.find("larger") != std::string::npos);

  WatchDecoder d;
  err.clear();
  CHECK_FALSE(d.feed(
      "{\"type\":\"ADDED\",\"obj\n", [](WatchEvent) {}, err));
  CHECK_FALSE(err.empty());
  WatchDecoder d2;
  err.clear();
  CHECK_FALSE(d2.feed(
      "{\"type\":\"NOPE\",\"object\":{}}\n", [](WatchEvent) {}, err));
}

TEST_CASE("watch backoff: 0.8 s doubling to 30 s with bounded jitter, reset", "[kube][watch]") {
  WatchBackoff b(42);
  std::vector<std::int64_t> bases = {800, 1600, 3200, 6400, 12800, 25600, 30000, 30000};
  for (auto base : bases) {
    auto d = b.next().count();
    CHECK(d >= base);
    CHECK(d <= std::min<std::int64_t>(base * 12 / 10, 30000));
  }
  b.reset();
  auto d = b.next().count();
  CHECK(d >= 800);
  CHECK(d < 960);
  // Same seed, same sequence: tests (and reproductions) are deterministic.
  WatchBackoff x(7), y(7);
  for (int i = 0; i < 5; ++i)
    CHECK(x.next() == y.next());
}
