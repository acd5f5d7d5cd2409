// Notices that an HTTP client went away while its non-streaming request is still generating.
// cpp-httplib 0.11 gives a handler neither the socket nor a "connection closed" test, so the
// handler finds its accepted socket by the connection's addresses and peeks at it while it waits.
#pragma once

#include <string>

namespace hart::serve {

class ClientSocket {
 public:
  // The accepted socket whose peer is remote_addr:remote_port (numeric, as cpp-httplib reports
  // it) and whose local port is local_port; none found: gone() is always false.
  ClientSocket(const std::string& remote_addr, int remote_port, int local_port);

  // Has the client closed its end (or reset the connection)? Never blocks.
  bool gone() const;

 private:
  int fd_ = -1;
};

}  // namespace hart::serve
