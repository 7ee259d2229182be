// Stopping a run at a safe point on SIGINT or SIGTERM. The handlers only record the signal
// (async-signal-safe); the run polls stop_requested() between evaluations and stages, writes
// its resumable checkpoint if it has one, and unwinds with RunStopped, which the CLI turns into
// exit code 128 + signal (130 for SIGINT, 143 for SIGTERM). A second signal of either kind ends
// the process at once with the default action, for a user who does not want to wait.
#pragma once

#include <stdexcept>
#include <string>

namespace steer {

class RunStopped : public std::runtime_error {
 public:
  RunStopped(int signal, const std::string& m) : std::runtime_error(m), signal_(signal) {}
  int signal() const { return signal_; }
  int exit_code() const { return 128 + signal_; }

 private:
  int signal_;
};

// installs the SIGINT and SIGTERM handlers explicitly, so a run started with either signal
// ignored (a background job of a non-interactive shell ignores SIGINT) can still be stopped
void install_stop_handlers();

// the signal received (SIGINT or SIGTERM), or 0
int stop_requested();

// the signal's name, "SIGINT" or "SIGTERM"
const char* stop_signal_name(int signal);

// throws RunStopped when a signal has arrived; `where` says what the run was doing
void throw_if_stop_requested(const std::string& where);

}  // namespace steer
