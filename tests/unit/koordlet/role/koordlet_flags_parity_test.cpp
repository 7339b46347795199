// Koordinator's koordlet flags are all accepted with its names, types and defaults; those without
// effect in koord are listed once, and only the ones the command line sets are warned about.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "koord/apis/features.h"
#include "koordlet_inert_flags.h"
#include "koordlet_options.h"
#include "log_lines.h"

using namespace koord;
using namespace koord::roles::koordlet;
using namespace std::chrono_literals;
using koord::testing::LogLines;

namespace {

struct Registered {
  KoordletOptions o;
  FeatureGate gates{apis::koordletFeatures()};
  FlagSet flags{"koordlet"};
  Registered() { registerFlags(flags, o, gates, false); }
};

}  // namespace

TEST_CASE("koordlet flags: Koordinator's defaults for the TSDB, audit and NRI flags",
          "[koordlet][flags]") {
  Registered r;
  REQUIRE(r.flags.parse(std::vector<std::string>{}) == FlagSet::Outcome::kRun);
  const KoordletOptions& o = r.o;
  CHECK(o.tsdb_path == "/metric-data/");
  CHECK(o.tsdb_retention_duration == 12h);
  CHECK(o.tsdb_enable_prometheus_metric);
  CHECK(o.tsdb_stripe_size == 16384);
  CHECK(o.tsdb_max_bytes == 100 * 1024 * 1024);
  CHECK(o.tsdb_wal_segment_size == 1024 * 1024);
  CHECK(o.tsdb_max_block_chunk_segment_size == 5 * 1024 * 1024);
  CHECK(o.tsdb_min_block_duration == 10min);
  CHECK(o.tsdb_max_block_duration == 10min);
  CHECK(o.tsdb_head_chunks_write_buffer_size == 1024 * 1024);
  CHECK(o.audit_log_dir == "/var/log/koordlet");
  CHECK(o.audit_verbose == 3);
  CHECK(o.audit_max_disk_space_mb == 16);
  CHECK(o.audit_max_concurrent_readers == 4);
  CHECK(o.audit_max_events_limit == 2048);
  CHECK(o.collect_cpi_timewindow == 10s);
  CHECK(o.collect_node_storage_info_interval == 1s);
  CHECK(o.report_interval == 0s);
  CHECK_FALSE(o.enable_pprof);
  CHECK(o.pprof_addr == ":9317");
  CHECK(o.runtime_hooks_plugin_failure_policy == "Ignore");
  CHECK(o.runtime_hooks_nri_connect_timeout == 6s);
  CHECK(o.runtime_hooks_nri_backoff_duration == 1s);
  CHECK(o.runtime_hooks_nri_backoff_cap ==
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::nanoseconds((std::int64_t{1} << 62) - 1)));
  CHECK(o.runtime_hooks_nri_backoff_steps == 2147483647);
  CHECK(o.runtime_hooks_nri_backoff_factor == 2.0);
  CHECK(o.runtime_hooks_nri_socket_path == "nri/nri.sock");
  CHECK(o.runtime_hooks_nri_plugin_name == "nri/nri.sock");
  CHECK(o.runtime_hooks_nri_plugin_index == "00");
  CHECK(o.metric_cache_checkpoint_interval == 60s);
}

TEST_CASE("koordlet flags: each takes a value of Koordinator's type", "[koordlet][flags]") {
  Registered r;
  const std::vector<std::string> args = {
      "-tsdb-path=/var/lib/koordlet/db",
      "-tsdb-retention-duration=30m",
      "-tsdb-enable-prometheus-metric=false",
      "-tsdb-stripe-size=1024",
      "-tsdb-max-bytes=10737418240",
      "-tsdb-wal-segment-size=2097152",
      "-tsdb-max-block-chunk-segment-size=10485760",
      "-tsdb-min-block-duration=1h",
      "-tsdb-max-block-duration=2h",
      "-tsdb-head-chunks-write-buffer-size=4096",
      "-audit-log-dir=/tmp/audit",
      "-audit-verbose=5",
      "-audit-max-disk-space-mb=32",
      "-audit-max-concurrent-readers=8",
      "-audit-max-events-limit=100",
      "-collect-cpi-timewindow=20s",
      "-collect-node-storage-info-interval=5s",
      "-report-interval=60s",
      "-enable-pprof",
      "-pprof-addr=:6060",
      "-runtime-hooks-plugin-failure-policy=Fail",
      "-runtime-hooks-nri-connect-timeout=10s",
      "-runtime-hooks-nri-backoff-duration=2s",
      "-runtime-hooks-nri-backoff-cap=1m",
      "-runtime-hooks-nri-backoff-steps=5",
      "-runtime-hooks-nri-backoff-factor=1.5",
      "-runtime-hooks-nri-socket-path=/var/run/nri/nri.sock",
      "-runtime-hooks-nri-plugin-name=koordlet_nri",
      "-runtime-hooks-nri-plugin-index=01",
      "-metric-cache-checkpoint-interval=0s",
  };
  REQUIRE(r.flags.parse(args) == FlagSet::Outcome::kRun);
  r.o.node_name = "node-a";
  CHECK_NOTHROW(validate(r.o));
  CHECK(r.o.tsdb_max_bytes == 10737418240);
  CHECK(r.o.tsdb_retention_duration == 30min);
  CHECK(r.o.runtime_hooks_nri_backoff_factor == 1.5);
  CHECK(r.o.audit_max_events_limit == 100);
  CHECK(r.o.enable_pprof);

  Registered bad;
  bad.o.node_name = "node-a";
  REQUIRE(bad.flags.parse({"-runtime-hooks-plugin-failure-policy=Sometimes"}) ==
          FlagSet::Outcome::kRun);
  CHECK_THROWS_WITH(validate(bad.o), Catch::Contains("Sometimes"));
  CHECK_THROWS_AS(bad.flags.parse({"-tsdb-stripe-size=big"}), FlagError);
  CHECK_THROWS_AS(bad.flags.parse({"-config=/etc/kubelet.yaml"}), FlagError);
}

TEST_CASE("koordlet flags: every inert flag is registered, listed once, with a reason",
          "[koordlet][flags]") {
  Registered r;
  const std::string usage = r.flags.usage();
  std::vector<std::string_view> seen;
  for (const InertFlag& f : koordletInertFlags()) {
    INFO(f.name);
    CHECK(usage.find("--" + std::string(f.name) + " ") != std::string::npos);
    CHECK(std::find(seen.begin(), seen.end(), f.name) == seen.end());
    CHECK(f.why.size() > 10);
    seen.push_back(f.name);
  }
  // Flags that do something here are not in the table.
  for (std::string_view live : {"tsdb-path", "tsdb-retention-duration", "audit-log-dir",
                                "collect-res-used-interval", "metric-expire-seconds"})
    CHECK(std::find(seen.begin(), seen.end(), live) == seen.end());
}

TEST_CASE("koordlet flags: only inert flags the command line sets are warned about",
          "[koordlet][flags]") {
  SECTION("none set") {
    Registered r;
    REQUIRE(r.flags.parse({"-kubelet-sync-interval=5s", "-audit-verbose=1"}) ==
            FlagSet::Outcome::kRun);
    LogLines log;
    CHECK(warnInertFlags(r.flags) == 0);
    CHECK(log.problems() == 0);
  }
  SECTION("two set, one of them to its default") {
    Registered r;
    REQUIRE(r.flags.parse({"-tsdb-stripe-size=16384", "-enable-pprof",
                           "-collect-res-used-interval=2s"}) == FlagSet::Outcome::kRun);
    LogLines log;
    CHECK(warnInertFlags(r.flags) == 2);
    CHECK(log.problems() == 2);
    CHECK(log.count("koordlet: -tsdb-stripe-size has no effect: koord's metric cache is not a "
                    "TSDB") == 1);
    CHECK(log.count("koordlet: -enable-pprof has no effect") == 1);
    CHECK(log.count("tsdb-max-bytes") == 0);
  }
}
