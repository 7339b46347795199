#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "koord/cgroup/cpu_topology.h"

using koord::cgroup::formatCpuList;
using koord::cgroup::parseCpuList;

TEST_CASE("cpu list: parse ids and ranges into sorted unique ids") {
  struct Case {
    std::string_view text;
    std::vector<int> want;
  };
  const Case cases[] = {
      {"0-3,8,10-11", {0, 1, 2, 3, 8, 10, 11}},
      {"0-3,8,10-11\n", {0, 1, 2, 3, 8, 10, 11}},
      {"  5\n", {5}},
      {"", {}},
      {"\n", {}},
      {"7,3,5-6", {3, 5, 6, 7}},
      {"0-3,2,3-4", {0, 1, 2, 3, 4}},
      {"4-4", {4}},
      {"007", {7}},
      {"8191", {8191}},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    auto got = parseCpuList(c.text);
    REQUIRE(got.has_value());
    CHECK(*got == c.want);
  }
}

TEST_CASE("cpu list: garbage, reversed ranges and absurd ids are refused") {
  for (std::string_view text :
       {"a", "1,,2", "1,", ",1", "3-1", "-1", "1-", "-", "1-2-3", "1 ,2", "1, 2", "+1", "0x1",
        "1.5", "0-3:1/2", "8192", "0-8192", "99999999999", "1\n2"}) {
    INFO(text);
    auto got = parseCpuList(text);
    REQUIRE_FALSE(got.has_value());
    CHECK_FALSE(got.error().message.empty());
  }
}

TEST_CASE("cpu list: a reversed range says so") {
  auto got = parseCpuList("5-2");
  REQUIRE_FALSE(got.has_value());
  CHECK(got.error().message.find("reversed") != std::string::npos);
}

TEST_CASE("cpu list: format uses ranges for runs") {
  CHECK(formatCpuList(std::vector<int>{}).empty());
  CHECK(formatCpuList(std::vector<int>{5}) == "5");
  CHECK(formatCpuList(std::vector<int>{0, 1}) == "0-1");
  CHECK(formatCpuList(std::vector<int>{11, 3, 1, 2, 0, 8, 10}) == "0-3,8,10-11");
  CHECK(formatCpuList(std::vector<int>{2, 2, 4, 4}) == "2,4");
  CHECK(formatCpuList(std::vector<int>{0, 2, 4}) == "0,2,4");
}

TEST_CASE("cpu list: parse and format round trip") {
  for (std::string_view text : {"0", "0-1", "0-3,8,10-11", "1,3,5,7", "0-8191", "2-4,6-9,8000"}) {
    INFO(text);
    auto ids = parseCpuList(text);
    REQUIRE(ids.has_value());
    CHECK(formatCpuList(*ids) == text);
    auto again = parseCpuList(formatCpuList(*ids));
    REQUIRE(again.has_value());
    CHECK(*again == *ids);
  }
}

TEST_CASE("cpu list: an annotation-sized list of repeated ranges is refused, not expanded") {
  // The shape of a hostile resource-status annotation: the parser used to expand every copy
  // (some 300 M ids) before removing duplicates, and accepted the list.
  std::string text = "0-8191";
  while (text.size() < 256 * 1024)
    text += ",0-8191";
  auto got = parseCpuList(text);
  REQUIRE_FALSE(got.has_value());
  CHECK(got.error().message.find("longer than") != std::string::npos);
  // The message quotes only the start of the list.
  CHECK(got.error().message.size() < 512);
}

TEST_CASE("cpu list: repeats within the length bound merge into at most every CPU") {
  std::string repeated = "0-8191";
  while (repeated.size() + 7 <= koord::cgroup::kMaxCpuListBytes)
    repeated += ",0-8191";
  auto merged = parseCpuList(repeated);
  REQUIRE(merged.has_value());
  CHECK(merged->size() == 8192);
  CHECK(merged->front() == 0);
  CHECK(merged->back() == 8191);

  // The longest list without a repeat, every id once and singly, is within the bound.
  std::string every;
  for (int cpu = koord::cgroup::kMaxCpuId; cpu >= 0; --cpu)
    every += std::to_string(cpu) + (cpu == 0 ? "" : ",");
  auto all = parseCpuList(every);
  REQUIRE(all.has_value());
  CHECK(all->size() == 8192);
  CHECK(formatCpuList(*all) == "0-8191");

  auto overlapping = parseCpuList("5-9,0-3,2-6,20,8-10");
  REQUIRE(overlapping.has_value());
  CHECK(*overlapping == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20});
}
