// What a rank takes from a TCP stream before it trusts it: the HELLO that opens a stream, the
// ACCEPT that answers one, and every message header after. Pure functions of the bytes and
// this rank's settings, so the fuzz targets (tests/fuzz) reach them without sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/tcp/handshake.h"
#include "transport/transport.h"

namespace chorus {

// The accepting rank's check of a connecting rank's HELLO: ours, this version, a connection
// request to `rank` from a lower rank it reaches over TCP (`reach`, by rank), with this rank's
// stream count and chunk size, for a stream in range. `*why` says what is wrong.
bool checkConnectHello(const TcpHello& h, int rank, const std::vector<bool>& reach, int nstreams,
                       size_t chunkBytes, std::string* why);

// The connecting rank's check of the ACCEPT for its HELLO `sent` on stream `stream` to
// `peer`: addressed back, and proving the job secret over both records.
bool checkAccept(const TcpHello& accept, const TcpHello& sent, const uint8_t* secret, int peer,
                 int rank, int stream);

// What a message header read from a stream is: data (at most `chunkBytes` of payload), the
// peer's goodbye, or garbage that ends the connection.
enum class TcpHeaderKind { Message, Goodbye, Malformed };
TcpHeaderKind classifyHeader(const WireHeader& h, size_t chunkBytes);

}  // namespace chorus
