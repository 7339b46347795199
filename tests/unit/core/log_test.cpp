#include "koord/core/log.h"

#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "koord/core/log_output.h"

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

TEST_CASE("component-base's JSON lines: ts in milliseconds, caller, escaped msg, v",
          "[core][log]") {
  using namespace std::chrono;
  const system_clock::time_point when{milliseconds(1700000000123) + microseconds(456)};
  const std::string info = koord::log::formatJsonLine(koord::log::Severity::kInfo, "/src/a/b.cpp",
                                                      42, "say \"hi\"\tnow\n", when);
  CHECK(info ==
        "{\"ts\":1700000000123.456,\"caller\":\"b.cpp:42\",\"msg\":\"say \\\"hi\\\"\\tnow\","
        "\"v\":0}\n");
  const std::string error =
      koord::log::formatJsonLine(koord::log::Severity::kError, "x.cpp", 7, "a\x01z", when);
  CHECK(error == "{\"ts\":1700000000123.456,\"caller\":\"x.cpp:7\",\"msg\":\"a\\u0001z\"}\n");
}

TEST_CASE("klog's --log_dir file name: program.host.user.log.INFO.time.pid", "[core][log]") {
  const std::string name = koord::log::logDirFileName("koordlet", std::chrono::system_clock::now());
  std::regex shape(R"(^koordlet\.[^.]+(\.[^.]+)*\.[^.]+\.log\.INFO\.\d{8}-\d{6}\.(\d+)$)");
  std::smatch m;
  REQUIRE(std::regex_match(name, m, shape));
  CHECK(m[2] == std::to_string(::getpid()));
}

TEST_CASE("a log file gets klog's header, starts over past its size, and copies errors to stderr",
          "[core][log]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") /
                       ("koord-log-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "koord.log";
  auto read = [&] {
    std::ifstream in(file);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  koord::log::Output out;
  out.to_stderr = false;
  out.file = file.string();
  out.file_max_bytes = 4096;
  out.stderr_threshold = 3;  // FATAL: nothing is copied to stderr
  koord::log::setOutput(out);
  KOORD_LOG_INFO("first line");
  std::string text = read();
  CHECK(text.starts_with("Log file created at: "));
  CHECK(text.find("Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg\n") !=
        std::string::npos);
  CHECK(text.find("] first line\n") != std::string::npos);
  // Past 4 KiB the file starts over with a fresh header, as klog's --log_file does.
  for (int i = 0; i < 100; ++i)
    KOORD_LOG_INFO("filler line {} ........................................", i);
  text = read();
  CHECK(text.size() <= 4096);
  CHECK(text.starts_with("Log file created at: "));
  CHECK(text.find("] first line\n") == std::string::npos);
  CHECK(text.find("filler line 99 ") != std::string::npos);

  // The file cannot be opened: an error naming it, and the output stays where it was.
  koord::log::Output bad = out;
  bad.file = (dir / "missing-dir" / "x.log").string();
  CHECK_THROWS_WITH(koord::log::setOutput(bad), Catch::Contains("missing-dir/x.log"));
  KOORD_LOG_INFO("still here");
  CHECK(read().find("] still here\n") != std::string::npos);

  // --skip_headers: the message alone; --skip_log_headers: no file header.
  koord::log::Output plain = out;
  plain.file = (dir / "plain.log").string();
  plain.skip_headers = true;
  plain.file_header = false;
  koord::log::setOutput(plain);
  KOORD_LOG_WARNING("bare");
  koord::log::setOutput(koord::log::Output{});
  std::ifstream in(plain.file);
  std::string plain_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(plain_text == "bare\n");
  fs::remove_all(dir);
}
