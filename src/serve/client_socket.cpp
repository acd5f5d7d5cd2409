#include "serve/client_socket.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace hart::serve {
namespace {

// The numeric host and the port of a socket address.
bool host_port(const sockaddr_storage& a, socklen_t len, std::string& host, int& port) {
  char h[NI_MAXHOST], p[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV))
    return false;
  host = h;
  port = std::atoi(p);
  return true;
}

bool matches(int fd, const std::string& remote_addr, int remote_port, int local_port) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  sockaddr_storage peer{}, local{};
  socklen_t peer_len = sizeof peer, local_len = sizeof local;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0)
    return false;
  std::string host, local_host;
  int port = 0, lport = 0;
  return host_port(peer, peer_len, host, port) && host_port(local, local_len, local_host, lport) &&
         port == remote_port && lport == local_port && host == remote_addr;
}

}  // namespace

ClientSocket::ClientSocket(const std::string& remote_addr, int remote_port, int local_port) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const std::string name = entry.path().filename().string();
    const int fd = std::atoi(name.c_str());
    if (name.find_first_not_of("0123456789") == std::string::npos && matches(fd, remote_addr, remote_port, local_port)) {
      fd_ = fd;
      return;
    }
  }
}

bool ClientSocket::gone() const {
  if (fd_ < 0) return false;
  char c;
  const ssize_t n = recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  // 0: an orderly close; an error other than "nothing to read yet": a reset.
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace hart::serve
