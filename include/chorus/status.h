// Status: the result of every fallible Chorus call. Cheap when ok (no allocation); otherwise it
// carries a code and a message that says what failed, where (rank, peer, transport, operation)
// and what to try.
#pragma once

#include <memory>
#include <string>

namespace chorus {

enum class StatusCode {
  Ok = 0,
  InvalidArgument,  // the caller passed something wrong
  InvalidUsage,     // the call is not allowed now (destroyed communicator, mismatched collectives)
  SystemError,      // an OS call failed (errno text in the message)
  RemoteError,      // a peer died, closed its connection or reported an error
  Timeout,          // a deadline passed
  Aborted,          // abort() was called on the communicator
  Unsupported,      // valid request this build or machine cannot serve
  Internal,         // a bug in Chorus
};

const char* statusCodeName(StatusCode c);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::InvalidArgument, std::move(m)};
  }
  static Status InvalidUsage(std::string m) { return {StatusCode::InvalidUsage, std::move(m)}; }
  static Status SystemError(std::string m) { return {StatusCode::SystemError, std::move(m)}; }
  // Appends ": <strerror(err)>" to the message.
  static Status FromErrno(int err, std::string what);
  static Status RemoteError(std::string m) { return {StatusCode::RemoteError, std::move(m)}; }
  static Status Timeout(std::string m) { return {StatusCode::Timeout, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::Aborted, std::move(m)}; }
  static Status Unsupported(std::string m) { return {StatusCode::Unsupported, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::Internal, std::move(m)}; }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::Ok; }
  const std::string& message() const;
  std::string toString() const;  // "Timeout: <message>" or "OK"

  // Returns a copy with "context: " put in front of the message.
  Status withContext(const std::string& context) const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;
};

}  // namespace chorus

// Returns early from the enclosing function when `expr` yields a non-ok Status.
#define CHORUS_RETURN_IF_ERROR(expr) \
  do {                               \
    ::chorus::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)
