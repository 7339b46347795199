#include "device_report_writer.h"

#include <filesystem>
#include <system_error>

#include "koord/http/file_util.h"

namespace koord::roles::device_daemon {

namespace {

// Readable by the koordlet whatever user it runs as; nothing in it is secret.
constexpr mode_t kReportMode = 0644;

}  // namespace

Result<void> writeDeviceReport(const std::string& path,
                               std::span<const apis::XpuDeviceInfo> devices) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
      return boost::system::error_code(ec.value(), boost::system::system_category());
  }
  return http::writeFileAtomic(path, apis::formatXpuDeviceInfos(devices), kReportMode);
}

}  // namespace koord::roles::device_daemon
