#include "koord/core/log.h"

#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

namespace {

struct CaptureLog {
  std::vector<std::string> lines;
  CaptureLog() {
    koord::log::setSink([this](std::string_view l) { lines.emplace_back(l); });
  }
  ~CaptureLog() {
    koord::log::setSink(nullptr);
    koord::log::setVerbosity(0);
  }
};

}  // namespace

TEST_CASE("log lines follow klog's header format", "[core][log]") {
  CaptureLog cap;
  KOORD_LOG_INFO("synced {} pods", 3);
  KOORD_LOG_WARNING("slow");
  KOORD_LOG_ERROR("failed: {}", "boom");
  REQUIRE(cap.lines.size() == 3);
  // Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
  std::regex klog(R"(^([IWE])(\d{4}) \d{2}:\d{2}:\d{2}\.\d{6} +\d+ log_test\.cpp:\d+\] (.*)\n$)");
  std::smatch m;
  REQUIRE(std::regex_match(cap.lines[0], m, klog));
  CHECK(m[1] == "I");
  CHECK(m[3] == "synced 3 pods");
  REQUIRE(std::regex_match(cap.lines[1], m, klog));
  CHECK(m[1] == "W");
  REQUIRE(std::regex_match(cap.lines[2], m, klog));
  CHECK(m[1] == "E");
  CHECK(m[3] == "failed: boom");
}

TEST_CASE("verbose lines appear only at -v and skip their arguments", "[core][log]") {
  CaptureLog cap;
  int evaluated = 0;
  auto count = [&evaluated] { return ++evaluated; };
  KOORD_VLOG(2, "hidden {}", count());
  CHECK(cap.lines.empty());
  CHECK(evaluated == 0);
  koord::log::setVerbosity(2);
  KOORD_VLOG(2, "shown {}", count());
  KOORD_VLOG(3, "still hidden {}", count());
  REQUIRE(cap.lines.size() == 1);
  CHECK(evaluated == 1);
  CHECK(cap.lines[0].find("] shown 1") != std::string::npos);
}
