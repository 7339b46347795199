// CpuSet: set algebra across inline and heap-sized sets, and the kernel list syntax.
#include <string>
#include <vector>

#include "fixture.h"

TEST_CASE("CpuSet algebra", "[nodenumaresource]") {
  struct Case {
    std::string a, b, union_, intersection, difference;
    bool subset;
  };
  const std::vector<Case> cases = {
      {"", "", "", "", "", true},
      {"0-3", "2-5", "0-5", "2-3", "0-1", false},
      {"1,3", "0-7", "0-7", "1,3", "", true},
      {"0-63", "64-127", "0-127", "", "0-63", false},
      {"0,300,8191", "300", "0,300,8191", "300", "0,8191", false},
      {"4000-4003", "0-4001", "0-4003", "4000-4001", "4002-4003", false},
  };
  for (const Case& c : cases) {
    INFO(c.a << " / " << c.b);
    const nnr::CpuSet a = cpus(c.a), b = cpus(c.b);
    CHECK((a | b).toString() == c.union_);
    CHECK((a & b).toString() == c.intersection);
    CHECK((a - b).toString() == c.difference);
    CHECK(a.intersectionSize(b) == cpus(c.intersection).size());
    CHECK(a.intersects(b) == !cpus(c.intersection).empty());
    CHECK(a.isSubsetOf(b) == c.subset);
  }
}

TEST_CASE("CpuSet membership, size and equality", "[nodenumaresource]") {
  nnr::CpuSet s{5, 1, 200};
  CHECK(s.size() == 3);
  CHECK(s.first() == 1);
  CHECK(s.contains(200));
  CHECK_FALSE(s.contains(-1));
  CHECK_FALSE(s.contains(9000));
  CHECK(s.toVector() == std::vector<int>{1, 5, 200});
  s.remove(200);
  CHECK(s == nnr::CpuSet{1, 5});  // trailing words play no part
  s.remove(1);
  s.remove(5);
  CHECK(s.empty());
  CHECK(s.first() == -1);
  CHECK(s == nnr::CpuSet{});
  CHECK(s.toString().empty());
}

TEST_CASE("CpuSet parse refuses what the kernel would", "[nodenumaresource]") {
  for (const char* bad : {"3-1", "a", "1,,2", "-1", "8192", "1-2:1/2"}) {
    INFO(bad);
    CHECK_FALSE(nnr::CpuSet::parse(bad).has_value());
  }
  auto ok = nnr::CpuSet::parse("0-2,7\n");
  REQUIRE(ok.has_value());
  CHECK(ok->toString() == "0-2,7");
}
