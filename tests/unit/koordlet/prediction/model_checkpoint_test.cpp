// The predictor's checkpoint files: what is written comes back equal; corrupt, oversized,
// mismatched or other-version files are refused with the reason; the store leaves foreign files
// alone and clears interrupted writes.
#include "prediction/model_checkpoint.h"

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "temp_tree.h"

using namespace koord::roles::koordlet::prediction;
using koord::testing::TempTree;
using namespace std::chrono_literals;

namespace {

const TimePoint kT0 = TimePoint(std::chrono::milliseconds(1'700'000'000'123));

ModelCheckpoint sample(std::string key) {
  ModelCheckpoint c;
  c.key = std::move(key);
  c.last_updated = kT0;
  c.cpu.reference_time = kT0 - 6h;
  c.cpu.total_weight = 37.25;
  c.cpu.buckets = {{0, 12}, {40, 10000}, {157, 3}};
  c.memory.reference_time = kT0 - 12h;
  c.memory.total_weight = 1.5e33;
  c.memory.buckets = {{60, 10000}};
  return c;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("prediction checkpoint: encode and decode round trip", "[prediction][checkpoint]") {
  for (const auto& c : {sample("6f1f5f4c-7a1e-4d0b-9d36-1b2c3d4e5f60"), sample("__node__"),
                        sample("__node-koord-prod__"), sample("__node-__")}) {
    INFO(c.key);
    std::string bytes = encodeModelCheckpoint(c);
    CHECK(bytes.size() < 2048);
    auto decoded = decodeModelCheckpoint(bytes);
    REQUIRE(decoded);
    CHECK(*decoded == c);
  }
  // A model that never took a sample has no reference time and no buckets.
  ModelCheckpoint empty;
  empty.key = "sys";
  empty.last_updated = kT0;
  auto decoded = decodeModelCheckpoint(encodeModelCheckpoint(empty));
  REQUIRE(decoded);
  CHECK(*decoded == empty);
}

TEST_CASE("prediction checkpoint: bad bytes are refused with the reason",
          "[prediction][checkpoint]") {
  const std::string good = encodeModelCheckpoint(sample("pod-a"));
  REQUIRE(decodeModelCheckpoint(good));
  struct Row {
    std::string what;
    std::string bytes;
    std::string error;
  };
  const std::vector<Row> rows = {
      {"oversized", std::string(kMaxModelCheckpointBytes + 1, ' '), "over the"},
      {"not JSON", good.substr(0, good.size() / 2), "not JSON"},
      {"not an object", "[1,2]", "not a JSON object"},
      {"no version", replaced(good, "\"version\":1,", ""), "version: missing"},
      {"old version", replaced(good, "\"version\":1", "\"version\":0"), "version 0 is not 1"},
      {"newer version", replaced(good, "\"version\":1", "\"version\":2"), "version 2 is not 1"},
      {"key with a slash", replaced(good, "\"pod-a\"", "\"../etc\""), "key"},
      {"key starting with a dot", replaced(good, "\"pod-a\"", "\".hidden\""), "key"},
      {"other cpu layout", replaced(good, "\"layout\":158", "\"layout\":157"), "cpu.layout"},
      {"bucket past the layout", replaced(good, "[157,3]", "[158,3]"), "beyond the layout"},
      {"negative bucket", replaced(good, "[157,3]", "[-1,3]"), "unsigned"},
      {"weight too large", replaced(good, "[157,3]", "[157,10001]"), "is not in"},
      {"pair of three", replaced(good, "[157,3]", "[157,3,4]"), "pair"},
      {"time as text", replaced(good, "\"lastUpdated\":", "\"lastUpdated\":\"x\",\"y\":"),
       "lastUpdated"},
      {"missing memory", replaced(good, "\"memory\":", "\"memori\":"), "memory: missing"},
      {"total weight as a number",
       replaced(good, "\"totalWeight\":\"", "\"totalWeight\":1,\"x\":\""),
       "totalWeight: missing or not a string"},
      {"total weight not a number", replaced(good, "\"totalWeight\":\"", "\"totalWeight\":\"x"),
       "is not a number"},
      {"deep nesting", "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", "not JSON"},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    auto decoded = decodeModelCheckpoint(row.bytes);
    REQUIRE_FALSE(decoded);
    CHECK_THAT(decoded.error().message, Catch::Contains(row.error));
  }
}

TEST_CASE("prediction checkpoint: the store saves, lists, refuses and removes",
          "[prediction][checkpoint]") {
  TempTree tree("koord-prediction");
  const auto dir = tree.path("ckpt");
  ModelCheckpointStore store(dir);

  // Nothing written yet: the directory does not exist.
  LoadedCheckpoints none = store.loadAll();
  CHECK(none.missing);
  CHECK(none.checkpoints.empty());

  REQUIRE(store.save(sample("pod-a")));
  REQUIRE(store.save(sample("__node-sys__")));
  CHECK(std::filesystem::exists(dir / "pod-a.ckpt"));
  CHECK_FALSE(store.save(sample("a/b")));

  tree.write("ckpt/.pod-a.ckpt.tmp.AbC123", "half a wri");
  tree.write("ckpt/README", "not ours");
  tree.write("ckpt/broken.ckpt", "{\"version\":1");
  tree.write("ckpt/big.ckpt", std::string(kMaxModelCheckpointBytes + 10, '{'));
  tree.write("ckpt/other.ckpt", encodeModelCheckpoint(sample("pod-b")));
  tree.write("ckpt/old.ckpt",
             replaced(encodeModelCheckpoint(sample("old")), "\"version\":1", "\"version\":0"));

  LoadedCheckpoints loaded = store.loadAll();
  CHECK_FALSE(loaded.missing);
  CHECK(loaded.error.empty());
  CHECK(loaded.temporaries_removed == 1);
  CHECK_FALSE(std::filesystem::exists(dir / ".pod-a.ckpt.tmp.AbC123"));
  CHECK(std::filesystem::exists(dir / "README"));
  REQUIRE(loaded.checkpoints.size() == 2);
  CHECK(loaded.checkpoints[0] == sample("__node-sys__"));
  CHECK(loaded.checkpoints[1] == sample("pod-a"));
  REQUIRE(loaded.refused.size() == 4);
  CHECK(loaded.refused_keys == std::vector<std::string>{"big", "broken", "old", "other"});
  auto why = [&](const std::string& file) {
    for (const auto& [name, reason] : loaded.refused)
      if (name == file)
        return reason;
    return std::string("(not refused)");
  };
  CHECK_THAT(why("big.ckpt"), Catch::Contains("over the"));
  CHECK_THAT(why("broken.ckpt"), Catch::Contains("not JSON"));
  CHECK_THAT(why("old.ckpt"), Catch::Contains("version 0"));
  CHECK_THAT(why("other.ckpt"), Catch::Contains("holds the model \"pod-b\""));

  REQUIRE(store.remove("pod-a"));
  CHECK_FALSE(std::filesystem::exists(dir / "pod-a.ckpt"));
  // Removing what is not there is not an error.
  CHECK(store.remove("pod-a"));
}
