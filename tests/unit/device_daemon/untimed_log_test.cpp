#include "untimed_log.h"

#include <catch2/catch.hpp>

#include <regex>

#include "koord/core/log.h"

using namespace koord::roles::device_daemon;

TEST_CASE("no-timestamp logging: a line loses its date and time, nothing else",
          "[devicedaemon][log]") {
  std::string line =
      koord::log::formatLine(koord::log::Severity::kWarning, "/src/scan.cpp", 42, "hello");
  REQUIRE(std::regex_search(line, std::regex(R"(^W\d{4} \d\d:\d\d:\d\d\.\d{6} )")));
  std::string untimed = withoutTimestamp(line);
  CHECK(std::regex_match(untimed, std::regex(R"(W +\d+ scan\.cpp:42\] hello\n)")));
  CHECK(untimed.size() == line.size() - 20);  // the stamp's separating space stays
  // A thread id that fills its seven columns stays apart from the severity letter.
  CHECK(withoutTimestamp("E0724 10:00:00.123456 4194304 f.cpp:1] m\n") == "E 4194304 f.cpp:1] m\n");

  // Text not in klog's shape (a continuation, a foreign line) passes unchanged.
  CHECK(withoutTimestamp("plain text\n") == "plain text\n");
  CHECK(withoutTimestamp("I0724 10:00") == "I0724 10:00");
}
