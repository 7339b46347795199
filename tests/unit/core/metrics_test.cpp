#include "koord/core/metrics.h"

#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <thread>

using koord::metrics::Registry;

namespace {

// A strict reader for the text exposition format: every sample line must parse, HELP/TYPE must
// precede a family's samples, and label values are unescaped. Returns series -> value, where the
// series key is `name{a="x",b="y"}` with labels in their written order.
struct Parsed {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
  std::map<std::string, std::string> help;
};

Parsed parseExposition(const std::string& text) {
  Parsed p;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    REQUIRE_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) {
      auto rest = line.substr(7);
      auto sp = rest.find(' ');
      p.help[rest.substr(0, sp)] = rest.substr(sp + 1);
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      auto rest = line.substr(7);
      auto sp = rest.find(' ');
      p.types[rest.substr(0, sp)] = rest.substr(sp + 1);
      continue;
    }
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ')
      ++i;
    std::string key = line.substr(0, i);
    if (i < line.size() && line[i] == '{') {
      key += '{';
      ++i;
      while (line[i] != '}') {
        size_t eq = line.find('=', i);
        REQUIRE(eq != std::string::npos);
        key += line.substr(i, eq - i) + "=\"";
        REQUIRE(line[eq + 1] == '"');
        size_t j = eq + 2;
        std::string value;
        while (line[j] != '"') {
          if (line[j] == '\\') {
            ++j;
            value += line[j] == 'n' ? '\n' : line[j];
          } else {
            value += line[j];
          }
          ++j;
        }
        key += value + "\"";
        i = j + 1;
        if (line[i] == ',') {
          key += ',';
          ++i;
        }
      }
      key += '}';
      ++i;
    }
    REQUIRE(line[i] == ' ');
    std::string v = line.substr(i + 1);
    double d = v == "+Inf" ? INFINITY : v == "-Inf" ? -INFINITY : std::stod(v);
    REQUIRE(p.samples.emplace(key, d).second);  // no duplicate series
  }
  return p;
}

}  // namespace

TEST_CASE("exposition parses back to the recorded values", "[core][metrics]") {
  Registry r;
  auto& reqs = r.counter("koord_webhook_requests_total", "Admission requests.", {"path", "code"});
  reqs.with({"/mutate-pod", "200"}).inc();
  reqs.with({"/mutate-pod", "200"}).inc(2);
  reqs.with({"/validate-pod", "400"}).inc();
  r.gauge("koord_ready", "1 when ready.").with({}).set(1);
  auto& weird = r.gauge("koord_weird", "Help with \\ and\nnewline.", {"v"});
  weird.with({"a \"quoted\" \\ value\nline2"}).set(-2.5);
  auto& lat = r.histogram("koord_latency_seconds", "Latency.", {"path"}, {0.1, 1});
  lat.with({"/x"}).observe(0.05);
  lat.with({"/x"}).observe(0.1);  // le is inclusive
  lat.with({"/x"}).observe(0.5);
  lat.with({"/x"}).observe(5);

  auto p = parseExposition(r.render());
  CHECK(p.types["koord_webhook_requests_total"] == "counter");
  CHECK(p.types["koord_ready"] == "gauge");
  CHECK(p.types["koord_latency_seconds"] == "histogram");
  CHECK(p.help["koord_weird"] == "Help with \\\\ and\\nnewline.");
  CHECK(p.samples["koord_webhook_requests_total{path=\"/mutate-pod\",code=\"200\"}"] == 3);
  CHECK(p.samples["koord_webhook_requests_total{path=\"/validate-pod\",code=\"400\"}"] == 1);
  CHECK(p.samples["koord_ready"] == 1);
  CHECK(p.samples["koord_weird{v=\"a \"quoted\" \\ value\nline2\"}"] == -2.5);
  CHECK(p.samples["koord_latency_seconds_bucket{path=\"/x\",le=\"0.1\"}"] == 2);
  CHECK(p.samples["koord_latency_seconds_bucket{path=\"/x\",le=\"1\"}"] == 3);
  CHECK(p.samples["koord_latency_seconds_bucket{path=\"/x\",le=\"+Inf\"}"] == 4);
  CHECK(p.samples["koord_latency_seconds_count{path=\"/x\"}"] == 4);
  CHECK(p.samples["koord_latency_seconds_sum{path=\"/x\"}"] == Approx(5.65));
}

TEST_CASE("a removed child leaves the exposition; the others stay", "[core][metrics]") {
  Registry r;
  auto& usage = r.gauge("koordlet_pod_resource_usage", "Pod usage.", {"pod", "resource"});
  usage.with({"a", "cpu"}).set(1);
  usage.with({"b", "cpu"}).set(2);
  CHECK(usage.remove({"a", "cpu"}));
  CHECK_FALSE(usage.remove({"a", "cpu"}));
  auto p = parseExposition(r.render());
  CHECK(p.samples.count("koordlet_pod_resource_usage{pod=\"a\",resource=\"cpu\"}") == 0);
  CHECK(p.samples["koordlet_pod_resource_usage{pod=\"b\",resource=\"cpu\"}"] == 2);
}

TEST_CASE("registering a name twice returns the family or refuses a clash", "[core][metrics]") {
  Registry r;
  auto& a = r.counter("x_total", "x", {"l"});
  auto& b = r.counter("x_total", "x", {"l"});
  CHECK(&a == &b);
  CHECK_THROWS_AS(r.gauge("x_total", "x", {"l"}), std::invalid_argument);
  CHECK_THROWS_AS(r.counter("x_total", "x", {"other"}), std::invalid_argument);
  CHECK_THROWS_AS(r.counter("1bad", "x"), std::invalid_argument);
  CHECK_THROWS_AS(r.counter("ok_total", "x", {"__reserved"}), std::invalid_argument);
  CHECK_THROWS_AS(r.histogram("h", "x", {"le"}), std::invalid_argument);
  CHECK_THROWS_AS(a.with({"one", "two"}), std::invalid_argument);
}

TEST_CASE("a collected gauge writes what its owner emits at each scrape", "[core][metrics]") {
  Registry r;
  std::map<std::string, double> held{{"a", 1}, {"b \"q\"", 2}};
  auto family = r.collectedGauge("koordlet_pod_psi", "Pod psi.", {"pod", "degree"},
                                 [&](const koord::metrics::SeriesSink& sink) {
                                   for (const auto& [pod, v] : held) {
                                     const std::string_view values[] = {pod, "some"};
                                     sink(values, v);
                                   }
                                   const std::string_view short_values[] = {"dropped"};
                                   sink(short_values, 9);  // the wrong number of values: left out
                                 });
  auto p = parseExposition(r.render());
  CHECK(p.types["koordlet_pod_psi"] == "gauge");
  CHECK(p.samples.size() == 2);
  CHECK(p.samples["koordlet_pod_psi{pod=\"a\",degree=\"some\"}"] == 1);
  CHECK(p.samples["koordlet_pod_psi{pod=\"b \"q\"\",degree=\"some\"}"] == 2);

  held["a"] = 5;  // the next scrape sees the owner's figures as they are then
  held.erase("b \"q\"");
  p = parseExposition(r.render());
  CHECK(p.samples.size() == 1);
  CHECK(p.samples["koordlet_pod_psi{pod=\"a\",degree=\"some\"}"] == 5);

  // While held, no second owner and no clashing family; once released, the name is free again.
  auto none = [](const koord::metrics::SeriesSink&) {};
  CHECK_THROWS_AS(r.collectedGauge("koordlet_pod_psi", "x", {"pod", "degree"}, none),
                  std::invalid_argument);
  CHECK_THROWS_AS(r.gauge("koordlet_pod_psi", "x", {"pod", "degree"}), std::invalid_argument);
  CHECK_THROWS_AS(r.collectedGauge("koordlet_other", "x", {"__bad"}, none), std::invalid_argument);
  family.reset();
  p = parseExposition(r.render());
  CHECK(p.samples.empty());
  CHECK(p.types["koordlet_pod_psi"] == "gauge");
  CHECK_THROWS_AS(r.collectedGauge("koordlet_pod_psi", "x", {"pod"}, none), std::invalid_argument);
  auto again = r.collectedGauge("koordlet_pod_psi", "x", {"pod", "degree"},
                                [](const koord::metrics::SeriesSink& sink) {
                                  const std::string_view values[] = {"c", "full"};
                                  sink(values, 3);
                                });
  CHECK(parseExposition(r.render()).samples["koordlet_pod_psi{pod=\"c\",degree=\"full\"}"] == 3);
}

TEST_CASE("counters and histograms are exact under concurrent updates", "[core][metrics]") {
  Registry r;
  auto& c = r.counter("c_total", "c").with({});
  auto& h = r.histogram("h_seconds", "h", {}, {0.5}).with({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.inc();
        h.observe(i % 2 ? 1.0 : 0.25);
      }
    });
  }
  for (auto& t : threads)
    t.join();
  CHECK(c.value() == 40000);
  auto s = h.snapshot();
  CHECK(s.count == 40000);
  CHECK(s.cumulative[0] == 20000);
  CHECK(s.sum == Approx(40000 * 0.625));
  c.inc(-5);  // refused: counters only go up
  CHECK(c.value() == 40000);
}

TEST_CASE("bucket helpers", "[core][metrics]") {
  auto b = koord::metrics::exponentialBuckets(0.001, 2, 4);
  CHECK(b == std::vector<double>{0.001, 0.002, 0.004, 0.008});
  CHECK_THROWS(koord::metrics::exponentialBuckets(0, 2, 3));
  CHECK(koord::metrics::defaultBuckets().size() == 11);
}
