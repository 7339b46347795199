// The test apiserver's audit log (every write, as cluster.sh's policy records it), read back so
// a test can see which requests a component made and what the apiserver answered to each.
#pragma once

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "cluster_env.h"
#include "koord/kube/time.h"

namespace koord::testing {

/// One write the apiserver answered.
struct AuditEntry {
  std::string verb;  // create, update, patch, delete, deletecollection
  std::string resource;
  std::string subresource;
  std::string namespace_;
  std::string name;
  std::string user_agent;
  int code = 0;  // the HTTP status of the answer
  /// When the request came in, in seconds since the epoch (microsecond resolution); 0 if the
  /// entry has no timestamp.
  double received = 0;
};

/// "2006-01-02T15:04:05.999999Z" (a MicroTime) in seconds since the epoch; 0 if it is not one.
inline double parseTime(const std::string& t) {
  std::tm tm{};
  double seconds = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%lfZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &seconds) != 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + seconds;
}

/// The writes sent with `user_agent`, oldest first. Entries appear only once the apiserver has
/// answered, so a caller that needs one polls. A line still being written is skipped.
inline std::vector<AuditEntry> auditEntries(const std::string& user_agent) {
  const std::string path = needEnv(readClusterEnv(), "KOORD_AUDIT_LOG");
  std::ifstream in(path);
  if (!in)
    FAIL("cannot read the apiserver's audit log " << path);
  auto text = [](const boost::json::object& o, const char* key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
  };
  std::vector<AuditEntry> out;
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    if (ec || !v.is_object())
      continue;
    const auto& event = v.as_object();
    if (text(event, "stage") != "ResponseComplete" || text(event, "userAgent") != user_agent)
      continue;
    AuditEntry e;
    e.verb = text(event, "verb");
    e.user_agent = user_agent;
    e.received = parseTime(text(event, "requestReceivedTimestamp"));
    if (const auto* ref = event.if_contains("objectRef"); ref != nullptr && ref->is_object()) {
      e.resource = text(ref->as_object(), "resource");
      e.subresource = text(ref->as_object(), "subresource");
      e.namespace_ = text(ref->as_object(), "namespace");
      e.name = text(ref->as_object(), "name");
    }
    if (const auto* status = event.if_contains("responseStatus");
        status != nullptr && status->is_object()) {
      if (const auto* code = status->as_object().if_contains("code");
          code != nullptr && code->is_int64())
        e.code = static_cast<int>(code->as_int64());
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace koord::testing
