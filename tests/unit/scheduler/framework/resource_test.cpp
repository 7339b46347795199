#include <catch2/catch.hpp>

#include "framework/resource.h"

using namespace koord::roles::scheduler;
namespace kube = koord::kube;

namespace {

kube::Quantity q(std::string_view text) {
  return kube::Quantity::parse(text).value();
}

Resource make(std::int64_t cpu, std::int64_t memory,
              std::vector<std::pair<std::string, std::int64_t>> scalars = {}) {
  Resource r;
  r.milli_cpu = cpu;
  r.memory = memory;
  for (const auto& [name, v] : scalars)
    r.setScalar(name, v);
  return r;
}

}  // namespace

TEST_CASE("Resource::fromList converts each resource to its unit") {
  kube::ResourceList list{{"cpu", q("1500m")},
                          {"memory", q("1Gi")},
                          {"ephemeral-storage", q("10G")},
                          {"pods", q("110")},
                          {"kubernetes.io/batch-cpu", q("2000")},
                          {"example.com/gpu", q("2")},
                          {"hugepages-2Mi", q("0")}};
  Resource r = Resource::fromList(list);
  CHECK(r.milli_cpu == 1500);
  CHECK(r.memory == 1024LL * 1024 * 1024);
  CHECK(r.ephemeral_storage == 10'000'000'000LL);
  CHECK(r.allowed_pod_number == 110);
  // Sorted by name, zero entries left out.
  REQUIRE(r.scalar.size() == 2);
  CHECK(r.scalar[0] == std::pair<std::string, std::int64_t>{"example.com/gpu", 2});
  CHECK(r.scalar[1] == std::pair<std::string, std::int64_t>{"kubernetes.io/batch-cpu", 2000});
  CHECK(r.get("cpu") == 1500);
  CHECK(r.get("pods") == 110);
  CHECK(r.get("ephemeral-storage") == 10'000'000'000LL);
  CHECK(r.get("kubernetes.io/batch-cpu") == 2000);
  CHECK(r.get("example.com/unknown") == 0);
  // cpu rounds up to whole millicores, as MilliValue does.
  CHECK(Resource::fromList({{"cpu", q("0.0001")}}).milli_cpu == 1);
}

TEST_CASE("Resource scalars stay sorted and drop zeros") {
  Resource r;
  r.setScalar("b", 2);
  r.setScalar("a", 1);
  r.setScalar("c", 3);
  REQUIRE(r.scalar.size() == 3);
  CHECK(r.scalar[0].first == "a");
  CHECK(r.scalar[2].first == "c");
  r.addScalar("b", -2);
  CHECK(r.scalar.size() == 2);
  CHECK(r.scalarValue("b") == 0);
  r.setScalar("a", 0);
  CHECK(r.scalar.size() == 1);
  r.setScalar("zero", 0);  // never stored
  CHECK(r.scalar.size() == 1);
  r.addScalar("c", 4);
  CHECK(r.scalarValue("c") == 7);
}

TEST_CASE("Resource add, subtract and setMax") {
  struct Case {
    const char* name;
    Resource a;
    Resource b;
    Resource added;
    Resource subtracted;
    Resource maxed;
  };
  const Case cases[] = {
      {"disjoint scalars", make(100, 10, {{"x", 1}}), make(50, 20, {{"y", 2}}),
       make(150, 30, {{"x", 1}, {"y", 2}}), make(50, -10, {{"x", 1}, {"y", -2}}),
       make(100, 20, {{"x", 1}, {"y", 2}})},
      {"shared scalar cancels", make(0, 0, {{"x", 3}}), make(0, 0, {{"x", 3}}),
       make(0, 0, {{"x", 6}}), make(0, 0), make(0, 0, {{"x", 3}})},
      {"max keeps the larger side per resource", make(300, 5, {{"x", 1}}),
       make(200, 50, {{"x", 4}}), make(500, 55, {{"x", 5}}), make(100, -45, {{"x", -3}}),
       make(300, 50, {{"x", 4}})},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Resource added = c.a;
      added.add(c.b);
      CHECK(added == c.added);
      Resource subtracted = c.a;
      subtracted.subtract(c.b);
      CHECK(subtracted == c.subtracted);
      Resource maxed = c.a;
      maxed.setMax(c.b);
      CHECK(maxed == c.maxed);
    }
  }
  SECTION("ephemeral storage and pods follow") {
    Resource a;
    a.ephemeral_storage = 5;
    a.allowed_pod_number = 1;
    Resource b;
    b.ephemeral_storage = 7;
    b.allowed_pod_number = 3;
    Resource m = a;
    m.setMax(b);
    CHECK(m.ephemeral_storage == 7);
    CHECK(m.allowed_pod_number == 3);
    a.add(b);
    CHECK(a.ephemeral_storage == 12);
    a.subtract(b);
    a.subtract(b);
    CHECK(a.allowed_pod_number == -2);  // below zero is the cache's to report, not clamped
  }
}

TEST_CASE("Resource scalar lookups find each name among few and many sharing prefixes") {
  // Both sides of the short-list scan: names of equal length and of one prefix.
  for (int count : {1, 5, 16, 17, 40}) {
    Resource r;
    for (int i = 0; i < count; ++i) {
      r.setScalar("koordinator.sh/gpu-" + std::to_string(1000 + i), i + 1);
      r.setScalar("koordinator.sh/gpu-" + std::to_string(i), 100 + i);
    }
    INFO(count << " pairs");
    for (int i = 0; i < count; ++i) {
      CHECK(r.scalarValue("koordinator.sh/gpu-" + std::to_string(1000 + i)) == i + 1);
      CHECK(r.scalarValue("koordinator.sh/gpu-" + std::to_string(i)) == 100 + i);
    }
    CHECK(r.scalarValue("koordinator.sh/gpu-") == 0);
    CHECK(r.scalarValue("koordinator.sh/gpu-99999") == 0);
    CHECK(r.scalarValue("") == 0);
  }
}
