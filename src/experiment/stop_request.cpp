#include "experiment/stop_request.h"

#include <csignal>
#include <cstring>

namespace steer {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_stop_signal != 0) {
    // the second signal: the default action, now
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_stop_signal = sig;
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a write or read in progress finishes instead of failing with EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int stop_requested() { return int(g_stop_signal); }

const char* stop_signal_name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal";
}

void throw_if_stop_requested(const std::string& where) {
  const int s = stop_requested();
  if (s != 0) throw RunStopped(s, std::string("stopped by ") + stop_signal_name(s) + " " + where);
}

}  // namespace steer
