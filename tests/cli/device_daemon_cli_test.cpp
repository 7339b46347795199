// koord device-daemon run as an operator runs it: --oneshot from an init script, the loop in a
// DaemonSet, on fake sysfs trees (and a fake libnvidia-ml.so.1 for the NVML path).
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "fake_pci_sysfs.h"
#include "koord/apis/xpu_device_info.h"
#include "koord/http/client.h"
#include "subprocess.h"
#include "yaml_json.h"

using namespace std::chrono_literals;
using koord::apis::XpuDeviceInfo;
using koord::testing::FakePciSysfs;
using koord::testing::run;
using koord::testing::TempTree;

namespace {

std::string bin(const std::string& name) {
  return std::string(KOORD_BIN_DIR) + "/" + name;
}

// The report at `file`; empty when it is missing or not (yet) a report.
std::vector<XpuDeviceInfo> report(const TempTree& out, std::string_view file) {
  auto devices = koord::apis::parseXpuDeviceInfos(out.read(file));
  return devices ? *devices : std::vector<XpuDeviceInfo>{};
}

const XpuDeviceInfo* byBus(const std::vector<XpuDeviceInfo>& devices, std::string_view bus) {
  for (const auto& d : devices) {
    if (d.topology && d.topology->bus_id == bus)
      return &d;
  }
  return nullptr;
}

// One GET with its own client and thread: the loop test asks /readyz once.
koord::Result<koord::http::Response> httpGet(const std::string& url) {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread thread([&] { io.run(); });
  auto client = std::make_unique<koord::http::Client>(io, koord::http::ClientOptions{});
  koord::http::ClientRequest req;
  req.url = url;
  req.timeout = 2s;
  auto r = client->sendSync(req);
  client.reset();
  guard.reset();
  io.stop();
  thread.join();
  return r;
}

void mixedNode(const FakePciSysfs& sys) {
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  sys.add(koord::testing::huaweiNpu("0000:c1:00.0"));
  sys.add(koord::testing::mellanoxRdmaNic("0000:5e:00.0"));
  sys.add(koord::testing::intelSataController("0000:00:17.0"));
}

}  // namespace

TEST_CASE("device-daemon --oneshot writes the fake node's report and exits 0", "[cli]") {
  FakePciSysfs sys;
  mixedNode(sys);
  TempTree out("koord-cli-dd");
  auto r = run({bin("koord"), "device-daemon", "--oneshot", "--sysfs-root=" + sys.root().string(),
                "--prints-output-file=" + out.path("xpu-device-infos/ic-device").string()},
               {{"LD_LIBRARY_PATH", std::nullopt}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // No NVIDIA driver on the test machine: said once, at info, and the GPU still reported.
  CHECK(std::regex_search(r.err, std::regex("(^|\n)I[^\n]*libnvidia-ml.so.1 not loaded")));
  CHECK_FALSE(std::regex_search(r.err, std::regex("(^|\n)[WE]")));
  auto devices = report(out, "xpu-device-infos/ic-device");
  REQUIRE(devices.size() == 3);
  CHECK(byBus(devices, "0000:3b:00.0")->vendor == "nvidia");
  CHECK(byBus(devices, "0000:c1:00.0")->vendor == "huawei");
  CHECK(byBus(devices, "0000:5e:00.0")->resources.count("koordinator.sh/rdma") == 1);
  CHECK(byBus(devices, "0000:00:17.0") == nullptr);
}

TEST_CASE("device-daemon --oneshot describes NVIDIA GPUs through libnvidia-ml.so.1", "[cli]") {
  FakePciSysfs sys;
  sys.add(koord::testing::nvidiaGpu("0000:3b:00.0"));
  sys.add(koord::testing::nvidiaGpu("0000:86:00.0"));
  TempTree out("koord-cli-dd");
  // The fake library answers for 3b:00.0 and loses 86:00.0 when asked for its memory.
  auto r = run({bin("koord-device-daemon"), "--oneshot"},
               {{"LD_LIBRARY_PATH", KOORD_FAKE_NVML_DIR},
                {"KDD_SYSFS_ROOT", sys.root().string()},
                {"KDD_PRINTS_OUTPUT_FILE", out.path("ic-device").string()}});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto devices = report(out, "ic-device");
  REQUIRE(devices.size() == 2);
  const XpuDeviceInfo* a = byBus(devices, "0000:3b:00.0");
  REQUIRE(a != nullptr);
  CHECK(a->model == "NVIDIA-H100-80GB-HBM3");
  CHECK(a->uuid == "GPU-11111111-2222-3333-4444-555555555555");
  CHECK(a->minor == "1");
  CHECK(a->resources.at("koordinator.sh/gpu-memory") == "81559Mi");
  CHECK(a->status->healthy);
  REQUIRE(a->topology->p2p_links.size() == 1);  // the fake's GPUs share NVLink
  CHECK(a->topology->p2p_links[0].peer_minor == "0");
  CHECK(a->topology->p2p_links[0].type == "NVLink");
  const XpuDeviceInfo* b = byBus(devices, "0000:86:00.0");
  REQUIRE(b != nullptr);
  CHECK_FALSE(b->status->healthy);
  CHECK(b->status->err_message.find("GPU is lost") != std::string::npos);
}

TEST_CASE("device-daemon --oneshot exits 1 when the report cannot be written", "[cli]") {
  FakePciSysfs sys;
  mixedNode(sys);
  TempTree out("koord-cli-dd");
  out.write("run", "a file where a directory should be\n");
  std::string file = out.path("run/xpu-device-infos/ic-device").string();
  auto r = run({bin("koord-device-daemon"), "--oneshot", "--prints-output-file=" + file},
               {{"KDD_SYSFS_ROOT", sys.root().string()}});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot write " + file) != std::string::npos);

  // A sysfs root without PCI devices is a mistake in the mounts, not an empty node.
  auto wrong_root =
      run({bin("koord-device-daemon"), "--oneshot", "--sysfs-root=" + out.path("x").string(),
           "--prints-output-file=" + out.path("ic-device").string()});
  CHECK(wrong_root.exit_code == 1);
  CHECK_FALSE(std::filesystem::exists(out.path("ic-device")));

  // A config file that does not read stops the daemon before it writes anything.
  out.write("bad.yaml", "version: v1\nflags:\n  kdd:\n    sleepIntreval: 10s\n");
  auto config = run(
      {bin("koord-device-daemon"), "--oneshot", "--config-file=" + out.path("bad.yaml").string(),
       "--prints-output-file=" + out.path("ic-device").string()},
      {{"KDD_SYSFS_ROOT", sys.root().string()}});
  CHECK(config.exit_code == 1);
  CHECK(config.err.find("flags.kdd.sleepIntreval: unknown key") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out.path("ic-device")));
}

TEST_CASE("device-daemon --config-file: Koordinator's file, flags winning, SIGHUP re-reads it",
          "[cli]") {
  FakePciSysfs sys;
  mixedNode(sys);
  TempTree out("koord-cli-dd");
  // oneshot and the output file from the file alone.
  out.write("kdd.yaml", "version: v1\nflags:\n  kdd:\n    oneshot: true\n    printsOutputFile: " +
                            out.path("from-file").string() + "\n");
  auto once = run({bin("koord-device-daemon"), "--config-file=" + out.path("kdd.yaml").string()},
                  {{"KDD_SYSFS_ROOT", sys.root().string()}, {"LD_LIBRARY_PATH", std::nullopt}});
  INFO(once.err);
  REQUIRE(once.exit_code == 0);
  CHECK(report(out, "from-file").size() == 3);
  // The command line wins over the file.
  auto flag_wins =
      run({bin("koord-device-daemon"), "--prints-output-file=" + out.path("from-flag").string()},
          {{"KDD_SYSFS_ROOT", sys.root().string()},
           {"KDD_CONFIG_FILE", out.path("kdd.yaml").string()},
           {"LD_LIBRARY_PATH", std::nullopt}});
  CHECK(flag_wins.exit_code == 0);
  CHECK(report(out, "from-flag").size() == 3);

  // The loop: an hour between rounds, so only SIGHUP makes the second report.
  out.write("loop.yaml", "flags:\n  kdd:\n    sleepInterval: 1h\n    printsOutputFile: " +
                             out.path("first").string() + "\n");
  koord::testing::Subprocess daemon(
      {bin("koord-device-daemon"), "--config-file=" + out.path("loop.yaml").string()},
      {{"KDD_SYSFS_ROOT", sys.root().string()}, {"LD_LIBRARY_PATH", std::nullopt}});
  auto waitFor = [&](std::string_view file) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (report(out, file).empty() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(50ms);
    return report(out, file);
  };
  REQUIRE(waitFor("first").size() == 3);
  // A file that no longer reads keeps the settings in force; a good one applies at once.
  out.write("loop.yaml", "flags: [\n");
  daemon.signal(SIGHUP);
  std::this_thread::sleep_for(300ms);
  out.write("loop.yaml", "flags:\n  kdd:\n    sleepInterval: 1h\n    printsOutputFile: " +
                             out.path("second").string() + "\n");
  daemon.signal(SIGHUP);
  CHECK(waitFor("second").size() == 3);
  daemon.signal(SIGTERM);
  auto r = daemon.wait(10s);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("SIGHUP: --config-file") != std::string::npos);
  CHECK(r.err.find("the settings in force stay") != std::string::npos);
}

TEST_CASE("device-daemon rewrites the report every --sleep-interval and stops on SIGTERM",
          "[cli]") {
  FakePciSysfs sys;
  mixedNode(sys);
  TempTree out("koord-cli-dd");
  int port = koord::testing::freeLoopbackPort();
  koord::testing::Subprocess daemon({bin("koord"), "device-daemon", "--sleep-interval=100ms",
                                     "--no-timestamp", "--sysfs-root=" + sys.root().string(),
                                     "--prints-output-file=" + out.path("ic-device").string(),
                                     "--metrics-addr=127.0.0.1:" + std::to_string(port)},
                                    {{"LD_LIBRARY_PATH", std::nullopt}});

  auto waitFor = [&](std::size_t count) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (report(out, "ic-device").size() != count && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(50ms);
    return report(out, "ic-device");
  };
  REQUIRE(waitFor(3).size() == 3);
  auto ready = httpGet("http://127.0.0.1:" + std::to_string(port) + "/readyz");
  REQUIRE(ready.has_value());
  CHECK(ready->status == 200);

  sys.remove("0000:c1:00.0");  // the NPU leaves: the next round's report lacks it
  auto after = waitFor(2);
  REQUIRE(after.size() == 2);
  CHECK(byBus(after, "0000:c1:00.0") == nullptr);

  auto stop_asked = std::chrono::steady_clock::now();
  daemon.signal(SIGTERM);
  auto r = daemon.wait(10s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(std::chrono::steady_clock::now() - stop_asked < 3s);  // not held to the 10 s deadline
  // --no-timestamp: "I  1234 file.cpp:12] ..." with no date or time after the severity.
  std::istringstream lines(r.err);
  std::string first;
  std::getline(lines, first);
  CHECK(std::regex_search(first, std::regex(R"(^[IWE] +\d+ [\w.]+:\d+\] )")));
  CHECK_FALSE(std::regex_search(r.err, std::regex(R"((^|\n)[IWE]\d{4} \d\d:\d\d)")));
}

TEST_CASE("device-daemon: deploy/'s DaemonSet runs as written", "[cli]") {
  auto docs = koord::testing::yamlFileToJson(std::string(KOORD_SOURCE_DIR) +
                                             "/deploy/manifests/koord-device-daemon.yaml");
  REQUIRE(docs.size() == 1);
  const auto& ds = docs[0].as_object();
  CHECK(ds.at("kind") == "DaemonSet");
  CHECK(ds.at("metadata").at("namespace") == "koordinator-system");
  const auto& pod = ds.at("spec").at("template").at("spec").as_object();
  const auto& container = pod.at("containers").at(0).as_object();
  // The role's link in koord's image.
  CHECK(container.at("command") == boost::json::array{"/usr/local/bin/koord-device-daemon"});
  bool node_name = false;
  for (const auto& e : container.at("env").as_array()) {
    if (e.at("name") == "NODE_NAME")
      node_name = e.at("valueFrom").at("fieldRef").at("fieldPath") == "spec.nodeName";
  }
  CHECK(node_name);
  std::map<std::string, std::string> host_paths;  // volume name -> host path
  for (const auto& v : pod.at("volumes").as_array())
    host_paths[std::string(v.at("name").as_string())] = v.at("hostPath").at("path").as_string();
  std::map<std::string, std::pair<std::string, bool>> mounts;  // host path -> (mount, read-only)
  for (const auto& m : container.at("volumeMounts").as_array()) {
    const auto& o = m.as_object();
    mounts[host_paths[std::string(o.at("name").as_string())]] = {
        std::string(o.at("mountPath").as_string()),
        o.contains("readOnly") && o.at("readOnly").as_bool()};
  }
  CHECK(mounts["/sys"] == std::pair<std::string, bool>{"/host-sys", true});
  CHECK(mounts["/var/run/koordlet/xpu-device-infos"].first == "/var/run/koordlet/xpu-device-infos");

  // The container's own arguments, with the host paths swapped for test ones, once.
  FakePciSysfs sys;
  mixedNode(sys);
  TempTree out("koord-cli-dd");
  std::vector<std::string> argv{bin("koord"), "device-daemon"};
  for (const auto& a : container.at("args").as_array()) {
    std::string arg(a.as_string());
    if (arg.rfind("--sysfs-root=", 0) == 0) {
      CHECK(arg == "--sysfs-root=" + mounts["/sys"].first);
      arg = "--sysfs-root=" + sys.root().string();
    } else if (arg.rfind("--prints-output-file=/var/run/koordlet/", 0) == 0) {
      arg = "--prints-output-file=" + out.path(arg.substr(39)).string();
    }
    argv.push_back(arg);
  }
  argv.push_back("--oneshot");
  auto r = run(argv, {{"LD_LIBRARY_PATH", std::nullopt}});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(report(out, "xpu-device-infos/ic-device").size() == 3);
}

TEST_CASE("device-daemon: deploy/'s systemd oneshot unit runs as written", "[cli]") {
  std::ifstream unit(std::string(KOORD_SOURCE_DIR) +
                     "/deploy/device-daemon/koord-device-daemon.service");
  REQUIRE(unit.good());
  std::string text, line, exec;
  std::map<std::string, std::optional<std::string>> env{{"LD_LIBRARY_PATH", std::nullopt}};
  for (bool continued = false; std::getline(unit, line);) {
    text += line + "\n";
    if (line.rfind("Environment=", 0) == 0) {
      auto eq = line.find('=', 12);
      env[line.substr(12, eq - 12)] = line.substr(eq + 1);
    }
    if (line.rfind("ExecStart=", 0) == 0 || continued) {
      continued = !line.empty() && line.back() == '\\';
      exec += (exec.empty() ? line.substr(10) : line) + " ";
      if (continued)
        exec.erase(exec.size() - 2);
    }
  }
  CHECK(text.find("\nType=oneshot\n") != std::string::npos);
  CHECK(text.find("\nBefore=kubelet.service\n") != std::string::npos);

  FakePciSysfs sys;
  mixedNode(sys);
  TempTree out("koord-cli-dd");
  env["KDD_SYSFS_ROOT"] = sys.root().string();
  std::vector<std::string> argv;
  std::istringstream words(exec);
  for (std::string w; words >> w;) {
    if (w == "/usr/local/bin/koord-device-daemon")
      w = bin("koord-device-daemon");
    else if (w.rfind("--prints-output-file=/var/run/koordlet/", 0) == 0)
      w = "--prints-output-file=" + out.path(w.substr(39)).string();
    argv.push_back(w);
  }
  REQUIRE(argv.size() >= 2);
  CHECK(argv[1] == "--oneshot");
  auto r = run(argv, env);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(report(out, "xpu-device-infos/ic-device").size() == 3);
  // Environment=KDD_NO_TIMESTAMP=true: journald's lines carry no second timestamp.
  CHECK_FALSE(std::regex_search(r.err, std::regex(R"((^|\n)[IWE]\d{4} \d\d:)")));
}
