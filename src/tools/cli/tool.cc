#include "tools/cli/tool.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "tools/cli/version.h"

namespace chorus::cli {

namespace {

// CLI11's help, opening with the tool's own usage line (its positional arguments and launch
// read better written out than generated) and then what the tool does, as help2man expects.
class Formatter : public CLI::Formatter {
 public:
  explicit Formatter(std::string synopsis) : synopsis_(std::move(synopsis)) {
    label("Usage", "usage");
  }
  std::string make_description(const CLI::App* app) const override {
    return app->get_parent() != nullptr ? CLI::Formatter::make_description(app) : "";
  }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() != nullptr) return CLI::Formatter::make_usage(app, std::move(name));
    return "usage: " + name + " " + synopsis_ + "\n\n" + app->get_description() + "\n";
  }

 private:
  std::string synopsis_;
};

// An argument nobody took: an option, a command of a tool that has commands, or a stray word.
std::string unexpected(const CLI::App& app, const std::string& arg) {
  if (arg[0] == '-') return "unknown option '" + arg + "'";
  if (!app.get_subcommands({}).empty()) return "unknown command '" + arg + "'";
  return "unexpected argument '" + arg + "'";
}

// CLI11's message, reworded where it speaks of its own workings. An unknown option or command
// is named first even when CLI11 found a required one missing: it is the likelier mistake. A
// program's arguments (chorus-run's, after `--` or its name) are not unknown options.
std::string describe(const CLI::App& app, const CLI::ParseError& e) {
  const std::string what = e.what();
  const size_t colon = what.find(": ");
  const std::vector<std::string> extra = app.remaining(true);
  if (dynamic_cast<const CLI::ExtrasError*>(&e) && !extra.empty()) return unexpected(app, extra[0]);
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    const bool stray =
        !extra.empty() && (extra[0][0] == '-' ? extra[0] != "--" : !app.get_prefix_command());
    if (stray) return unexpected(app, extra[0]);
    if (what.starts_with("A subcommand")) return "a command is required";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && colon != std::string::npos &&
      what.ends_with(" missing"))
    return what.substr(0, colon) + " needs a value";
  // A flag given a value it cannot read: "Could not convert: --quick = maybe".
  const size_t eq = what.find(" = ");
  if (dynamic_cast<const CLI::ConversionError*>(&e) && colon != std::string::npos &&
      eq != std::string::npos)
    return BadValue(what.substr(colon + 2, eq - colon - 2), what.substr(eq + 3),
                    "a flag takes no value (or true/false)")
        .what();
  return what;
}

}  // namespace

Tool::Tool(std::string name, std::string synopsis, const std::string& description)
    : name_(std::move(name)), synopsis_(std::move(synopsis)), app_(description, name_) {
  app_.formatter(std::make_shared<Formatter>(synopsis_));
  // Like the hand-written parsers before: an option given twice keeps its last value.
  app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app_.set_version_flag("--version", versionText(),
                        "print the Chorus version, git commit and backends");
  app_.set_help_flag("-h,--help", "print this help");
  app_.add_flag("-v,--verbose", verbose_,
                "log more of what the library does (CHORUS_DEBUG=INFO; -vv: TRACE)");
  app_.add_flag("-q,--quiet", quiet_, "print results and errors only");
}

int Tool::parse(int argc, char** argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    fputs(app_.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion&) {
    fputs(versionText().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    return usageError(describe(app_, e));
  }
  if (verbose_ > 0) setenv("CHORUS_DEBUG", verbose_ > 1 ? "TRACE" : "INFO", 0);
  return -1;
}

int Tool::usageError(const std::string& message) const {
  fprintf(stderr, "%s: %s\nusage: %s %s\n(see %s --help)\n", name_.c_str(), message.c_str(),
          name_.c_str(), synopsis_.c_str(), name_.c_str());
  return kUsageExit;
}

CLI::Option* checked(CLI::App& app, const std::string& names,
                     std::function<void(const std::string& option, const std::string& text)> set,
                     const std::string& typeName, const std::string& shown,
                     const std::string& help) {
  // Errors name the option by its first long name ("--np" for "-n,--np"), whichever was typed.
  auto option = std::make_shared<std::string>();
  CLI::Option* o = app.add_option_function<std::string>(
      names, [option, set](const std::string& v) { set(*option, v); }, help);
  *option = o->get_name();
  o->type_name(typeName);
  if (!shown.empty()) o->default_str(shown);
  return o;
}

CLI::Option* choice(CLI::App& app, const std::string& names, std::string* out,
                    const std::vector<std::string>& accepted, const std::string& help) {
  std::string type;
  for (const std::string& a : accepted) type += (type.empty() ? "" : "|") + a;
  return checked(
      app, names,
      [out, accepted](const std::string& opt, const std::string& v) {
        *out = parseChoice(opt, v, accepted);
      },
      type, *out, help);
}

CLI::Option* text(CLI::App& app, const std::string& names, std::string* out,
                  const std::string& typeName, const std::string& help) {
  return checked(
      app, names, [out](const std::string&, const std::string& v) { *out = v; }, typeName, *out,
      help);
}

}  // namespace chorus::cli
