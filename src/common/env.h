// Reading configuration from the environment. Only Config::fromEnv and the bootstrap's
// environment init call these: everything else gets its settings from a Config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace chorus {

std::optional<std::string> envString(const char* name);
// The first of `names` that is set, e.g. {"CHORUS_RANK", "RANK", "OMPI_COMM_WORLD_RANK"}.
std::optional<std::string> envFirst(std::initializer_list<const char*> names);
// Parses an integer; returns nullopt if unset, throws nothing: a malformed value is reported
// through `error` and yields nullopt.
std::optional<int64_t> envInt(const char* name, std::string* error);
std::optional<double> envDouble(const char* name, std::string* error);
// Accepts sizes like "4M", "512K", "1G".
std::optional<int64_t> parseBytes(const std::string& s);
std::optional<int64_t> envBytes(const char* name, std::string* error);

}  // namespace chorus
