// Leader election's pure parts: the timing rules a config must meet, MicroTime's wire form and
// the Lease spec <-> record mapping. The election itself runs against the real apiserver in
// tests/cluster/leader_election_test.cpp.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>
#include <string>

#include "koord/kube/leader_election.h"
#include "koord/kube/time.h"

namespace json = boost::json;
using namespace koord::kube;
using namespace std::chrono_literals;
using std::chrono::system_clock;

namespace {

LeaderElectionConfig config(std::chrono::milliseconds lease, std::chrono::milliseconds renew,
                            std::chrono::milliseconds retry) {
  LeaderElectionConfig c;
  c.lease_namespace = "koordinator-system";
  c.lease_name = "koord-scheduler";
  c.identity = "host_1";
  c.lease_duration = lease;
  c.renew_deadline = renew;
  c.retry_period = retry;
  return c;
}

std::string refusal(const LeaderElectionConfig& c) {
  try {
    validate(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

system_clock::time_point at(std::int64_t micros) {
  return system_clock::time_point(std::chrono::microseconds(micros));
}

}  // namespace

TEST_CASE("leader election config: client-go's defaults are accepted", "[kube]") {
  CHECK_NOTHROW(validate(config(15s, 10s, 2s)));
  LeaderElectionConfig defaults;
  defaults.lease_namespace = "ns";
  defaults.lease_name = "name";
  defaults.identity = "me";
  CHECK_NOTHROW(validate(defaults));
}

TEST_CASE("leader election config: the lease must outlast the renew deadline", "[kube]") {
  CHECK(refusal(config(10s, 10s, 2s))
            .find("lease duration (10s) must be greater than the renew "
                  "deadline (10s)") != std::string::npos);
  CHECK_FALSE(refusal(config(9s, 10s, 2s)).empty());
  CHECK(refusal(config(10001ms, 10s, 2s)).empty());
}

TEST_CASE("leader election config: the renew deadline must exceed 1.2 x the retry period",
          "[kube]") {
  // 1.2 x 2 s = 2.4 s exactly: refused; a millisecond more is enough.
  CHECK(refusal(config(15s, 2400ms, 2s))
            .find("renew deadline (2.4s) must be greater than 1.2 x "
                  "the retry period (2s)") != std::string::npos);
  CHECK(refusal(config(15s, 2401ms, 2s)).empty());
  CHECK_FALSE(refusal(config(15s, 2s, 2s)).empty());
  // The cluster tests' timings.
  CHECK(refusal(config(4s, 3s, 1s)).empty());
  CHECK_FALSE(refusal(config(4s, 3s, 2500ms)).empty());
}

TEST_CASE("leader election config: names and a positive retry period are required", "[kube]") {
  auto c = config(15s, 10s, 2s);
  c.identity.clear();
  CHECK(refusal(c).find("identity") != std::string::npos);
  c = config(15s, 10s, 2s);
  c.lease_name.clear();
  CHECK(refusal(c).find("name") != std::string::npos);
  c = config(15s, 10s, 2s);
  c.lease_namespace.clear();
  CHECK_FALSE(refusal(c).empty());
  CHECK(refusal(config(15s, 10s, 0ms)).find("positive") != std::string::npos);
}

TEST_CASE("MicroTime is RFC 3339 UTC with six fractional digits", "[kube]") {
  // 2026-11-22T10:00:00Z is 1795341600 s after the epoch.
  CHECK(formatMicroTime(at(1795341600'123456)) == "2026-11-22T10:00:00.123456Z");
  CHECK(formatMicroTime(at(1795341600'000000)) == "2026-11-22T10:00:00.000000Z");
  CHECK(formatMicroTime(at(0)) == "1970-01-01T00:00:00.000000Z");
  // Nanoseconds are truncated, not rounded.
  CHECK(formatMicroTime(system_clock::time_point(std::chrono::duration_cast<system_clock::duration>(
            std::chrono::nanoseconds(1795341600'123456999)))) == "2026-11-22T10:00:00.123456Z");
  // Leap day and year end.
  CHECK(formatMicroTime(at(1709164800'000001)) == "2024-02-29T00:00:00.000001Z");
  CHECK(formatMicroTime(at(1735689599'999999)) == "2024-12-31T23:59:59.999999Z");
}

TEST_CASE("MicroTime parses what the apiserver writes", "[kube]") {
  CHECK(parseTime("2026-11-22T10:00:00.123456Z") == at(1795341600'123456));
  CHECK(parseTime("2026-11-22T10:00:00Z") == at(1795341600'000000));
  CHECK(parseTime("2026-11-22T10:00:00.1Z") == at(1795341600'100000));
  CHECK(parseTime("2026-11-22T10:00:00.123456789Z") == at(1795341600'123456));
  CHECK(parseTime("2026-11-22T12:30:00.5+02:30") == at(1795341600'500000));
  CHECK(parseTime("2026-11-22T05:00:00-05:00") == at(1795341600'000000));
  for (auto t : {at(0), at(1795341600'123456), at(1709164800'000001)})
    CHECK(parseTime(formatMicroTime(t)) == t);
}

TEST_CASE("MicroTime refuses malformed text", "[kube]") {
  for (const char* bad :
       {"", "2026-11-22", "2026-11-22T10:00:00", "2026-11-22 10:00:00Z", "2026-11-22T10:00:00.Z",
        "2026-11-22T10:00:00.1234567890Z", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-22T24:00:00Z", "2026-11-22T10:60:00Z", "2026-11-22T10:00:00+0200",
        "2026-11-22T10:00:00Zjunk", "2026-1-22T10:00:00Z", "2026-11-22T10:00:00z"}) {
    INFO(bad);
    CHECK_FALSE(parseTime(bad).has_value());
  }
}

TEST_CASE("MicroTime refuses times system_clock cannot hold", "[kube]") {
  // Valid RFC 3339 (Go's Time keeps years up to 9999), but beyond int64 nanoseconds since the
  // epoch: converting them overflowed (found by tests/fuzz/informer_objects_fuzz in a
  // NodeMetric's status.updateTime).
  for (const char* far : {"4048-05-01T10:05:00Z", "9999-12-31T23:59:59.999999Z",
                          "0000-01-01T00:00:00Z", "1677-09-21T00:12:43Z", "2262-04-11T23:47:17Z",
                          "2262-04-11T23:47:16.854776Z", "2262-04-11T23:30:00-01:00"}) {
    INFO(far);
    CHECK_FALSE(parseTime(far).has_value());
  }
  // The last microseconds that fit, either side, and an offset that brings a time back in.
  CHECK(parseTime("2262-04-11T23:47:16.854775Z") == at(9223372036'854775));
  CHECK(parseTime("1677-09-21T00:12:43.145225Z") == at(-9223372036'854775));
  CHECK(parseTime("2262-04-12T00:47:16+01:00") == at(9223372036'000000));
}

TEST_CASE("a Lease spec maps to a leader election record and back", "[kube]") {
  json::value spec = json::parse(R"({
    "holderIdentity": "host_1",
    "leaseDurationSeconds": 15,
    "acquireTime": "2026-11-22T10:00:00.000000Z",
    "renewTime": "2026-11-22T10:00:00.123456Z",
    "leaseTransitions": 3,
    "futureField": true
  })");
  auto r = recordFromLeaseSpec(spec);
  CHECK(r.holder_identity == "host_1");
  CHECK(r.lease_duration_seconds == 15);
  CHECK(r.acquire_time == at(1795341600'000000));
  CHECK(r.renew_time == at(1795341600'123456));
  CHECK(r.lease_transitions == 3);

  json::object back = leaseSpecFromRecord(r);
  CHECK(back.at("holderIdentity") == "host_1");
  CHECK(back.at("leaseDurationSeconds") == 15);
  CHECK(back.at("acquireTime") == "2026-11-22T10:00:00.000000Z");
  CHECK(back.at("renewTime") == "2026-11-22T10:00:00.123456Z");
  CHECK(back.at("leaseTransitions") == 3);
  CHECK_FALSE(back.contains("futureField"));
}

TEST_CASE("a released or empty Lease spec reads as nobody holding it", "[kube]") {
  auto empty = recordFromLeaseSpec(json::value());
  CHECK(empty.holder_identity.empty());
  CHECK(empty.lease_duration_seconds == 0);
  CHECK_FALSE(empty.renew_time.has_value());

  // Mistyped fields read as absent rather than failing the election.
  auto odd = recordFromLeaseSpec(
      json::parse(R"({"holderIdentity": 7, "leaseDurationSeconds": "15", "renewTime": "yesterday",
                      "leaseTransitions": 2})"));
  CHECK(odd.holder_identity.empty());
  CHECK(odd.lease_duration_seconds == 0);
  CHECK_FALSE(odd.renew_time.has_value());
  CHECK(odd.lease_transitions == 2);

  // A released record keeps an explicit empty holder, as client-go writes it.
  LeaderElectionRecord released;
  released.lease_duration_seconds = 1;
  json::object spec = leaseSpecFromRecord(released);
  CHECK(spec.at("holderIdentity") == "");
  CHECK_FALSE(spec.contains("acquireTime"));
  CHECK_FALSE(spec.contains("renewTime"));
}
