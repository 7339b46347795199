#include "subprocess.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace koord::testing {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tempPath(const char* tag) {
  std::string tmpl = std::string(::getenv("TMPDIR") ? ::getenv("TMPDIR") : "/tmp") +
                     "/koord-test-" + tag + "-XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw std::runtime_error(std::string("mkstemp: ") + std::strerror(errno));
  ::close(fd);
  return tmpl;
}

}  // namespace

Subprocess::Subprocess(std::vector<std::string> argv,
                       std::map<std::string, std::optional<std::string>> env)
    : out_path_(tempPath("out")), err_path_(tempPath("err")) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos)
      merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) {
    if (v) {
      merged[k] = *v;
    } else {
      merged.erase(k);
    }
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : merged)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : argv)
    args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path_.c_str(), O_WRONLY | O_TRUNC,
                                   0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path_.c_str(), O_WRONLY | O_TRUNC,
                                   0);
  int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw std::runtime_error(std::string("posix_spawn ") + argv[0] + ": " + std::strerror(rc));
  }
}

Subprocess::~Subprocess() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
  ::unlink(out_path_.c_str());
  ::unlink(err_path_.c_str());
}

void Subprocess::signal(int signo) {
  if (!reaped_)
    ::kill(pid_, signo);
}

bool Subprocess::running() {
  if (reaped_)
    return false;
  pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_)
    reaped_ = true;
  return !reaped_;
}

std::string Subprocess::stderrSoFar() const {
  return readFile(err_path_);
}

ProcessResult Subprocess::wait(std::chrono::milliseconds timeout) {
  ProcessResult result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status_)) {
    result.exit_code = WEXITSTATUS(status_);
  } else if (WIFSIGNALED(status_)) {
    result.signal = WTERMSIG(status_);
  }
  result.out = readFile(out_path_);
  result.err = readFile(err_path_);
  return result;
}

ProcessResult run(std::vector<std::string> argv,
                  std::map<std::string, std::optional<std::string>> env,
                  std::chrono::milliseconds timeout) {
  Subprocess p(std::move(argv), std::move(env));
  return p.wait(timeout);
}

int freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("bind to 127.0.0.1:0 failed");
  }
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

}  // namespace koord::testing
