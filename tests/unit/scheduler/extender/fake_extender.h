// A scheduler extender for the tests: koord's HTTP server on loopback (optionally HTTPS) that
// records every call's path and JSON body and answers as the test says, per path.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "koord/http/server.h"

namespace koord::roles::scheduler::testing {

struct ExtenderCall {
  std::string path;
  boost::json::value body;
};

class FakeExtender {
 public:
  /// Serves `paths` (e.g. "/ext/filter"); "/slow/<verb>" paths answer after `slow_delay`.
  explicit FakeExtender(std::vector<std::string> paths,
                        std::optional<http::TlsServerConfig> tls = std::nullopt)
      : work_(boost::asio::make_work_guard(io_)), server_(io_, options(std::move(tls))) {
    for (const std::string& path : paths) {
      if (path.starts_with("/slow/")) {
        server_.handleAsync(path,
                            [this](http::Request r, std::function<void(http::Response)> done) {
                              record(r);
                              std::lock_guard lock(mu_);
                              delayed_.emplace_back([this, done = std::move(done)] {
                                std::this_thread::sleep_for(slow_delay);
                                done(http::json(200, "{}"));
                              });
                            });
      } else {
        server_.handle(path, [this](const http::Request& r) {
          record(r);
          std::lock_guard lock(mu_);
          auto it = answers_.find(r.path);
          if (it == answers_.end())
            return http::json(200, "{}");
          return http::Response{it->second.first, "application/json", {}, it->second.second};
        });
      }
    }
    server_.start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~FakeExtender() {
    server_.stop();
    for (auto& t : delayed_)
      t.join();
    work_.reset();
    io_.stop();
    thread_.join();
  }
  FakeExtender(const FakeExtender&) = delete;
  FakeExtender& operator=(const FakeExtender&) = delete;

  /// What `path` answers from now on (200 "{}" until told).
  void answer(const std::string& path, std::string body, int status = 200) {
    std::lock_guard lock(mu_);
    answers_[path] = {status, std::move(body)};
  }
  std::vector<ExtenderCall> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  std::vector<ExtenderCall> callsTo(const std::string& path) const {
    std::vector<ExtenderCall> out;
    for (auto& c : calls()) {
      if (c.path == path)
        out.push_back(c);
    }
    return out;
  }
  std::string url(const std::string& prefix, bool https = false) const {
    return (https ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(server_.port()) +
           prefix;
  }

  std::chrono::milliseconds slow_delay{1500};

 private:
  static http::ServerOptions options(std::optional<http::TlsServerConfig> tls) {
    http::ServerOptions o;
    o.address = "127.0.0.1:0";
    o.body_limit = 8 << 20;
    o.tls = std::move(tls);
    o.name = "fake-extender";
    return o;
  }
  void record(const http::Request& r) {
    boost::system::error_code ec;
    auto body = boost::json::parse(r.body, ec);
    std::lock_guard lock(mu_);
    calls_.push_back({r.path, ec ? boost::json::value(r.body) : std::move(body)});
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  http::Server server_;
  mutable std::mutex mu_;
  std::map<std::string, std::pair<int, std::string>> answers_;
  std::vector<ExtenderCall> calls_;
  std::vector<std::thread> delayed_;
  std::thread thread_;
};

}  // namespace koord::roles::scheduler::testing
