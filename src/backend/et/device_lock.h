// Exclusive ownership of a device across processes: an flock on <dir>/hart-<device>.lock holding
// the owner's pid. A second opener fails at once with "device et0 is in use by process N".
#pragma once

#include <string>

namespace hart::et {

class DeviceLock {
 public:
  // dir empty: $XDG_RUNTIME_DIR, else /tmp.
  DeviceLock(const std::string& device, const std::string& dir);
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace hart::et
