#include "backend/et/device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace hart::et {

namespace {

std::string lock_dir(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  return runtime && *runtime ? runtime : "/tmp";
}

std::string read_owner(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, size_t(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

DeviceLock::DeviceLock(const std::string& device, const std::string& dir)
    : path_(lock_dir(dir) + "/hart-" + device + ".lock") {
  fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot open device lock " + path_ + ": " + std::strerror(errno));
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string owner = err == EWOULDBLOCK ? read_owner(fd_) : "";
    close(fd_);
    if (err == EWOULDBLOCK) throw Error("device " + device + " is in use by process " + owner);
    throw Error("cannot lock " + path_ + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    close(fd_);
    throw Error("cannot write device lock " + path_ + ": " + std::strerror(errno));
  }
}

DeviceLock::~DeviceLock() {
  // Unlocking before close; the file stays (removing it would race with a waiting opener).
  flock(fd_, LOCK_UN);
  close(fd_);
}

}  // namespace hart::et
