#include "hooks/hook_server_registry.h"

#include <fmt/format.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "koord/app/role_app.h"
#include "koord/core/log.h"

namespace koord::roles::runtime_proxy {

namespace {

// Registrations are a few hundred bytes; anything this large is not one.
constexpr std::uintmax_t kMaxFileBytes = 64 * 1024;

}  // namespace

struct HookServerRegistry::Watch {
  explicit Watch(boost::asio::io_context& io) : fd(io) {}
  boost::asio::posix::stream_descriptor fd;
  std::array<char, 4096> buffer{};
};

HookServerRegistry::HookServerRegistry(std::string dir)
    : dir_(std::move(dir)), servers_(std::make_shared<const HookServers>()) {}

HookServerRegistry::~HookServerRegistry() = default;

void HookServerRegistry::start(boost::asio::io_context& io) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec)
    throw app::ConfigError(fmt::format("hook server directory {}: {}", dir_, ec.message()));
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0)
    throw app::ConfigError(fmt::format("inotify: {}", std::strerror(errno)));
  if (::inotify_add_watch(fd, dir_.c_str(),
                          IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE |
                              IN_DELETE_SELF | IN_MOVE_SELF) < 0) {
    const int err = errno;
    ::close(fd);
    throw app::ConfigError(fmt::format("watching {}: {}", dir_, std::strerror(err)));
  }
  watch_ = std::make_unique<Watch>(io);
  watch_->fd.assign(fd);
  rescan();
  readEvents();
}

// Each batch of events only says that something changed: the directory is read again.
void HookServerRegistry::readEvents() {
  watch_->fd.async_read_some(
      boost::asio::buffer(watch_->buffer), [this](boost::system::error_code ec, std::size_t) {
        if (ec == boost::asio::error::operation_aborted || !watch_)
          return;
        if (ec) {
          KOORD_LOG_ERROR("hook server directory {}: inotify: {}", dir_, ec.message());
          return;
        }
        rescan();
        readEvents();
      });
}

void HookServerRegistry::stop() {
  if (watch_) {
    boost::system::error_code ignored;
    watch_->fd.close(ignored);
    watch_.reset();
  }
}

void HookServerRegistry::rescan() {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> contents;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() != ".json" || !it->is_regular_file())
      continue;
    std::error_code size_ec;
    const auto size = fs::file_size(path, size_ec);
    if (size_ec || size > kMaxFileBytes) {
      contents[path.filename().string()] =
          fmt::format("<unreadable or over {} bytes>", kMaxFileBytes);
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    contents[path.filename().string()] = text.str();
  }
  if (ec)
    KOORD_LOG_ERROR("hook server directory {}: {}", dir_, ec.message());

  std::lock_guard lock(mu_);
  auto next = std::make_shared<HookServers>();
  for (const auto& [file, text] : contents) {
    auto parsed = parseHookServerConfig(text);
    const bool changed = seen_[file] != text;
    seen_[file] = text;
    if (parsed) {
      if (changed)
        KOORD_LOG_INFO("hook server {}: {} ({} hooks)", file, parsed->remote_endpoint,
                       parsed->hooks.size());
      next->push_back({file, std::move(*parsed)});
      continue;
    }
    // A broken registration changes nothing: the previous one of that file stays.
    if (changed)
      KOORD_LOG_ERROR("hook server {}/{}: {}; keeping its previous registration", dir_, file,
                      parsed.error().message);
    for (const auto& s : *servers_) {
      if (s.file == file)
        next->push_back(s);
    }
  }
  for (auto it = seen_.begin(); it != seen_.end();) {
    if (contents.count(it->first) == 0) {
      KOORD_LOG_INFO("hook server {}: removed", it->first);
      it = seen_.erase(it);
    } else {
      ++it;
    }
  }
  servers_ = std::move(next);
}

std::shared_ptr<const HookServers> HookServerRegistry::servers() const {
  std::lock_guard lock(mu_);
  return servers_;
}

}  // namespace koord::roles::runtime_proxy
