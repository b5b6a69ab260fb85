#include "topo/estimates_json.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <sstream>

namespace chorus::topo {

namespace {

// Keys kept in the order written, the order a reader expects: version, run, figures.
using json = nlohmann::ordered_json;

constexpr int kFormatVersion = 1;
constexpr const char* kSchema = " (docs/json.md, \"Tuning files\")";
// Every estimate line kind but "link", whose lines gather under "links", keyed by path class.
constexpr const char* kLineKinds[] = {"reduce", "executor", "efficiency", "memory"};

// "host_gbs=7.5" words from formatEstimates, as JSON numbers: integers stay integers.
// formatEstimates writes nothing else; a word without '=' would be its bug, and is skipped.
void putAttributes(const std::vector<std::string>& words, size_t from, json* into) {
  for (size_t i = from; i < words.size(); ++i) {
    const std::string& w = words[i];
    const size_t eq = w.find('=');
    if (eq == std::string::npos) continue;
    const char* value = w.data() + eq + 1;
    long long whole = 0;
    auto asInt = std::from_chars(value, w.data() + w.size(), whole);
    if (asInt.ec == std::errc() && asInt.ptr == w.data() + w.size()) {
      (*into)[w.substr(0, eq)] = whole;
      continue;
    }
    double real = 0;
    std::from_chars(value, w.data() + w.size(), real);
    (*into)[w.substr(0, eq)] = real;
  }
}

bool isLineKind(const std::string& kind) {
  for (const char* k : kLineKinds)
    if (kind == k) return true;
  return false;
}

}  // namespace

bool isJsonTuning(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

std::string formatEstimatesJson(const Topology& t, const std::string& run,
                                const std::vector<std::string>& measured) {
  json estimates = json::object();
  std::istringstream lines(formatEstimates(t));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (words.empty()) continue;
    if (words[0] == "link")
      putAttributes(words, 2, &estimates["links"][words[1]]);
    else
      putAttributes(words, 1, &estimates[words[0]]);
  }
  json doc = {{"chorus_tuning", kFormatVersion},
              {"run", run},
              {"measured", measured},
              {"estimates", estimates}};
  return doc.dump(2) + "\n";
}

Status estimateLinesFromJson(const std::string& text, const std::string& origin,
                             std::vector<EstimateLine>* lines) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e999 (tests/fuzz)
    return Status::InvalidArgument(origin + ": not valid JSON: " + e.what());
  }
  auto refuse = [&](const std::string& where, const std::string& what) {
    return Status::InvalidArgument(origin + ": " + where + ": " + what + kSchema);
  };
  if (!doc.is_object()) return refuse("the document", "expected an object");
  auto version = doc.find("chorus_tuning");
  if (version == doc.end() || !version->is_number_integer() || *version != kFormatVersion)
    return refuse("chorus_tuning", "expected 1, the version of the format this library reads");
  auto estimates = doc.find("estimates");
  if (estimates == doc.end() || !estimates->is_object())
    return refuse("estimates", "expected an object holding the estimates");

  // One line: `words` then an attribute for each number in `attributes`.
  auto addLine = [&](std::string where, std::vector<std::string> words,
                     const json& attributes) -> Status {
    if (!attributes.is_object()) return refuse(where, "expected an object of numbers");
    for (const auto& [name, value] : attributes.items()) {
      if (!value.is_number()) return refuse(where + "." + name, "expected a number");
      words.push_back(name + "=" + numberText(value.get<double>()));
    }
    lines->push_back({std::move(where), std::move(words)});
    return Status::Ok();
  };
  for (const auto& [kind, body] : estimates->items()) {
    const std::string where = "estimates." + kind;
    if (isLineKind(kind)) {
      CHORUS_RETURN_IF_ERROR(addLine(where, {kind}, body));
    } else if (kind == "links") {
      if (!body.is_object()) return refuse(where, "expected an object keyed by path class");
      for (const auto& [pathClass, attributes] : body.items())
        CHORUS_RETURN_IF_ERROR(addLine(where + "." + pathClass, {"link", pathClass}, attributes));
    } else {
      return refuse(where, "unknown estimate (reduce, executor, efficiency, memory, links)");
    }
  }
  return Status::Ok();
}

}  // namespace chorus::topo
