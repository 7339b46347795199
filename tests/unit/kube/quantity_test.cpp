#include "koord/kube/quantity.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using koord::kube::Quantity;
using F = Quantity::Format;

namespace {

struct ParseCase {
  const char* input;
  const char* canonical;
  F format;
};

// Transcribed from TestQuantityParse in k8s.io/apimachinery/pkg/api/resource/quantity_test.go:
// each input, its expected value printed in canonical form, and its expected format.
const std::vector<ParseCase> kParseCases = {
    {"0", "0", F::kDecimalSI},
    {"0n", "0", F::kDecimalSI},
    {"0u", "0", F::kDecimalSI},
    {"0m", "0", F::kDecimalSI},
    {"0Ki", "0", F::kBinarySI},
    {"0k", "0", F::kDecimalSI},
    {"0Mi", "0", F::kBinarySI},
    {"0M", "0", F::kDecimalSI},
    {"0Gi", "0", F::kBinarySI},
    {"0G", "0", F::kDecimalSI},
    {"0Ti", "0", F::kBinarySI},
    {"0T", "0", F::kDecimalSI},
    // Quantity-less numbers.
    {"1", "1", F::kDecimalSI},
    // Binary suffixes.
    {"1Ki", "1Ki", F::kBinarySI},
    {"8Ki", "8Ki", F::kBinarySI},
    {"7Mi", "7Mi", F::kBinarySI},
    {"6Gi", "6Gi", F::kBinarySI},
    {"5Ti", "5Ti", F::kBinarySI},
    {"4Pi", "4Pi", F::kBinarySI},
    {"3Ei", "3Ei", F::kBinarySI},
    {"10Ti", "10Ti", F::kBinarySI},
    {"100Ti", "100Ti", F::kBinarySI},
    // Decimal suffixes.
    {"5n", "5n", F::kDecimalSI},
    {"4u", "4u", F::kDecimalSI},
    {"3m", "3m", F::kDecimalSI},
    {"9", "9", F::kDecimalSI},
    {"8k", "8k", F::kDecimalSI},
    {"50k", "50k", F::kDecimalSI},
    {"7M", "7M", F::kDecimalSI},
    {"6G", "6G", F::kDecimalSI},
    {"5T", "5T", F::kDecimalSI},
    {"40T", "40T", F::kDecimalSI},
    {"300T", "300T", F::kDecimalSI},
    {"2P", "2P", F::kDecimalSI},
    {"1E", "1E", F::kDecimalSI},
    // Decimal exponents.
    {"1E-3", "1e-3", F::kDecimalExponent},
    {"1e3", "1e3", F::kDecimalExponent},
    {"1E6", "1e6", F::kDecimalExponent},
    {"1e9", "1e9", F::kDecimalExponent},
    {"1E12", "1e12", F::kDecimalExponent},
    {"1e15", "1e15", F::kDecimalExponent},
    {"1E18", "1e18", F::kDecimalExponent},
    // Nonstandard but still parsable.
    {"1e14", "100e12", F::kDecimalExponent},
    {"1e13", "10e12", F::kDecimalExponent},
    {"100.035k", "100035", F::kDecimalSI},
    // Things that look like floating point.
    {"0.001", "1m", F::kDecimalSI},
    {"0.0005k", "500m", F::kDecimalSI},
    {"0.005", "5m", F::kDecimalSI},
    {"0.05", "50m", F::kDecimalSI},
    {"0.5", "500m", F::kDecimalSI},
    {"0.00050k", "500m", F::kDecimalSI},
    {"0.00500", "5m", F::kDecimalSI},
    {"0.05000", "50m", F::kDecimalSI},
    {"0.50000", "500m", F::kDecimalSI},
    {"0.5e0", "500e-3", F::kDecimalExponent},
    {"0.5e-1", "50e-3", F::kDecimalExponent},
    {"0.5e-2", "5e-3", F::kDecimalExponent},
    {"10.035M", "10035k", F::kDecimalSI},
    {"1.2e3", "1200", F::kDecimalExponent},
    {"1.3E+6", "1300e3", F::kDecimalExponent},
    {"1.40e9", "1400e6", F::kDecimalExponent},
    {"1.53E12", "1530e9", F::kDecimalExponent},
    {"1.6e15", "1600e12", F::kDecimalExponent},
    {"1.7E18", "1700e15", F::kDecimalExponent},
    {"9.01", "9010m", F::kDecimalSI},
    {"8.1k", "8100", F::kDecimalSI},
    {"7.123456M", "7123456", F::kDecimalSI},
    {"6.987654321G", "6987654321", F::kDecimalSI},
    {"5.444T", "5444G", F::kDecimalSI},
    {"40.1T", "40100G", F::kDecimalSI},
    {"300.2T", "300200G", F::kDecimalSI},
    {"2.5P", "2500T", F::kDecimalSI},
    {"1.01E", "1010P", F::kDecimalSI},
    // Things that saturate or round up.
    {"3.001n", "4n", F::kDecimalSI},
    {"1.1E-9", "2e-9", F::kDecimalExponent},
    {"0.0000000001", "1n", F::kDecimalSI},
    {"0.0000000005", "1n", F::kDecimalSI},
    {"0.00000000050", "1n", F::kDecimalSI},
    {"0.5e-9", "1e-9", F::kDecimalExponent},
    {"0.9n", "1n", F::kDecimalSI},
    {"0.00000012345", "124n", F::kDecimalSI},
    {"0.00000012354", "124n", F::kDecimalSI},
    {"9Ei", "9223372036854775807", F::kBinarySI},
    {"9223372036854775807Ki", "9223372036854775807", F::kBinarySI},
    {"12E", "12E", F::kDecimalSI},
    // Fractional binary amounts.
    {"100.035Ki", "102435840m", F::kBinarySI},
    {"0.5Mi", "512Ki", F::kBinarySI},
    {"0.05Gi", "53687091200m", F::kBinarySI},
    {"0.025Ti", "27487790694400m", F::kBinarySI},
    // Things written by trolls.
    {"0.000000000001Ki", "2n", F::kDecimalSI},
    {".001", "1m", F::kDecimalSI},
    {".0001k", "100m", F::kDecimalSI},
    {"1.", "1", F::kDecimalSI},
    {"1.G", "1G", F::kDecimalSI},
};

}  // namespace

TEST_CASE("Kubernetes' parse table: value, canonical form and format", "[kube][quantity]") {
  REQUIRE(kParseCases.size() >= 90);
  for (const auto& c : kParseCases) {
    INFO(c.input);
    auto q = Quantity::parse(c.input);
    REQUIRE(q.has_value());
    CHECK(q->toString() == c.canonical);
    CHECK(q->format() == c.format);
    // The canonical form parses back to the same value.
    auto again = Quantity::parse(c.canonical);
    REQUIRE(again.has_value());
    CHECK(*again == *q);
  }
}

TEST_CASE("every parse case negated and with an explicit plus", "[kube][quantity]") {
  for (const auto& c : kParseCases) {
    INFO(c.input);
    auto plus = Quantity::parse(std::string("+") + c.input);
    REQUIRE(plus.has_value());
    CHECK(plus->toString() == c.canonical);
    CHECK(plus->format() == c.format);

    auto minus = Quantity::parse(std::string("-") + c.input);
    REQUIRE(minus.has_value());
    std::string want = std::string(c.canonical) == "0" ? "0" : std::string("-") + c.canonical;
    CHECK(minus->toString() == want);
    CHECK(minus->format() == c.format);
    CHECK(*minus == -*plus);
  }
}

TEST_CASE("Kubernetes' string table: canonical strings and their alternates", "[kube][quantity]") {
  // TestQuantityString: the expected canonical form, and an alternate spelling of the same value
  // that must print as it ("" when the test has none).
  struct Case {
    const char* canonical;
    const char* alternate;
  };
  const std::vector<Case> cases = {
      {"1Gi", "1024Mi"},
      {"300Mi", "307200Ki"},
      {"6Ki", ""},
      {"1001Gi", "1025024Mi"},
      {"1Ti", "1024Gi"},
      {"5", "5000m"},
      {"500m", "0.5"},
      {"1G", "1000M"},
      {"1G", "0.001T"},
      {"1m", "1000u"},
      {"80m", ""},
      {"1080m", "1.08"},
      {"1080m", "1080000000n"},
      {"300M", ""},
      {"1T", ""},
      {"1234567M", ""},
      {"1234567m", ""},
      {"3k", ""},
      {"1025", ""},
      {"0", ""},
      {"1e9", ".001e12"},
      {"1e-3", "0.001e0"},
      {"1e-9", "1000e-12"},
      {"80e-3", ""},
      {"300e6", ""},
      {"1e12", ""},
      {"1e3", ""},
      {"3e3", ""},
      {"0", "00"},
      {"1n", ""},
      {"80n", ""},
      {"1080n", ""},
      {"1u", ""},
      {"80u", ""},
      {"1080u", ""},
  };
  for (const auto& c : cases) {
    INFO(c.canonical);
    auto q = Quantity::parse(c.canonical);
    REQUIRE(q.has_value());
    CHECK(q->toString() == c.canonical);
    if (std::string(c.canonical) != "0")
      CHECK((-*q).toString() == std::string("-") + c.canonical);
    if (*c.alternate != '\0') {
      auto alt = Quantity::parse(c.alternate);
      REQUIRE(alt.has_value());
      CHECK(alt->toString() == c.canonical);
    }
  }
}

TEST_CASE("Kubernetes' parse-emit table, positive and negative", "[kube][quantity]") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"1Ki", "1Ki"},
      {"1Mi", "1Mi"},
      {"1Gi", "1Gi"},
      {"1024Mi", "1Gi"},
      {"1000M", "1G"},
      {".001Ki", "1024m"},
      {".000001Ki", "1024u"},
      {".000000001Ki", "1024n"},
      {".000000000001Ki", "2n"},
      // From the brief and Quantity's documentation.
      {"1500m", "1500m"},
      {"1.5Gi", "1536Mi"},
      {"1000Mi", "1000Mi"},
      {"100M", "100M"},
      {"1.5", "1500m"},
      {"2048Ki", "2Mi"},
  };
  for (const auto& [in, want] : cases) {
    INFO(in);
    auto q = Quantity::parse(in);
    REQUIRE(q.has_value());
    CHECK(q->toString() == want);
    auto neg = Quantity::parse(std::string("-") + in);
    REQUIRE(neg.has_value());
    CHECK(neg->toString() == std::string("-") + want);
  }
}

TEST_CASE("malformed quantities are refused", "[kube][quantity]") {
  // The first eleven are TestQuantityParse's invalid list; the rest are koord's own.
  for (const char* bad : {"1.1.M",  "1+1.0M",  "0.1mi", "0.1am", "aoeu", ".5i",   "1i",
                          "-3.01i", "-3.01e-", " 1",    "1 ",    "",     "1.5.5", "Mi",
                          "1KiB",   "1e",      "--1",   "+-1",   ".",    "-",     "+",
                          "1K",     "1 Mi",    "1e+",   "1e3.5", "1Mi5", "1ee5",  "1.5e99999999999",
                          "0x10",   "1,5",     "1_000"}) {
    INFO('"' << bad << '"');
    auto q = Quantity::parse(bad);
    CHECK_FALSE(q.has_value());
    if (!q)
      CHECK_FALSE(q.error().message.empty());
  }
}

TEST_CASE("values at or above 1000E are refused as overflow", "[kube][quantity]") {
  for (const char* big : {"1000E", "1e21", "1E21", "9999999999999999999999",
                          "100000000000000000000000", "-1e21", "1e2147483647"}) {
    INFO(big);
    auto q = Quantity::parse(big);
    REQUIRE_FALSE(q.has_value());
    CHECK_THAT(q.error().message, Catch::Contains("too large"));
  }
  // Just below the limit still parses; above int64 is kept exactly, as Kubernetes does.
  auto q = Quantity::parse("999E");
  REQUIRE(q.has_value());
  CHECK(q->toString() == "999E");
  q = Quantity::parse("9223372036854775808");
  REQUIRE(q.has_value());
  CHECK(q->toString() == "9223372036854775808");
  CHECK(q->value() == INT64_MAX);  // saturated
  // Binary amounts are capped, not refused.
  q = Quantity::parse("100000Ei");
  REQUIRE(q.has_value());
  CHECK(q->toString() == "9223372036854775807");
  // Huge negative exponents round up to the least amount.
  q = Quantity::parse("1e-2147483647");
  REQUIRE(q.has_value());
  CHECK(q->toString() == "1e-9");
  q = Quantity::parse("0e99999");
  REQUIRE(q.has_value());
  CHECK(q->isZero());
}

TEST_CASE("milliValue and value round up away from zero", "[kube][quantity]") {
  struct Case {
    const char* in;
    std::int64_t milli;
    std::int64_t value;
  };
  for (const auto& c : std::vector<Case>{{"0", 0, 0},
                                         {"1", 1000, 1},
                                         {"1500m", 1500, 2},
                                         {"1.5", 1500, 2},
                                         {"-1.5", -1500, -2},
                                         {"1n", 1, 1},
                                         {"-1n", -1, -1},
                                         {"0.5", 500, 1},
                                         {"100m", 100, 1},
                                         {"1Ki", 1024000, 1024},
                                         {"1.0001m", 2, 1},
                                         {"2Gi", 2147483648000, 2147483648},
                                         {"8E", INT64_MAX, 8000000000000000000}}) {
    INFO(c.in);
    auto q = Quantity::parse(c.in);
    REQUIRE(q.has_value());
    CHECK(q->milliValue() == c.milli);
    CHECK(q->value() == c.value);
  }
}

TEST_CASE("fromMilli, fromInt and fromScaled print as Kubernetes' constructors",
          "[kube][quantity]") {
  // TestMilliNewSet.
  CHECK(Quantity::fromMilli(1).toString() == "1m");
  CHECK(Quantity::fromMilli(1000).toString() == "1");
  CHECK(Quantity::fromMilli(1234000).toString() == "1234");
  CHECK(Quantity::fromMilli(1024, F::kBinarySI).toString() == "1024m");
  CHECK(Quantity::fromMilli(1000000, F::kDecimalExponent).toString() == "1e3");
  CHECK(Quantity::fromMilli(1024 * 1024, F::kBinarySI).toString() == "1048576m");
  for (std::int64_t v : {1, 1000, 1234000, 1000000}) {
    CHECK(Quantity::parse(Quantity::fromMilli(v).toString())->milliValue() == v);
  }
  // TestNewSet.
  CHECK(Quantity::fromInt(1).toString() == "1");
  CHECK(Quantity::fromInt(1000).toString() == "1k");
  CHECK(Quantity::fromInt(1234000).toString() == "1234k");
  CHECK(Quantity::fromInt(1024, F::kBinarySI).toString() == "1Ki");
  CHECK(Quantity::fromInt(1000000, F::kDecimalExponent).toString() == "1e6");
  CHECK(Quantity::fromInt(1024 * 1024, F::kBinarySI).toString() == "1Mi");
  CHECK(Quantity::parse("1Mi")->value() == 1024 * 1024);
  // TestNewScaledSet.
  struct Scaled {
    std::int64_t value;
    int scale;
    const char* want;
  };
  for (const auto& c : std::vector<Scaled>{{1, -9, "1n"},
                                           {1000, -9, "1u"},
                                           {1, -6, "1u"},
                                           {1000, -6, "1m"},
                                           {1, -3, "1m"},
                                           {1000, -3, "1"},
                                           {1, 0, "1"},
                                           {0, -9, "0"},
                                           {0, -6, "0"},
                                           {0, -3, "0"},
                                           {0, 0, "0"}}) {
    INFO(c.value << "e" << c.scale);
    auto q = Quantity::fromScaled(c.value, c.scale);
    CHECK(q.toString() == c.want);
    CHECK(Quantity::parse(c.want)->scaledValue(c.scale) == c.value);
  }
  // TestScaledValue: 10^from expressed in units of 10^to.
  struct Rescale {
    int from;
    int to;
    std::int64_t want;
  };
  for (const auto& c : std::vector<Rescale>{{-9, -9, 1},
                                            {-9, -6, 1},
                                            {-9, -3, 1},
                                            {-9, 0, 1},
                                            {-6, -9, 1000},
                                            {-6, -6, 1},
                                            {-6, -3, 1},
                                            {-6, 0, 1},
                                            {-3, -9, 1000000},
                                            {-3, -6, 1000},
                                            {-3, -3, 1},
                                            {-3, 0, 1},
                                            {0, -9, 1000000000},
                                            {0, -6, 1000000},
                                            {0, -3, 1000},
                                            {0, 0, 1},
                                            {2, -2, 10000}}) {
    INFO(c.from << " -> " << c.to);
    CHECK(Quantity::fromScaled(1, c.from).scaledValue(c.to) == c.want);
  }
  CHECK(Quantity::fromScaled(15, -10).toString() == "2n");
  CHECK_THROWS_AS(Quantity::fromScaled(1, 21), std::out_of_range);
  CHECK_THROWS_AS(Quantity::fromScaled(INT64_MAX, 20), std::out_of_range);
  CHECK_THROWS_AS(Quantity::fromScaled(1000, 18), std::out_of_range);
  CHECK(Quantity::fromScaled(999, 18).toString() == "999E");
  CHECK(Quantity::fromScaled(0, 40).isZero());
}

TEST_CASE("comparison ignores the format", "[kube][quantity]") {
  auto q = [](const char* s) { return *Quantity::parse(s); };
  CHECK(q("0") == q("0"));
  CHECK(q("100m") > q("50m"));
  CHECK(q("50m") < q("100m"));
  CHECK(q("10000T") > q("100Gi"));
  CHECK(q("1Ki") == q("1024"));
  CHECK(q("1e3") == q("1k"));
  CHECK(q("-1") < q("1n"));
  CHECK(q("100m").cmp(q("0.1")) == 0);
}

TEST_CASE("add and sub keep exact values and Kubernetes' format rules", "[kube][quantity]") {
  auto q = [](const char* s) { return *Quantity::parse(s); };
  // TestQuantityAddZeroPreservesSuffix / TestQuantitySubZeroPreservesSuffix.
  for (const char* s : {"100m", "1Gi"}) {
    INFO(s);
    Quantity v1 = q(s);
    REQUIRE(v1.add(q("0")));
    CHECK(v1.toString() == s);
    Quantity v2 = q("0");
    REQUIRE(v2.add(q(s)));
    CHECK(v2.toString() == s);
    Quantity v3 = q(s);
    REQUIRE(v3.sub(q("0")));
    CHECK(v3.toString() == s);
    Quantity v4 = q("0");
    REQUIRE(v4.sub(q(s)));
    CHECK(v4.toString() == (-q(s)).toString());
  }
  CHECK((q("1Gi") + q("512Mi")).toString() == "1536Mi");
  CHECK((q("1") - q("1500m")).toString() == "-500m");
  CHECK((q("100m") + q("100m") + q("800m")).toString() == "1");
  CHECK((q("1Gi") - q("1Gi")).isZero());
  // TestQuantityNeg.
  CHECK((-q("9.01")).toString() == "-9010m");
  Quantity big = q("999E");
  CHECK_FALSE(big.add(q("1E")));
  CHECK(big.toString() == "999E");
  CHECK_THROWS_AS(big + q("1E"), std::overflow_error);
  CHECK(big.add(q("-1E")));
  CHECK(big.toString() == "998E");
}

TEST_CASE("text longer than kMaxLength is refused before any digit is read", "[kube][quantity]") {
  // A multi-megabyte number with a matching negative exponent: without the bound, its digits go
  // into a big integer and get divided by a power of ten as large, which takes seconds.
  std::string huge(4 * 1024 * 1024, '7');
  huge += "e-" + std::to_string(huge.size() - 1);
  auto q = Quantity::parse(huge);
  REQUIRE_FALSE(q.has_value());
  CHECK_THAT(q.error().message, Catch::Contains("more than 128"));
  CHECK(q.error().message.size() < 256);  // quotes only the start

  // At the bound, padded with zeros, a value still parses exactly.
  std::string padded = "1." + std::string(Quantity::kMaxLength - 3, '0') + "k";
  REQUIRE(padded.size() == Quantity::kMaxLength);
  q = Quantity::parse(padded);
  REQUIRE(q.has_value());
  CHECK(q->value() == 1000);
  const std::string longer = "1." + std::string(Quantity::kMaxLength - 2, '0') + "k";
  CHECK_FALSE(Quantity::parse(longer).has_value());
  CHECK_FALSE(Quantity::parse("0" + padded).has_value());
}
