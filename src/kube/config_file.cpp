#include "koord/kube/config_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "koord/core/log.h"

namespace koord::kube {

namespace {

Error cannotRead(std::string_view path) {
  return invalidArgument(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
}

std::string sizeName(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  if (bytes >= kMiB && bytes % kMiB == 0)
    return fmt::format("{} MiB", bytes / kMiB);
  return fmt::format("{} bytes", bytes);
}

}  // namespace

Expected<std::string> readConfigFile(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return cannotRead(path);
  // Read in chunks and stop once past the limit: an endless source (a FIFO, /dev/zero) is never
  // read further than that, and a small file costs no more than its size.
  std::string text;
  char chunk[64 * 1024];
  while (in) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit) {
      return invalidArgument(fmt::format(
          "{}: larger than {}, the most a configuration file may hold", path, sizeName(limit)));
    }
  }
  if (in.bad())
    return cannotRead(path);
  return text;
}

Error inConfigFile(std::string_view path, const Error& error) {
  return Error(fmt::format("{}: {}", path, error.message), error.code);
}

void warnInertFields(std::string_view path, const ComponentBase& config) {
  for (const auto& line : config.inert_fields)
    KOORD_LOG_WARNING("{}: {}", path, line);
}

}  // namespace koord::kube
