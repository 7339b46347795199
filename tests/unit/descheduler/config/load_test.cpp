// loadDeschedulerConfig as `koord descheduler --config` calls it once at startup: a bounded read
// of the file, and one warning for each field set to a value koord does not act on.
#include <catch2/catch.hpp>

#include <string>

#include "config/descheduler_config.h"
#include "koord/kube/config_file.h"
#include "log_lines.h"
#include "temp_tree.h"

using namespace koord::roles::descheduler;
using namespace koord::roles::descheduler::config;

namespace {

struct NoArgs final : PluginArgs {};

class Evictor final : public EvictPlugin {
 public:
  std::string_view name() const override { return "MigrationController"; }
  bool evict(const Pod&, const EvictOptions&) override { return false; }
};

PluginRegistry registry() {
  PluginRegistry r;
  r.add("MigrationController",
        makePluginFactory<NoArgs>(
            [](const boost::json::value*) -> koord::Expected<NoArgs> { return NoArgs{}; },
            [](std::shared_ptr<const NoArgs>, FrameworkHandle&) {
              return std::make_shared<Evictor>();
            },
            "wrong args"));
  return r;
}

DeschedulerConfig parse(const std::string& text) {
  auto c = parseDeschedulerConfigText(text, registry());
  INFO((c ? std::string() : c.error().message));
  REQUIRE(c.has_value());
  return std::move(*c);
}

// A valid configuration padded with a comment to exactly `size` bytes.
std::string padded(std::size_t size) {
  std::string text = "dryRun: true\n#";
  text.append(size - text.size() - 1, 'x');
  text += '\n';
  return text;
}

}  // namespace

TEST_CASE("a configuration file over the size bound is refused, naming the path and the limit") {
  koord::testing::TempTree tree("koord-desched-config");
  tree.write("at-limit.yaml", padded(koord::kube::kMaxConfigFileBytes));
  tree.write("over-limit.yaml", padded(koord::kube::kMaxConfigFileBytes + 1));

  auto at = loadDeschedulerConfig(tree.path("at-limit.yaml").string(), registry());
  INFO((at ? std::string() : at.error().message));
  REQUIRE(at.has_value());
  CHECK(at->dry_run);

  const std::string over_path = tree.path("over-limit.yaml").string();
  auto over = loadDeschedulerConfig(over_path, registry());
  REQUIRE_FALSE(over.has_value());
  CHECK(over.error().message ==
        over_path + ": larger than 4 MiB, the most a configuration file may hold");

  const std::string missing = tree.path("missing.yaml").string();
  auto gone = loadDeschedulerConfig(missing, registry());
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().message == missing + ": cannot read: No such file or directory");
}

TEST_CASE("fields koord accepts without effect are listed only when set to a non-default value") {
  SECTION("Koordinator's shipped values are the defaults") {
    const auto c = parse(R"(
enableContentionProfiling: true
enableProfiling: true
healthzBindAddress: 0.0.0.0:10251
metricsBindAddress: ":10251"
)");
    CHECK(c.inert_fields.empty());
  }
  SECTION("each changed field is one line naming it") {
    const auto c = parse(R"(
healthzBindAddress: 127.0.0.1:9000
metricsBindAddress: 10.0.0.1
enableProfiling: false
)");
    REQUIRE(c.inert_fields.size() == 3);
    CHECK(c.inert_fields[0] ==
          "healthzBindAddress: \"127.0.0.1:9000\" has no effect in koord, which serves /healthz "
          "and /metrics on --address/--port");
    CHECK(c.inert_fields[1].starts_with("metricsBindAddress: \"10.0.0.1\" has no effect"));
    CHECK(c.inert_fields[2] ==
          "enableProfiling: false has no effect in koord, which serves no profiling endpoints");
    // Unset, contention profiling follows profiling: not a change of its own.
    CHECK_FALSE(c.enable_contention_profiling);
  }
  SECTION("contention profiling set apart from profiling") {
    const auto c = parse("enableContentionProfiling: false\n");
    REQUIRE(c.inert_fields.size() == 1);
    CHECK(c.inert_fields[0].starts_with("enableContentionProfiling: false has no effect"));
  }
}

TEST_CASE("loading a configuration logs one warning per inert field, naming the file") {
  koord::testing::TempTree tree("koord-desched-config");
  tree.write("c.yaml", "healthzBindAddress: 127.0.0.1:9000\nenableProfiling: false\n");
  const std::string path = tree.path("c.yaml").string();
  koord::testing::LogLines log;
  auto c = loadDeschedulerConfig(path, registry());
  REQUIRE(c.has_value());
  CHECK(log.problems() == 2);
  CHECK(log.count(path + ": healthzBindAddress: \"127.0.0.1:9000\" has no effect in koord") == 1);
  CHECK(log.count(path + ": enableProfiling: false has no effect in koord") == 1);
}
