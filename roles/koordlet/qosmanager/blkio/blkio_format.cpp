#include "qosmanager/blkio/blkio_format.h"

#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace koord::roles::koordlet::qosmanager {

namespace {

constexpr std::string_view kBlank = " \t\r";

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    const auto first = s.find_first_not_of(kBlank);
    if (first == std::string_view::npos)
      return out;
    s.remove_prefix(first);
    const auto end = s.find_first_of(kBlank);
    out.push_back(s.substr(0, end));
    if (end == std::string_view::npos)
      return out;
    s.remove_prefix(end);
  }
}

bool isDeviceNumber(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon + 1 == s.size())
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != colon && (s[i] < '0' || s[i] > '9'))
      return false;
  }
  return true;
}

std::optional<double> number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

bool sameValue(std::string_view a, std::string_view b) {
  if (a == b)
    return true;
  auto x = number(a);
  auto y = number(b);
  return x && y && *x == *y;
}

}  // namespace

kube::Expected<std::map<std::string, std::string>> parseDeviceLines(std::string_view text) {
  std::map<std::string, std::string> out;
  std::size_t lines = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto w = words(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (w.empty() || !isDeviceNumber(w.front()))
      continue;
    if (++lines > kMaxDeviceLines)
      return kube::makeKubeError(fmt::format("more than {} device lines", kMaxDeviceLines));
    if (w.size() < 2)
      return kube::makeKubeError(fmt::format("device {} has no setting", w.front()));
    // From the first word after the number to the end of the last, blanks inside kept.
    const char* begin = w[1].data();
    const char* end = w.back().data() + w.back().size();
    out[std::string(w.front())] = std::string(begin, static_cast<std::size_t>(end - begin));
  }
  return out;
}

bool deviceSettingHeld(const std::optional<std::string>& current, const DeviceSetting& want) {
  if (!current)
    return want.clears;
  const auto have = words(*current);
  const auto wanted = words(want.value);
  for (const auto token : wanted) {
    const auto eq = token.find('=');
    if (eq == std::string_view::npos) {
      if (have.empty() || !sameValue(have.front(), token))
        return false;
      continue;
    }
    const auto key = token.substr(0, eq + 1);
    // A key the line leaves out is at the kernel's default, which is what a clearing setting
    // asks for.
    bool held = want.clears;
    for (const auto h : have) {
      if (h.substr(0, key.size()) == key) {
        held = sameValue(h.substr(key.size()), token.substr(eq + 1));
        break;
      }
    }
    if (!held)
      return false;
  }
  return true;
}

DeviceSetting cgroupDeviceSetting(cgroup::Resource r, cgroup::CgroupVersion v,
                                  const BlkIOConfig* io) {
  if (r == cgroup::Resource::kBlkioWeight) {
    if (io == nullptr)
      return {"100", true};
    return {std::to_string(io->io_weight_percent), false};
  }
  std::int64_t n = 0;
  if (io != nullptr) {
    switch (r) {
      case cgroup::Resource::kBlkioReadIops:
        n = io->read_iops;
        break;
      case cgroup::Resource::kBlkioWriteIops:
        n = io->write_iops;
        break;
      case cgroup::Resource::kBlkioReadBps:
        n = io->read_bps;
        break;
      case cgroup::Resource::kBlkioWriteBps:
        n = io->write_bps;
        break;
      default:
        break;
    }
  }
  // 0 is "no limit": v1 drops the device's line for it, v2 spells it "max".
  if (v == cgroup::CgroupVersion::kV1)
    return {std::to_string(n), n == 0};
  return {
      fmt::format("{}={}", cgroup::ioMaxKey(r), n == 0 ? std::string("max") : std::to_string(n)),
      n == 0};
}

DeviceSetting costQosSetting(const BlkIOConfig* io) {
  if (io == nullptr)
    return {"enable=0", true};
  return {
      fmt::format("enable=1 ctrl=user rpct={} rlat={} wpct={} wlat={}", io->read_latency_percent,
                  io->read_latency, io->write_latency_percent, io->write_latency),
      false};
}

DeviceSetting costModelSetting(const BlkIOConfig& io) {
  if (!io.enable_user_model)
    return {"ctrl=auto", false};
  return {fmt::format("ctrl=user rbps={} rseqiops={} rrandiops={} wbps={} wseqiops={} wrandiops={}",
                      io.model_read_bps, io.model_read_seq_iops, io.model_read_rand_iops,
                      io.model_write_bps, io.model_write_seq_iops, io.model_write_rand_iops),
          false};
}

}  // namespace koord::roles::koordlet::qosmanager
