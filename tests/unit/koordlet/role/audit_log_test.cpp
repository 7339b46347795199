// The audit log on disk: rotation keeps it within its bound and removes only its own files;
// the reverse cursor reads newest first across rotations that happen while it pages, and skips
// lines it cannot take.
#include "audit/event_log.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "audit/audit_event.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet::audit;
using koord::testing::TempTree;
namespace fs = std::filesystem;

namespace {

std::uintmax_t auditBytes(const fs::path& dir) {
  std::uintmax_t total = 0;
  for (const auto& path : auditFilesNewestFirst(dir))
    total += fs::file_size(path);
  return total;
}

std::string line(int i) {
  return "{\"reason\":\"r" + std::to_string(i) + "\",\"message\":\"" + std::string(150, 'm') +
         "\"}";
}

constexpr std::uint64_t kDisk = 64 << 10;
constexpr std::size_t kFile = 16 << 10;

}  // namespace

TEST_CASE("audit log: rotation keeps the files within the disk bound", "[koordlet][audit]") {
  TempTree tree("koord-audit");
  const fs::path dir = tree.path("log");
  tree.write("log/koordlet.INFO", "not ours");
  tree.write("log/audit-notatime-0.log", "not ours either");
  EventLogWriter writer(dir, kDisk, kFile);
  CHECK(writer.fileBytes() == kFile);
  CHECK(writer.maxFiles() == 4);
  for (int i = 0; i < 2000; ++i) {
    REQUIRE(writer.append(line(i)).has_value());
    REQUIRE(auditBytes(dir) <= kDisk);
  }
  const auto files = auditFilesNewestFirst(dir);
  CHECK(files.size() == 4);
  CHECK(files.front().filename() == "audit.log");
  for (const auto& f : files)
    CHECK(fs::file_size(f) <= kFile);
  // What is not the audit log's own is never removed.
  CHECK(tree.read("log/koordlet.INFO") == "not ours");
  CHECK(tree.read("log/audit-notatime-0.log") == "not ours either");
}

TEST_CASE("audit log: a smaller bound than the last run's applies at once", "[koordlet][audit]") {
  TempTree tree("koord-audit");
  const fs::path dir = tree.path("log");
  {
    EventLogWriter big(dir, 8 * kDisk, kFile);
    for (int i = 0; i < 3000; ++i)
      REQUIRE(big.append(line(i)).has_value());
  }
  CHECK(auditFilesNewestFirst(dir).size() > 4);
  EventLogWriter small(dir, kDisk, kFile);
  // The old audit.log plus the rotated files kept.
  CHECK(auditFilesNewestFirst(dir).size() <= 4);
}

TEST_CASE("audit log: the disk bound must leave room for an event", "[koordlet][audit]") {
  TempTree tree("koord-audit");
  CHECK_THROWS_AS(EventLogWriter(tree.path("log"), 1024, kFile), std::invalid_argument);
}

TEST_CASE("audit log: the cursor reads newest first across rotations while it pages",
          "[koordlet][audit]") {
  TempTree tree("koord-audit");
  const fs::path dir = tree.path("log");
  EventLogWriter writer(dir, kDisk, kFile);
  int written = 0;
  for (; written < 250; ++written)
    REQUIRE(writer.append(line(written)).has_value());

  EventLogCursor cursor(dir);
  std::vector<std::string> seen;
  auto page = cursor.take(10);
  REQUIRE(page.size() == 10);
  seen.insert(seen.end(), page.begin(), page.end());
  // audit.log is renamed under the cursor, and new lines come after it started.
  for (; written < 330; ++written)
    REQUIRE(writer.append(line(written)).has_value());
  while (!cursor.exhausted()) {
    page = cursor.take(7);
    seen.insert(seen.end(), page.begin(), page.end());
  }
  REQUIRE(seen.size() > 10);
  // Newest first from line 249, each once, down to the oldest line still on disk.
  for (std::size_t i = 0; i < seen.size(); ++i) {
    INFO(i);
    CHECK(seen[i] == line(249 - static_cast<int>(i)));
  }
  CHECK(cursor.take(5).empty());
}

TEST_CASE("audit log: oversized, empty and unterminated lines", "[koordlet][audit]") {
  TempTree tree("koord-audit");
  const std::string huge(kMaxEventLineBytes + 10, 'x');
  tree.write("log/audit-2024-01-01-00-00-00-0.log", "first\n" + huge + "\nsecond\n\n");
  tree.write("log/audit.log", huge + "\nthird\nfourth");
  EventLogCursor cursor(tree.path("log"));
  auto lines = cursor.take(100);
  CHECK(lines == std::vector<std::string>{"fourth", "third", "second", "first"});
  CHECK(cursor.exhausted());
}

TEST_CASE("audit log: an empty directory has nothing to read", "[koordlet][audit]") {
  TempTree tree("koord-audit");
  EventLogCursor cursor(tree.path("none"));
  CHECK(cursor.take(3).empty());
  CHECK(cursor.exhausted());
}

TEST_CASE("audit event: Koordinator's JSON fields, empty ones left out", "[koordlet][audit]") {
  Event e;
  e.created_at = "2024-05-01T10:00:00.5+08:00";
  e.type = "pod";
  e.namespace_ = "ns";
  e.name = "be-0";
  e.reason = "EvictPodByNodeMemoryUsage";
  e.message = "node memory usage 95% over 70%";
  const std::string text = toJson(e);
  CHECK(text ==
        "{\"createdAt\":\"2024-05-01T10:00:00.5+08:00\",\"type\":\"pod\",\"namespace\":\"ns\","
        "\"name\":\"be-0\",\"reason\":\"EvictPodByNodeMemoryUsage\",\"message\":\"node memory "
        "usage 95% over 70%\"}");
  auto back = parseEvent(text);
  REQUIRE(back.has_value());
  CHECK(back->name == "be-0");
  CHECK(back->container.empty());
  CHECK_FALSE(parseEvent("[1]").has_value());
  CHECK_FALSE(parseEvent("{\"name\":3}").has_value());
  CHECK_FALSE(parseEvent("{\"name\"").has_value());

  // A message past its bound is cut at a character boundary.
  e.message = std::string(kMaxMessageBytes - 1, 'a') + "\xc3\xa9";
  auto cut = parseEvent(toJson(e));
  REQUIRE(cut.has_value());
  CHECK(cut->message == std::string(kMaxMessageBytes - 1, 'a'));
}

TEST_CASE("audit event: createdAt is RFC 3339 with nanoseconds as Go prints it",
          "[koordlet][audit]") {
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1714557600)) +
                 std::chrono::milliseconds(250);
  const std::string text = formatCreatedAt(t);
  CAPTURE(text);
  CHECK(text.size() >= 20);
  CHECK(text.find(".25") == 19);
  CHECK((text.back() == 'Z' || text[text.size() - 6] == '+' || text[text.size() - 6] == '-'));
  CHECK(formatCreatedAt(std::chrono::system_clock::time_point(std::chrono::seconds(1714557600)))
            .find('.') == std::string::npos);
}
