// The klog and component-base flags every role accepts (--log_file, --log_dir, --logging-format,
// ...) and --version, run on the real binary as Koordinator's manifests and operators pass them.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "subprocess.h"
#include "temp_tree.h"

using koord::testing::run;

namespace {

std::string bin(const std::string& name) {
  return std::string(KOORD_BIN_DIR) + "/" + name;
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The manager exits 1 at once without an API server: enough to see where its lines go.
std::vector<std::string> managerWithout(std::vector<std::string> extra) {
  std::vector<std::string> argv = {bin("koord"), "manager", "--kubeconfig=/nonexistent/kc",
                                   "--metrics-addr=127.0.0.1:0", "--health-probe-addr=127.0.0.1:0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

TEST_CASE("every role prints its version with --version and Go's version.Info with =raw", "[cli]") {
  for (const char* role : {"koord-manager", "koord-scheduler", "koord-descheduler", "koordlet",
                           "koord-device-daemon", "koord-runtime-proxy"}) {
    INFO(role);
    auto plain = run({bin(role), "--version"}, {{"NODE_NAME", std::nullopt}});
    CHECK(plain.exit_code == 0);
    CHECK(plain.out.starts_with(std::string(role) + " "));
    CHECK(plain.err.empty());
    auto go_style = run({bin(role), "-version=raw"});
    CHECK(go_style.exit_code == 0);
    CHECK(go_style.out.starts_with("version.Info{Major:\"\", Minor:\"\", GitVersion:\""));
    CHECK(go_style.out.find("Platform:\"linux/") != std::string::npos);
  }
  // --version=false is no request: the role goes on (and here stops at the bad flag after it).
  auto off = run({bin("koord-scheduler"), "--version=false", "--bogus"});
  CHECK(off.exit_code == 2);
}

TEST_CASE("a log file: lines go to it, errors to stderr too (--logtostderr=false --log_file)",
          "[cli]") {
  koord::testing::TempTree tree;
  const auto file = tree.root() / "manager.log";
  auto r = run(managerWithout({"--logtostderr=false", "--log_file=" + file.string()}));
  CHECK(r.exit_code == 1);
  const std::string text = readFile(file);
  CHECK(text.starts_with("Log file created at: "));
  CHECK(text.find("/nonexistent/kc") != std::string::npos);
  // klog's --stderrthreshold (ERROR) copies the error to stderr; info lines stay in the file.
  CHECK(r.err.find("/nonexistent/kc") != std::string::npos);
  CHECK(r.err.find("\nI") == std::string::npos);
  CHECK_FALSE(r.err.starts_with("I"));

  // A file that cannot be opened is a configuration fault naming it.
  auto bad = run(managerWithout({"--logtostderr=false", "--log_file=/nonexistent/dir/m.log"}));
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("/nonexistent/dir/m.log") != std::string::npos);
}

TEST_CASE(
    "log_dir: klog's file name and <program>.INFO link, and a line saying what is not "
    "written",
    "[cli]") {
  koord::testing::TempTree tree;
  auto r = run(managerWithout(
      {"--logtostderr=false", "--log_dir=" + tree.root().string(), "--skip_log_headers"}));
  CHECK(r.exit_code == 1);
  const auto link = tree.root() / "koord-manager.INFO";
  REQUIRE(std::filesystem::is_symlink(link));
  const std::string target = std::filesystem::read_symlink(link).string();
  CHECK(target.starts_with("koord-manager."));
  CHECK(target.find(".log.INFO.") != std::string::npos);
  const std::string text = readFile(link);
  CHECK_FALSE(text.starts_with("Log file created at: "));
  CHECK(text.find("flag --log_dir has no effect in koord: every line goes to the INFO file") !=
        std::string::npos);
}

TEST_CASE("logging-format=json writes component-base's JSON lines", "[cli]") {
  auto r = run(managerWithout({"--logging-format=json"}));
  CHECK(r.exit_code == 1);
  std::istringstream lines(r.err);
  std::string line;
  int parsed = 0;
  bool named = false;
  while (std::getline(lines, line)) {
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    REQUIRE_FALSE(ec);
    REQUIRE(v.is_object());
    CHECK(v.as_object().contains("ts"));
    CHECK(v.as_object().contains("caller"));
    if (v.as_object().at("msg").as_string().find("/nonexistent/kc") != boost::json::string::npos)
      named = true;
    ++parsed;
  }
  CHECK(parsed > 0);
  CHECK(named);
}

TEST_CASE("bad logging values exit 2 naming the flag, and flags without effect say so", "[cli]") {
  auto format = run({bin("koord"), "scheduler", "--logging-format=yaml"});
  CHECK(format.exit_code == 2);
  CHECK(format.err.find("--logging-format") != std::string::npos);
  auto threshold = run({bin("koord"), "scheduler", "--stderrthreshold=LOUD"});
  CHECK(threshold.exit_code == 2);
  CHECK(threshold.err.find("stderrthreshold") != std::string::npos);
  auto size = run({bin("koord"), "scheduler", "--log_file_max_size=-1"});
  CHECK(size.exit_code == 2);

  auto accepted = run(managerWithout({"--vmodule=manager*=4", "--log_backtrace_at=main.go:1",
                                      "--log-flush-frequency=1s", "--add_dir_header",
                                      "--skip_headers=false", "--one_output"}));
  CHECK(accepted.exit_code == 1);
  for (const char* flag : {"vmodule", "log_backtrace_at", "log-flush-frequency", "one_output"}) {
    INFO(flag);
    CHECK(accepted.err.find(std::string("flag --") + flag + " has no effect") != std::string::npos);
  }
  // --add_dir_header puts the source file's path in the header.
  CHECK(accepted.err.find("/role_app.cpp:") != std::string::npos);
}
