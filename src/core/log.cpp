#include "koord/core/log.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "koord/core/log_output.h"

namespace koord::log {

std::atomic<int> g_verbosity{0};

namespace {

std::mutex g_sink_mu;
Sink g_sink;                  // guarded by g_sink_mu; empty means the configured output
Output g_out;                 // guarded by g_sink_mu
int g_fd = -1;                // the output file, when not to_stderr; guarded by g_sink_mu
std::uint64_t g_written = 0;  // bytes in g_fd since it was opened or started over

char severityLetter(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return 'I';
    case Severity::kWarning:
      return 'W';
    case Severity::kError:
      return 'E';
  }
  return 'I';
}

std::string_view baseName(const char* file) {
  std::string_view f(file);
  auto slash = f.rfind('/');
  return slash == std::string_view::npos ? f : f.substr(slash + 1);
}

std::tm localTime(std::chrono::system_clock::time_point when) {
  std::time_t secs = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  localtime_r(&secs, &tm);
  return tm;
}

std::string textLine(Severity severity, std::string_view file, int line, std::string_view message) {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto micros = duration_cast<microseconds>(now.time_since_epoch()).count() % 1000000;
  const std::tm tm = localTime(now);
  static thread_local const long tid = ::syscall(SYS_gettid);
  // klog: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
  std::string out = fmt::format("{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7} {}:{}] ",
                                severityLetter(severity), tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                tm.tm_min, tm.tm_sec, micros, tid, file, line);
  out.append(message);
  if (out.empty() || out.back() != '\n')
    out.push_back('\n');
  return out;
}

void appendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        else
          out.push_back(c);
    }
  }
  out.push_back('"');
}

// Writes all of `text` to fd, one write(2) per line where it can so lines stay whole when
// several processes share the stream.
void writeAll(int fd, std::string_view text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;  // nowhere left to report a failure to write the log
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// klog's host name in file names and headers.
std::string hostName() {
  char host[256] = "";
  if (::gethostname(host, sizeof(host)) != 0)
    return "unknownhost";
  host[sizeof(host) - 1] = '\0';
  return host;
}

std::string fileHeader() {
  const std::tm tm = localTime(std::chrono::system_clock::now());
  return fmt::format(
      "Log file created at: {:04}/{:02}/{:02} {:02}:{:02}:{:02}\nRunning on machine: {}\n"
      "Binary: koord\nLog line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg\n",
      tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, hostName());
}

// The line as the current output formats it; called with g_sink_mu held.
std::string formatForOutput(Severity severity, const char* file, int line,
                            std::string_view message) {
  if (g_out.json)
    return formatJsonLine(severity, file, line, message, std::chrono::system_clock::now());
  if (g_out.skip_headers) {
    std::string out(message);
    if (out.empty() || out.back() != '\n')
      out.push_back('\n');
    return out;
  }
  return textLine(severity, g_out.add_dir_header ? std::string_view(file) : baseName(file), line,
                  message);
}

}  // namespace

void setVerbosity(int level) {
  g_verbosity.store(level, std::memory_order_relaxed);
}

std::string formatLine(Severity severity, const char* file, int line, std::string_view message) {
  return textLine(severity, baseName(file), line, message);
}

std::string formatJsonLine(Severity severity, const char* file, int line, std::string_view message,
                           std::chrono::system_clock::time_point when) {
  using namespace std::chrono;
  const double ms =
      static_cast<double>(duration_cast<microseconds>(when.time_since_epoch()).count()) / 1000.0;
  std::string out = fmt::format("{{\"ts\":{:.3f},\"caller\":", ms);
  appendJsonString(out, fmt::format("{}:{}", baseName(file), line));
  out += ",\"msg\":";
  std::string_view msg = message;
  if (!msg.empty() && msg.back() == '\n')
    msg.remove_suffix(1);
  appendJsonString(out, msg);
  if (severity != Severity::kError)
    out += ",\"v\":0";
  out += "}\n";
  return out;
}

std::string logDirFileName(std::string_view program, std::chrono::system_clock::time_point when) {
  const std::string host = hostName();
  std::string user = "unknownuser";
  if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_name != nullptr)
    user = pw->pw_name;
  const std::tm tm = localTime(when);
  return fmt::format("{}.{}.{}.log.INFO.{:04}{:02}{:02}-{:02}{:02}{:02}.{}", program, host, user,
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ::getpid());
}

void setOutput(const Output& out) {
  int fd = -1;
  if (!out.to_stderr) {
    if (out.file.empty())
      throw std::runtime_error("log output: no file to write to");
    fd = ::open(out.file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw std::runtime_error(
          fmt::format("cannot open log file {}: {}", out.file, std::strerror(errno)));
    }
    if (!out.symlink.empty()) {
      // klog points "<program>.INFO" at the newest file; a failure leaves the file usable.
      std::error_code ec;
      std::filesystem::remove(out.symlink, ec);
      std::filesystem::create_symlink(std::filesystem::path(out.file).filename(), out.symlink, ec);
    }
  }
  struct stat st {};
  const std::uint64_t size =
      fd >= 0 && ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  std::lock_guard lock(g_sink_mu);
  if (g_fd >= 0)
    ::close(g_fd);
  g_fd = fd;
  g_written = size;
  g_out = out;
  if (g_fd >= 0 && g_out.file_header && size == 0) {
    const std::string header = fileHeader();
    writeAll(g_fd, header);
    g_written += header.size();
  }
}

void write(Severity severity, const char* file, int line, std::string_view message) {
  std::lock_guard lock(g_sink_mu);
  std::string text = formatForOutput(severity, file, line, message);
  if (g_sink) {
    g_sink(text);
    return;
  }
  if (g_fd < 0) {
    writeAll(STDERR_FILENO, text);
    return;
  }
  if (g_out.file_max_bytes > 0 && g_written + text.size() > g_out.file_max_bytes) {
    // klog starts --log_file over when it is full; O_APPEND writes then land at the start.
    if (::ftruncate(g_fd, 0) == 0) {
      g_written = 0;
      if (g_out.file_header) {
        const std::string header = fileHeader();
        writeAll(g_fd, header);
        g_written += header.size();
      }
    }
  }
  writeAll(g_fd, text);
  g_written += text.size();
  if (g_out.also_to_stderr || static_cast<int>(severity) >= g_out.stderr_threshold)
    writeAll(STDERR_FILENO, text);
}

void setSink(Sink sink) {
  std::lock_guard lock(g_sink_mu);
  g_sink = std::move(sink);
}

}  // namespace koord::log
