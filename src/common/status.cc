#include "chorus/status.h"

#include <cstring>

namespace chorus {

const char* statusCodeName(StatusCode c) {
  switch (c) {
    case StatusCode::Ok:
      return "OK";
    case StatusCode::InvalidArgument:
      return "InvalidArgument";
    case StatusCode::InvalidUsage:
      return "InvalidUsage";
    case StatusCode::SystemError:
      return "SystemError";
    case StatusCode::RemoteError:
      return "RemoteError";
    case StatusCode::Timeout:
      return "Timeout";
    case StatusCode::Aborted:
      return "Aborted";
    case StatusCode::Unsupported:
      return "Unsupported";
    case StatusCode::Internal:
      return "Internal";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::Ok) state_ = std::make_shared<State>(State{code, std::move(message)});
}

Status Status::FromErrno(int err, std::string what) {
  char buf[256];
  const char* text = strerror_r(err, buf, sizeof buf);  // GNU variant returns the string
  return Status(StatusCode::SystemError, what + ": " + text);
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::toString() const {
  if (ok()) return "OK";
  return std::string(statusCodeName(state_->code)) + ": " + state_->message;
}

Status Status::withContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(state_->code, context + ": " + state_->message);
}

}  // namespace chorus
