// BlkIOReconcile's policy without I/O: resourceQOSStrategy.<class>.blkioQOS and a pod's
// koordinator.sh/blkioQOS decoded with Koordinator's defaults, malformed input refused with the
// field named; the cgroup table's block I/O rows and their range checks; the per-device file
// text parsed and compared as the kernel prints it.
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include <optional>
#include <string>

#include "koord/cgroup/cgroup_resource.h"
#include "qosmanager/blkio/blkio_format.h"
#include "qosmanager/blkio/blkio_policy.h"

using namespace koord::roles::koordlet::qosmanager;
using koord::cgroup::CgroupVersion;
using koord::cgroup::Resource;

namespace {

koord::kube::Expected<BlkIOQOSStrategy> decode(std::string_view text) {
  return decodeBlkIOQOSStrategy(boost::json::parse(text).as_object());
}

}  // namespace

TEST_CASE("blkio policy: absent sections leave classes unconfigured, defaults fill blocks",
          "[koordlet][blkio]") {
  auto none = decode(R"({"beClass": {"cpuQOS": {"enable": true}}})");
  REQUIRE(none);
  CHECK_FALSE(none->be.configured);
  CHECK_FALSE(none->root.configured);

  auto s = decode(R"({
    "lsClass": {"blkioQOS": {"enable": true, "blocks": [{"name": "/dev/vdb", "type": "device"}]}},
    "beClass": {"blkioQOS": {"enable": true, "blocks": [
      {"name": "/dev/vda", "type": "device"},
      {"name": "/dev/vdb", "type": "device", "ioCfg": {"readIOPS": 100, "writeIOPS": 200,
        "readBPS": 1048576, "writeBPS": 2097152, "ioWeightPercent": 40}}]}},
    "cgroupRoot": {"blkioQOS": {"enable": false, "blocks": [
      {"name": "/dev/vda", "type": "device", "ioCfg": {"readLatency": 2000,
        "writeLatencyPercent": 90, "enableUserModel": true, "modelReadBPS": 1,
        "modelWriteBPS": 2, "modelReadSeqIOPS": 3, "modelWriteSeqIOPS": 4,
        "modelReadRandIOPS": 5, "modelWriteRandIOPS": 6}}]}}})");
  REQUIRE(s);
  CHECK(s->ls.configured);
  CHECK(s->ls.enable);
  CHECK_FALSE(s->lsr.configured);
  REQUIRE(s->be.blocks.size() == 2);
  // Koordinator's defaults: no throttle, weight 100, 3000 us at p95, the kernel's own model.
  CHECK(s->be.blocks[0].io == BlkIOConfig{});
  CHECK(s->be.blocks[0].io.io_weight_percent == 100);
  CHECK(s->be.blocks[0].io.read_latency == 3000);
  CHECK(s->be.blocks[0].io.write_latency_percent == 95);
  const auto& vdb = s->be.blocks[1];
  CHECK(vdb.name == "/dev/vdb");
  CHECK(vdb.type == BlockType::kDevice);
  CHECK(vdb.io.read_iops == 100);
  CHECK(vdb.io.write_iops == 200);
  CHECK(vdb.io.read_bps == 1048576);
  CHECK(vdb.io.write_bps == 2097152);
  CHECK(vdb.io.io_weight_percent == 40);
  CHECK(s->be.applied().size() == 2);
  // A disabled class applies no blocks: its devices are reset.
  CHECK(s->root.configured);
  CHECK_FALSE(s->root.enable);
  CHECK(s->root.applied().empty());
  REQUIRE(s->root.blocks.size() == 1);
  const auto& root = s->root.blocks[0].io;
  CHECK(root.read_latency == 2000);
  CHECK(root.write_latency == 3000);
  CHECK(root.read_latency_percent == 95);
  CHECK(root.write_latency_percent == 90);
  CHECK(root.enable_user_model);
  CHECK(root.model_read_bps == 1);
  CHECK(root.model_write_rand_iops == 6);
}

TEST_CASE("blkio policy: malformed blkioQOS is refused with the field named", "[koordlet][blkio]") {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"({"beClass": {"blkioQOS": []}})", "resourceQOSStrategy.beClass.blkioQOS"},
      {R"({"beClass": {"blkioQOS": {"enable": "yes"}}})", "beClass.blkioQOS.enable"},
      {R"({"beClass": {"blkioQOS": {"blocks": {}}}})", "beClass.blkioQOS.blocks"},
      {R"({"beClass": {"blkioQOS": {"blocks": [{"type": "device"}]}}})",
       "blocks[0].name: required"},
      {R"({"beClass": {"blkioQOS": {"blocks": [{"name": "/dev/vda"}]}}})",
       "blocks[0].type: must be device, podvolume or volumegroup"},
      {R"({"beClass": {"blkioQOS": {"blocks": [{"name": "/dev/vda", "type": "disk"}]}}})",
       "must be device, podvolume or volumegroup, got \"disk\""},
      {R"({"beClass": {"blkioQOS": {"blocks": [{"name": "/dev/vda", "type": "device",
          "ioCfg": {"readBPS": -1}}]}}})",
       "blocks[0].ioCfg.readBPS: must be in [0, 9223372036854775807], got -1"},
      {R"({"beClass": {"blkioQOS": {"blocks": [{"name": "/dev/vda", "type": "device",
          "ioCfg": {"ioWeightPercent": 0}}]}}})",
       "ioCfg.ioWeightPercent: must be in [1, 100], got 0"},
      {R"({"beClass": {"blkioQOS": {"blocks": [{"name": "/dev/vda", "type": "device",
          "ioCfg": {"writeIOPS": 1.5}}]}}})",
       "ioCfg.writeIOPS"},
      {R"({"cgroupRoot": {"blkioQOS": {"blocks": [{"name": "/dev/vda", "type": "device",
          "ioCfg": {"readLatencyPercent": 101}}]}}})",
       "ioCfg.readLatencyPercent: must be in [0, 100], got 101"},
      {R"({"cgroupRoot": {"blkioQOS": {"blocks": [{"name": "/dev/vda", "type": "device",
          "ioCfg": {"enableUserModel": true, "modelReadBPS": 1}}]}}})",
       "ioCfg.modelWriteBPS: required when enableUserModel is true"},
      {R"({"cgroupRoot": {"blkioQOS": {"blocks": [{"name": "/dev/vda", "type": "device",
          "ioCfg": {"modelReadBPS": 0}}]}}})",
       "ioCfg.modelReadBPS: must be in [1, 9223372036854775807], got 0"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    auto s = decode(c.json);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains(c.error));
  }
}

TEST_CASE("blkio policy: the number of blocks and the length of a name are bounded",
          "[koordlet][blkio]") {
  std::string blocks;
  for (std::size_t i = 0; i <= kMaxBlkIOBlocks; ++i)
    blocks += std::string(i ? "," : "") + R"({"name": "/dev/vda", "type": "device"})";
  auto many = decode(R"({"beClass": {"blkioQOS": {"blocks": [)" + blocks + "]}}}");
  REQUIRE_FALSE(many);
  CHECK_THAT(many.error().message, Catch::Contains("65 blocks, at most 64"));

  auto long_name = decode(R"({"beClass": {"blkioQOS": {"blocks": [{"name": "/dev/)" +
                          std::string(kMaxBlockNameBytes, 'a') + R"(", "type": "device"}]}}})");
  REQUIRE_FALSE(long_name);
  CHECK_THAT(long_name.error().message, Catch::Contains("name: longer than"));
}

TEST_CASE("blkio policy: a pod's koordinator.sh/blkioQOS", "[koordlet][blkio]") {
  auto empty = decodePodBlkIOQOS("");
  REQUIRE(empty);
  CHECK(empty->empty());

  auto blocks = decodePodBlkIOQOS(
      R"({"blocks": [{"name": "data", "type": "podvolume", "ioCfg": {"writeBPS": 4096}},
                     {"name": "vg0", "type": "volumegroup"}]})");
  REQUIRE(blocks);
  REQUIRE(blocks->size() == 2);
  CHECK((*blocks)[0].type == BlockType::kPodVolume);
  CHECK((*blocks)[0].io.write_bps == 4096);
  CHECK((*blocks)[1].type == BlockType::kVolumeGroup);

  for (const char* bad : {"{", "[]", R"({"blocks": [{"name": "x", "type": "?"}]})"}) {
    INFO(bad);
    auto r = decodePodBlkIOQOS(bad);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("koordinator.sh/blkioQOS"));
  }
}

TEST_CASE("blkio cgroup rows: v1 and v2 files, values checked per device",
          "[koordlet][blkio][cgroup]") {
  using koord::cgroup::resourceFile;
  CHECK(resourceFile(Resource::kBlkioReadBps, CgroupVersion::kV1).subsystem == "blkio");
  CHECK(resourceFile(Resource::kBlkioReadBps, CgroupVersion::kV1).file ==
        "blkio.throttle.read_bps_device");
  CHECK(resourceFile(Resource::kBlkioWriteIops, CgroupVersion::kV1).file ==
        "blkio.throttle.write_iops_device");
  CHECK(resourceFile(Resource::kBlkioWriteIops, CgroupVersion::kV2).file == "io.max");
  CHECK(resourceFile(Resource::kBlkioWeight, CgroupVersion::kV1).file == "blkio.cost.weight");
  CHECK(resourceFile(Resource::kBlkioWeight, CgroupVersion::kV2).file == "io.weight");
  CHECK(resourceFile(Resource::kBlkioCostQos, CgroupVersion::kV2).file == "io.cost.qos");
  CHECK(resourceFile(Resource::kBlkioCostModel, CgroupVersion::kV1).file == "blkio.cost.model");
  CHECK(koord::cgroup::resourceByFileName("io.max") == Resource::kBlkioReadBps);
  CHECK(koord::cgroup::resourceByFileName("blkio.throttle.write_bps_device") ==
        Resource::kBlkioWriteBps);
  CHECK(koord::cgroup::ioMaxKey(Resource::kBlkioReadIops) == "riops");
  CHECK(koord::cgroup::ioMaxKey(Resource::kBlkioWeight).empty());

  struct Case {
    Resource r;
    const char* value;
    std::optional<const char*> normalized;  // nullopt: refused
  };
  const Case cases[] = {
      {Resource::kBlkioReadBps, " 254:0   1048576\n", "254:0 1048576"},
      {Resource::kBlkioReadBps, "254:0 0", "254:0 0"},
      {Resource::kBlkioReadBps, "254:0 rbps=max", "254:0 rbps=max"},
      {Resource::kBlkioReadBps, "254:0 rbps=4096", "254:0 rbps=4096"},
      {Resource::kBlkioReadBps, "254:0 wbps=4096", std::nullopt},  // another row's key
      {Resource::kBlkioReadBps, "254:0 rbps=0", std::nullopt},
      {Resource::kBlkioReadBps, "254:0 -1", std::nullopt},
      {Resource::kBlkioReadBps, "254:0 1 2", std::nullopt},
      {Resource::kBlkioReadBps, "254 100", std::nullopt},
      {Resource::kBlkioReadBps, "4096:0 100", std::nullopt},  // major past 12 bits
      {Resource::kBlkioReadBps, "/dev/vda 100", std::nullopt},
      {Resource::kBlkioWriteIops, "8:16 wiops=300", "8:16 wiops=300"},
      {Resource::kBlkioWeight, "254:0 100", "254:0 100"},
      {Resource::kBlkioWeight, "254:0 0", std::nullopt},
      {Resource::kBlkioWeight, "254:0 101", std::nullopt},
      {Resource::kBlkioWeight, "default 50", std::nullopt},
      {Resource::kBlkioCostQos, "254:0 enable=1 ctrl=user rpct=95 rlat=3000 wpct=95 wlat=3000",
       "254:0 enable=1 ctrl=user rpct=95 rlat=3000 wpct=95 wlat=3000"},
      {Resource::kBlkioCostQos, "254:0 enable=0", "254:0 enable=0"},
      {Resource::kBlkioCostQos, "254:0 enable=2", std::nullopt},
      {Resource::kBlkioCostQos, "254:0 rpct=101", std::nullopt},
      {Resource::kBlkioCostQos, "254:0 enable=1 enable=0", std::nullopt},
      {Resource::kBlkioCostQos, "254:0 rbps=1", std::nullopt},
      {Resource::kBlkioCostQos, "254:0 enable", std::nullopt},
      {Resource::kBlkioCostModel, "254:0 ctrl=auto", "254:0 ctrl=auto"},
      {Resource::kBlkioCostModel,
       "254:0 ctrl=user rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6",
       "254:0 ctrl=user rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6"},
      {Resource::kBlkioCostModel, "254:0 ctrl=user rbps=0", std::nullopt},
      {Resource::kBlkioCostModel, "254:0 ctrl=manual", std::nullopt},
  };
  for (const auto& c : cases) {
    INFO(koord::cgroup::resourceName(c.r) << " = " << c.value);
    CHECK(koord::cgroup::resourceWritable(c.r));
    auto v = koord::cgroup::validateValue(c.r, c.value);
    if (c.normalized) {
      REQUIRE(v);
      CHECK(*v == *c.normalized);
    } else {
      REQUIRE_FALSE(v);
      CHECK_THAT(v.error().message, Catch::Contains(koord::cgroup::resourceName(c.r).data()));
    }
  }
}

TEST_CASE("blkio format: device lines parsed, settings compared as the kernel prints them",
          "[koordlet][blkio]") {
  auto lines = parseDeviceLines("default 100\n254:0 50\n8:16  rbps=1 wbps=max riops=max wiops=7\n");
  REQUIRE(lines);
  CHECK(lines->size() == 2);
  CHECK(lines->at("254:0") == "50");
  CHECK(lines->at("8:16") == "rbps=1 wbps=max riops=max wiops=7");
  CHECK_FALSE(parseDeviceLines("254:0\n"));
  std::string many;
  for (std::size_t i = 0; i <= kMaxDeviceLines; ++i)
    many += "8:" + std::to_string(i) + " 1\n";
  CHECK_FALSE(parseDeviceLines(many));

  struct Case {
    std::optional<std::string> current;
    DeviceSetting want;
    bool held;
  };
  const Case cases[] = {
      {std::nullopt, {"0", true}, true},
      {std::nullopt, {"100", false}, false},
      {std::string("100"), {"100", false}, true},
      {std::string("100"), {"0", true}, false},
      {std::string("rbps=1 wbps=max riops=max wiops=7"), {"rbps=1", false}, true},
      {std::string("rbps=1 wbps=max riops=max wiops=7"), {"wbps=max", true}, true},
      {std::string("rbps=1 wbps=max riops=max wiops=7"), {"wiops=max", true}, false},
      // A key the line leaves out is at the kernel's default: what a clearing setting asks for.
      {std::string("rbps=1"), {"wbps=max", true}, true},
      {std::string("rbps=1"), {"wbps=5", false}, false},
      // The kernel prints percentages with two decimals and adds keys of its own.
      {std::string("enable=1 ctrl=user rpct=95.00 rlat=3000 wpct=90.00 wlat=3000 min=1.00 "
                   "max=10000.00"),
       {"enable=1 ctrl=user rpct=95 rlat=3000 wpct=90 wlat=3000", false},
       true},
      {std::string("enable=1 ctrl=user rpct=95.00 rlat=3000 wpct=95.00 wlat=3000"),
       {"enable=1 ctrl=user rpct=95 rlat=2000 wpct=95 wlat=3000", false},
       false},
      {std::string("enable=0 ctrl=auto rpct=0.00"), {"enable=0", true}, true},
      {std::string("ctrl=auto model=linear rbps=1 rseqiops=2"), {"ctrl=auto", false}, true},
  };
  for (const auto& c : cases) {
    INFO(c.current.value_or("(absent)") << " holds " << c.want.value);
    CHECK(deviceSettingHeld(c.current, c.want) == c.held);
  }

  BlkIOConfig io;
  io.read_bps = 1048576;
  io.io_weight_percent = 30;
  CHECK(cgroupDeviceSetting(Resource::kBlkioReadBps, CgroupVersion::kV1, &io) ==
        DeviceSetting{"1048576", false});
  CHECK(cgroupDeviceSetting(Resource::kBlkioReadIops, CgroupVersion::kV1, &io) ==
        DeviceSetting{"0", true});
  CHECK(cgroupDeviceSetting(Resource::kBlkioReadBps, CgroupVersion::kV2, &io) ==
        DeviceSetting{"rbps=1048576", false});
  CHECK(cgroupDeviceSetting(Resource::kBlkioWriteIops, CgroupVersion::kV2, &io) ==
        DeviceSetting{"wiops=max", true});
  CHECK(cgroupDeviceSetting(Resource::kBlkioWeight, CgroupVersion::kV2, &io) ==
        DeviceSetting{"30", false});
  CHECK(cgroupDeviceSetting(Resource::kBlkioWeight, CgroupVersion::kV1, nullptr) ==
        DeviceSetting{"100", true});
  CHECK(costQosSetting(&io).value == "enable=1 ctrl=user rpct=95 rlat=3000 wpct=95 wlat=3000");
  CHECK(costQosSetting(nullptr) == DeviceSetting{"enable=0", true});
  CHECK(costModelSetting(io).value == "ctrl=auto");
  io.enable_user_model = true;
  io.model_read_bps = 10;
  io.model_read_seq_iops = 11;
  io.model_read_rand_iops = 12;
  io.model_write_bps = 20;
  io.model_write_seq_iops = 21;
  io.model_write_rand_iops = 22;
  CHECK(costModelSetting(io).value ==
        "ctrl=user rbps=10 rseqiops=11 rrandiops=12 wbps=20 wseqiops=21 wrandiops=22");
}
