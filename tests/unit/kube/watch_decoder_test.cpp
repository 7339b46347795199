#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "koord/kube/json_limits.h"
#include "koord/kube/watch.h"

namespace json = boost::json;
using namespace koord::kube;

namespace {

std::vector<WatchEvent> decodeAll(const std::string& body, const std::vector<std::size_t>& cuts,
                                  std::size_t limit = 1 << 20) {
  WatchDecoder d(limit);
  std::vector<WatchEvent> out;
  std::vector<std::string> skipped;
  auto sink = [&](WatchEvent e) { out.push_back(std::move(e)); };
  auto skip = [&](std::string_view why) { skipped.emplace_back(why); };
  std::size_t pos = 0;
  for (std::size_t cut : cuts) {
    d.feed(std::string_view(body).substr(pos, cut - pos), sink, skip);
    pos = cut;
  }
  d.feed(std::string_view(body).substr(pos), sink, skip);
  CHECK(skipped.empty());
  CHECK(d.pending() == 0);
  return out;
}

// A NodeMetric whose schema-free status.devices entry nests `depth` levels in all.
std::string deepNodeMetricEvent(std::size_t depth) {
  std::string head = R"({"type":"MODIFIED","object":{"apiVersion":"slo.koordinator.sh/v1alpha1",)"
                     R"("kind":"NodeMetric","metadata":{"name":"node-a","resourceVersion":"7"},)"
                     R"("status":{"devices":[{"x":)";
  constexpr std::size_t kOpened = 5;  // event, object, status, devices, the entry
  std::string open, close;
  for (std::size_t i = kOpened; i < depth; ++i) {
    open += (i % 2) != 0u ? "[" : R"({"a":)";
    close.insert(0, (i % 2) != 0u ? "]" : "}");
  }
  return head + open + "1" + close + "}]}}}\n";
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

TEST_CASE("watch decoder: skips an oversized, a malformed and an unknown event, then goes on",
          "[kube][watch]") {
  std::string big = "{\"type\":\"ADDED\",\"object\":{\"x\":\"" + std::string(100, 'x') + "\"}}\n";
  const std::string body = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n" +
                           big +
                           "{\"type\":\"ADDED\",\"obj\n"
                           "{\"type\":\"NOPE\",\"object\":{}}\n"
                           "[1,2]\n"
                           "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n";
  // Every chunking gives the same answer, and the oversized line never sits in the buffer.
  for (std::size_t step : {body.size(), std::size_t{1}, std::size_t{7}, std::size_t{64}}) {
    WatchDecoder d(96);
    std::vector<WatchEvent> events;
    std::vector<std::string> skipped;
    for (std::size_t at = 0; at < body.size(); at += step) {
      d.feed(
          std::string_view(body).substr(at, step),
          [&](WatchEvent e) { events.push_back(std::move(e)); },
          [&](std::string_view why) { skipped.emplace_back(why); });
      CHECK(d.pending() <= 96);
    }
    REQUIRE(events.size() == 2);
    CHECK(events[0].type == WatchEventType::kAdded);
    CHECK(events[1].type == WatchEventType::kDeleted);
    REQUIRE(skipped.size() == 4);
    CHECK_THAT(skipped[0], Catch::Contains("larger than 96 bytes"));
    CHECK_THAT(skipped[1], Catch::Contains("not a JSON object"));
    CHECK_THAT(skipped[2], Catch::Contains("no known type"));
    CHECK_THAT(skipped[3], Catch::Contains("wrong type"));
    CHECK(d.pending() == 0);
  }
}

TEST_CASE("watch decoder: an object nested as deep as Go decodes is an event", "[kube][watch]") {
  // Boost.JSON's default limit was 32: this NodeMetric (which the API server stores) was refused
  // and the watch retried the same resourceVersion for good.
  auto ev = decodeAll(deepNodeMetricEvent(kMaxApiObjectDepth), {});
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].object.at("metadata").at("name").as_string() == "node-a");
  // One level past it is one skipped event, not a crash or a stalled stream.
  WatchDecoder d;
  std::size_t events = 0, skipped = 0;
  d.feed(
      deepNodeMetricEvent(kMaxApiObjectDepth + 1) + deepNodeMetricEvent(64),
      [&](WatchEvent) { ++events; }, [&](std::string_view) { ++skipped; });
  CHECK(events == 1);
  CHECK(skipped == 1);
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
