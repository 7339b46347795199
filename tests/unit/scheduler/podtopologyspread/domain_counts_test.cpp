// DomainCounts, the open-addressing table behind the per-domain counts: lookups across regrowth,
// the empty value as a real domain, and clones that count on their own.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "plugins/upstream/podtopologyspread/domain_counts.h"

namespace pts_test {
namespace {

using koord::roles::scheduler::upstream::podtopologyspread::DomainCounts;

TEST_CASE("DomainCounts keeps every value across regrowth", "[podtopologyspread][domains]") {
  std::vector<std::string> values;
  for (int i = 0; i < 5000; ++i)
    values.push_back("node-" + std::to_string(i));
  DomainCounts<std::int32_t> counts;
  CHECK(counts.find("node-0") == nullptr);
  for (std::size_t i = 0; i < values.size(); ++i) {
    REQUIRE(counts.insert(values[i]));
    *counts.find(values[i]) = static_cast<std::int32_t>(i);
  }
  CHECK(counts.size() == values.size());
  CHECK_FALSE(counts.insert(values[42]));
  CHECK(*counts.find(values[42]) == 42);
  bool all_found = true;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::int32_t* c = counts.find(values[i]);
    all_found = all_found && c != nullptr && *c == static_cast<std::int32_t>(i);
  }
  CHECK(all_found);
  CHECK(counts.find("node-5000") == nullptr);
  std::set<std::string> seen;
  counts.forEach([&](std::string_view v, std::int32_t) { seen.emplace(v); });
  CHECK(seen.size() == values.size());
}

TEST_CASE("DomainCounts treats the empty value as a domain", "[podtopologyspread][domains]") {
  DomainCounts<std::int64_t> counts;
  counts.reserve(100);
  CHECK(counts.empty());
  CHECK(counts.find("") == nullptr);
  REQUIRE(counts.insert(""));
  *counts.find("") += 3;
  CHECK(*counts.find("") == 3);
  CHECK(counts.find("zone1") == nullptr);

  DomainCounts<std::int64_t> copy = counts;
  *copy.find("") += 1;
  CHECK(*copy.find("") == 4);
  CHECK(*counts.find("") == 3);
}

}  // namespace
}  // namespace pts_test
