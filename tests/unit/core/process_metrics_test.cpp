// The process_* series: /proc/self/stat parsed as the Go collector reads it, and the families
// every role serves.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "koord/core/metrics.h"
#include "koord/core/process_metrics.h"

using namespace koord::metrics;

namespace {

// The value of an unlabelled series in an exposition, or -1 when absent.
double valueOf(const std::string& text, const std::string& name) {
  const std::string line = "\n" + name + " ";
  const auto at = text.find(line);
  if (at == std::string::npos)
    return -1;
  return std::stod(text.substr(at + line.size()));
}

}  // namespace

TEST_CASE("process stat: fields after the command, whatever the command holds") {
  // A command with a space and a closing parenthesis, as a process may name itself.
  const std::string line =
      "4242 (koord (a) b) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 123456 "
      "104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  auto stat = parseProcessStat(line, 100);
  REQUIRE(stat);
  CHECK(stat->cpu_seconds == Approx(3.0));  // (250 + 50) ticks at 100 per second
  CHECK(stat->start_ticks == 123456);
  CHECK(stat->virtual_bytes == 104857600);
  CHECK(stat->resident_pages == 2560);

  CHECK_FALSE(parseProcessStat("4242 (koord) S 1 2 3", 100));
  CHECK_FALSE(parseProcessStat("no parenthesis at all", 100));
  CHECK_FALSE(parseProcessStat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 ten 50 0 0 20 0 9 0 1 2 3 4 5", 100));
}

TEST_CASE("process metrics: this process's series, as Go components export them") {
  Registry registry;
  ProcessMetrics process(registry);
  const std::string text = registry.render();
  CHECK(text.find("# TYPE process_cpu_seconds_total counter") != std::string::npos);
  CHECK(text.find("# TYPE process_resident_memory_bytes gauge") != std::string::npos);
  CHECK(valueOf(text, "process_cpu_seconds_total") >= 0);
  CHECK(valueOf(text, "process_resident_memory_bytes") > 1024 * 1024);
  CHECK(valueOf(text, "process_virtual_memory_bytes") >=
        valueOf(text, "process_resident_memory_bytes"));
  CHECK(valueOf(text, "process_open_fds") >= 3);  // at least the standard streams
  CHECK(valueOf(text, "process_max_fds") >= valueOf(text, "process_open_fds"));
  CHECK(valueOf(text, "process_virtual_memory_max_bytes") > 0);
  // Started within the last day (the test started it moments ago).
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double start = valueOf(text, "process_start_time_seconds");
  CHECK(start <= now + 1);
  CHECK(start > now - 86400);
}
