// The hook servers registered in /etc/runtime/hookserver.d/*.json, kept current with inotify:
// CRI calls read a snapshot; a file that stops parsing keeps its last good registration.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hooks/hook_server_config.h"

namespace boost::asio {
class io_context;
}

namespace koord::roles::runtime_proxy {

struct HookServer {
  /// The file it came from (its name orders the servers).
  std::string file;
  HookServerConfig config;
};

using HookServers = std::vector<HookServer>;

class HookServerRegistry {
 public:
  /// Watches `dir` (created when missing) once start() is called.
  explicit HookServerRegistry(std::string dir);
  ~HookServerRegistry();
  HookServerRegistry(const HookServerRegistry&) = delete;
  HookServerRegistry& operator=(const HookServerRegistry&) = delete;

  /// Reads the directory and watches it on `io`. Throws app::ConfigError when the directory
  /// cannot be created or watched.
  void start(boost::asio::io_context& io);
  /// Stops watching (on the io_context's thread, or after it stopped).
  void stop();
  /// Reads the directory again now (start() and every inotify event call it).
  void rescan();

  /// Thread-safe; ordered by file name.
  std::shared_ptr<const HookServers> servers() const;
  const std::string& dir() const { return dir_; }

 private:
  struct Watch;
  void readEvents();

  std::string dir_;
  mutable std::mutex mu_;
  std::shared_ptr<const HookServers> servers_;
  /// Per file: the content last seen, so that a change (or a broken file) is logged once.
  std::map<std::string, std::string> seen_;
  std::unique_ptr<Watch> watch_;
};

}  // namespace koord::roles::runtime_proxy
