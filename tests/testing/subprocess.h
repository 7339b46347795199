// Runs a real program for tests (the koord binary, later etcd and kube-apiserver): captured
// stdout/stderr, environment overrides, a timeout, and signals for graceful-stop checks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace koord::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
  bool timed_out = false;
};

/// A started child process whose output goes to temp files. The destructor kills and reaps it.
class Subprocess {
 public:
  /// argv[0] is the path to execute. `env` entries override (or, with nullopt, remove)
  /// variables of this process's environment.
  Subprocess(std::vector<std::string> argv,
             std::map<std::string, std::optional<std::string>> env = {});
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int signo);
  /// Waits for exit; on timeout kills with SIGKILL and sets timed_out.
  ProcessResult wait(std::chrono::milliseconds timeout);
  bool running();
  /// What the child has written to stderr so far.
  std::string stderrSoFar() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string out_path_, err_path_;
};

/// Starts, waits and collects in one call.
ProcessResult run(std::vector<std::string> argv,
                  std::map<std::string, std::optional<std::string>> env = {},
                  std::chrono::milliseconds timeout = std::chrono::seconds(20));

/// A TCP port on 127.0.0.1 that was free a moment ago (bind to 0, read, close).
int freeLoopbackPort();

}  // namespace koord::testing
