#include "bench/peer_guard.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

namespace ncpkit::bench {
namespace {

constexpr int kBadAlloc = 3, kException = 4;

// AddressSanitizer reserves terabytes of address space for its shadow memory: under it a limit
// on the address space would fail every allocation, so a sanitizer build (the tests') limits
// time only.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

double EnvironmentNumber(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && *end == '\0' && value > 0.0 ? value : fallback;
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The child writes 'V', a count and the values, or 'E' and an exception's message.
[[noreturn]] void RunChild(const std::function<std::vector<double>()>& work,
                           const PeerLimits& limits, int fd) {
  // A crash ends the child with its signal, whatever handlers the parent installed.
  for (const int signal : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(signal, SIG_DFL);
  if (!kAddressSanitizer) {
    const rlim_t bytes = static_cast<rlim_t>(limits.memory_mb) * 1024 * 1024;
    const rlimit limit = {bytes, bytes};
    setrlimit(RLIMIT_AS, &limit);
  }
  int status = 0;
  try {
    const std::vector<double> values = work();
    const size_t count = values.size();
    if (!WriteAll(fd, "V", 1) ||
        !WriteAll(fd, reinterpret_cast<const char*>(&count), sizeof(count)) ||
        !WriteAll(fd, reinterpret_cast<const char*>(values.data()), count * sizeof(double))) {
      status = kException;
    }
  } catch (const std::bad_alloc&) {
    status = kBadAlloc;
  } catch (const std::exception& e) {
    WriteAll(fd, "E", 1);
    WriteAll(fd, e.what(), std::strlen(e.what()));
    status = kException;
  }
  close(fd);
  _exit(status);
}

}  // namespace

bool GuardLimitsMemory() { return !kAddressSanitizer; }

PeerLimits PeerLimits::FromEnvironment() {
  PeerLimits limits;
  limits.memory_mb = static_cast<long>(EnvironmentNumber("NCPKIT_PEER_MEMORY_MB", 8192));
  limits.seconds = EnvironmentNumber("NCPKIT_PEER_TIME_LIMIT", 120.0);
  return limits;
}

GuardedResult RunGuarded(const std::function<std::vector<double>()>& work,
                         const PeerLimits& limits) {
  GuardedResult result;
  int fds[2];
  if (pipe(fds) != 0) {
    result.why = "cannot create a pipe for the peer's process";
    return result;
  }
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    result.why = "cannot fork the peer's process";
    return result;
  }
  if (child == 0) {
    close(fds[0]);
    RunChild(work, limits, fds[1]);
  }
  close(fds[1]);
  // Read everything the child writes until it closes the pipe or the time is up.
  std::string bytes;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(limits.seconds);
  bool timed_out = false;
  for (;;) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0.0) {
      timed_out = true;
      break;
    }
    pollfd p = {fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left * 1000.0) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    char buffer[65536];
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  const std::string limits_text = "(limits: " + std::to_string(limits.memory_mb) + " MB, " +
                                  std::to_string(static_cast<int>(limits.seconds)) + " s)";
  if (timed_out) {
    result.why = "peer stopped: over its time limit " + limits_text;
  } else if (WIFSIGNALED(status)) {
    result.why = "peer stopped: killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                 strsignal(WTERMSIG(status)) + "; an allocation past the memory limit " +
                 "ends so in C code) " + limits_text;
  } else if (WEXITSTATUS(status) == kBadAlloc) {
    result.why = "peer stopped: over its memory limit " + limits_text;
  } else if (WEXITSTATUS(status) != 0) {
    result.why = !bytes.empty() && bytes[0] == 'E'
                     ? bytes.substr(1)
                     : "peer failed: exit status " + std::to_string(WEXITSTATUS(status));
  } else {
    size_t count = 0;
    const size_t header = 1 + sizeof(count);
    if (bytes.size() >= header) std::memcpy(&count, bytes.data() + 1, sizeof(count));
    if (bytes.size() < header || bytes[0] != 'V' ||
        bytes.size() != header + count * sizeof(double)) {
      result.why = "peer failed: its process returned a truncated result";
      return result;
    }
    result.values.resize(count);
    std::memcpy(result.values.data(), bytes.data() + header, count * sizeof(double));
    result.ok = true;
  }
  return result;
}

}  // namespace ncpkit::bench
