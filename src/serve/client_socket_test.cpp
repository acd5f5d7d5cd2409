// ClientSocket finds the accepted end of a real loopback connection by its addresses and sees
// the client close it.
#include "serve/client_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hart::serve {
namespace {

int port_of(int fd, bool peer) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (peer) getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len);
  else getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// A listening socket, a client connected to it, and the accepted end.
struct Connection {
  int listener = -1, client = -1, accepted = -1;
  Connection() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    listener = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(listener, 1), 0);
    a.sin_port = htons(uint16_t(port_of(listener, false)));
    client = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    accepted = accept(listener, nullptr, nullptr);
  }
  ~Connection() {
    for (int fd : {listener, client, accepted})
      if (fd >= 0) close(fd);
  }
};

TEST(ClientSocket, SeesTheClientCloseItsEnd) {
  Connection c;
  ASSERT_GE(c.accepted, 0);
  const ClientSocket s("127.0.0.1", port_of(c.accepted, true), port_of(c.accepted, false));
  EXPECT_FALSE(s.gone());
  ASSERT_EQ(write(c.client, "x", 1), 1);  // unread data is not a hang-up
  EXPECT_FALSE(s.gone());
  char byte;
  ASSERT_EQ(read(c.accepted, &byte, 1), 1);  // the server reads the request before it waits
  close(c.client);
  c.client = -1;
  EXPECT_TRUE(s.gone());
}

TEST(ClientSocket, AnUnknownConnectionIsNeverGone) {
  Connection c;
  const ClientSocket s("127.0.0.1", port_of(c.accepted, true), port_of(c.accepted, false) + 1);
  close(c.client);
  c.client = -1;
  EXPECT_FALSE(s.gone());
}

}  // namespace
}  // namespace hart::serve
