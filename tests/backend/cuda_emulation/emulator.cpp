// The emulated CUDA device of the tests: runtime calls on host memory, and kernel launches
// run on the calling host thread with each block's threads as fibers (cuda_runtime.h,
// emulator.h). Test-only: built into the emulated test targets, never into libsteer.
//
// Fibers. A block of n threads is n fibers, each with its own stack, switched cooperatively
// by the small x86-64 switcher below (ucontext elsewhere): a fiber runs until it waits at a
// barrier, ends or is preempted, then the scheduler loop (on the launching thread's own
// stack) resumes the next ready one. Barriers are counters: __syncthreads releases when
// every thread of the block that has not ended has arrived (an ended thread no longer
// counts, as on sm_70 and later), __syncwarp when every live lane of the mask has. A block
// with threads left but none ready is a deadlock (divergent barriers) and faults the launch.
#include "emulator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define STEER_EMU_ASAN 1
#else
#define STEER_EMU_ASAN 0
#endif

#if defined(__x86_64__) && !defined(STEER_EMU_UCONTEXT)
#define STEER_EMU_X86_64 1
#else
#define STEER_EMU_X86_64 0
#include <ucontext.h>
#endif

struct steer_emu_event {
  bool recorded = false;
  std::chrono::steady_clock::time_point when{};
};

namespace steer_emu {
namespace {

// ---------------------------------------------------------------------------------------
// context switch
#if STEER_EMU_X86_64
// steer_emu_switch(save, load): pushes the callee-saved registers of the System V ABI (rbx,
// rbp, r12-r15) and the SSE and x87 control words on the current stack, stores the stack
// pointer in *save, then takes `load` as the stack pointer and pops the same set from it.
// A new fiber's stack is prepared so that this pop "returns" into steer_emu_trampoline with
// r12 = argument and r13 = entry; the trampoline calls entry(argument) with the stack
// 16-byte aligned. rip is marked undefined there so that unwinders stop at a fiber's base.
extern "C" void steer_emu_switch(void** save, void* load);
extern "C" void steer_emu_trampoline();
asm(R"(
  .text
  .p2align 4
  .globl steer_emu_switch
  .hidden steer_emu_switch
  .type steer_emu_switch, @function
steer_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size steer_emu_switch, .-steer_emu_switch

  .p2align 4
  .globl steer_emu_trampoline
  .hidden steer_emu_trampoline
  .type steer_emu_trampoline, @function
steer_emu_trampoline:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size steer_emu_trampoline, .-steer_emu_trampoline
)");

struct Context {
  void* sp = nullptr;
};

void context_init(Context& c, char* base, std::size_t size, void (*entry)(void*), void* arg) {
  std::uint64_t* sp = reinterpret_cast<std::uint64_t*>(
      (reinterpret_cast<std::uintptr_t>(base) + size) & ~std::uintptr_t(15));
  std::uint32_t mxcsr = 0;
  std::uint16_t fcw = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fcw));
  *--sp = reinterpret_cast<std::uint64_t>(&steer_emu_trampoline);  // "return" address
  *--sp = 0;                                                       // rbp: ends frame chains
  *--sp = 0;                                                       // rbx
  *--sp = reinterpret_cast<std::uint64_t>(arg);                    // r12
  *--sp = reinterpret_cast<std::uint64_t>(entry);                  // r13
  *--sp = 0;                                                       // r14
  *--sp = 0;                                                       // r15
  *--sp = std::uint64_t(mxcsr) | (std::uint64_t(fcw) << 32);       // control words
  c.sp = sp;
}

inline void context_switch(Context& from, Context& to) { steer_emu_switch(&from.sp, to.sp); }
#else
struct Context {
  ucontext_t uc;
};

void (*g_uc_entry)(void*) = nullptr;
void* g_uc_arg = nullptr;
void uc_entry() { g_uc_entry(g_uc_arg); }

void context_init(Context& c, char* base, std::size_t size, void (*entry)(void*), void* arg) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = base;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  // makecontext passes int arguments only: the entry and its argument wait in globals, read
  // before the first switch away (fibers start one at a time)
  g_uc_entry = entry;
  g_uc_arg = arg;
  makecontext(&c.uc, uc_entry, 0);
}

inline void context_switch(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
#endif

// ---------------------------------------------------------------------------------------
// fiber stacks: mapped once, a guard page below each, reused by later fibers
#if STEER_EMU_ASAN
constexpr std::size_t kStackBytes = std::size_t(16) << 20;  // red zones make frames larger
#else
constexpr std::size_t kStackBytes = std::size_t(4) << 20;
#endif

struct Stack {
  char* base = nullptr;  // usable [base, base + kStackBytes)
};

std::vector<Stack> g_free_stacks;  // guarded by g_launch_mutex

Stack stack_get() {
  if (!g_free_stacks.empty()) {
    Stack s = g_free_stacks.back();
    g_free_stacks.pop_back();
    return s;
  }
  const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "steer CUDA emulator: cannot map a %zu-byte fiber stack\n", kStackBytes);
    std::abort();
  }
  mprotect(p, page, PROT_NONE);  // an overflowing fiber faults here instead of corrupting
  return Stack{static_cast<char*>(p) + page};
}

// `abandoned`: the fiber stopped anywhere in its kernel (a faulted block), not at its end
void stack_put(Stack s, bool abandoned) {
#if STEER_EMU_ASAN
  // frames that never returned leave their red zones poisoned for the stack's next fiber: at
  // a fiber's end only fiber_main and the switch below it, near the top (every frame under
  // them has returned and unpoisoned itself); anywhere in an abandoned one
  constexpr std::size_t kTopBytes = std::size_t(64) << 10;
  if (abandoned)
    ASAN_UNPOISON_MEMORY_REGION(s.base, kStackBytes);
  else
    ASAN_UNPOISON_MEMORY_REGION(s.base + kStackBytes - kTopBytes, kTopBytes);
#else
  (void)abandoned;
#endif
  g_free_stacks.push_back(s);
}

// ---------------------------------------------------------------------------------------
// device state
struct Device {
  std::size_t capacity = kDefaultMemoryBytes;
  std::size_t used = 0;
  std::map<std::uintptr_t, std::size_t> allocs;  // start -> bytes
  std::set<steer_emu_event*> events;
  int fail_alloc_in = -1;
  int fail_launch_in = -1;
  cudaError_t fail_launch_err = cudaSuccess;
  cudaError_t last = cudaSuccess;
  cudaError_t sticky = cudaSuccess;
  Schedule schedule;
  Counters counters;
  long launch_number = 0;
};

Schedule env_schedule() {
  const char* env = std::getenv("STEER_CUDA_EMULATION_SCHEDULE");
  if (!env) return Schedule{};
  try {
    return schedule_from_string(env);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(2);
  }
}

std::mutex g_mutex;         // the device state
std::mutex g_launch_mutex;  // one launch at a time (shared memory is static storage)

Device& device() {  // callers hold g_mutex
  static Device d = [] {
    Device x;
    x.schedule = env_schedule();
    return x;
  }();
  return d;
}

cudaError_t record(Device& d, cudaError_t err) {
  if (err != cudaSuccess) d.last = err;
  return err;
}

std::size_t units_of(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// the allocation holding [p, p + n), or none
bool in_device(const Device& d, const void* p, std::size_t n) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = d.allocs.upper_bound(a);
  if (it == d.allocs.begin()) return false;
  --it;
  return a >= it->first && a - it->first <= it->second && n <= it->second - (a - it->first);
}
bool touches_device(const Device& d, const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = d.allocs.upper_bound(a);
  if (it == d.allocs.begin()) return false;
  --it;
  return a < it->first + std::max<std::size_t>(it->second, 1);
}

bool sticky_kind(cudaError_t e) {
  return e == cudaErrorLaunchFailure || e == cudaErrorIllegalAddress || e == cudaErrorUnknown;
}

// ---------------------------------------------------------------------------------------
// a block in flight
struct Fiber {
  uint3 tid{0, 0, 0};
  int index = 0;
  enum State : char { kNew, kReady, kWaiting, kDone } state = kNew;
  Context ctx;
  Stack stack;
  void* asan_fake = nullptr;
};

struct Warp {
  unsigned live = 0;  // lanes not ended, one bit each
  unsigned mask = 0;  // the mask of the barrier being filled
  int arrived = 0;
  std::vector<int> waiters;
};

struct Block {
  dim3 grid, dim;
  uint3 idx{0, 0, 0};
  void (*body)(void*) = nullptr;
  void* ctx = nullptr;
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  std::deque<int> ready;
  int live = 0;
  int block_arrived = 0;
  std::vector<int> block_waiters;
  Context sched;
  const void* sched_bottom = nullptr;
  std::size_t sched_size = 0;
  void* sched_fake = nullptr;
  Fiber* current = nullptr;
  bool shuffled = false;
  double preempt = 0;
  std::mt19937_64 rng;
  std::string fault;  // why the launch faulted (empty: it did not)
  Counters counters;
};

thread_local Block* t_block = nullptr;

Block& block_or_die(const char* what) {
  Block* b = t_block;
  if (!b || !b->current) {
    std::fprintf(stderr, "steer CUDA emulator: %s used outside a kernel\n", what);
    std::abort();
  }
  return *b;
}

// the running fiber gives way to the scheduler; `ended` when it will never run again
void to_scheduler(Block& b, Fiber& f, bool ended) {
  b.counters.switches += 1;
#if STEER_EMU_ASAN
  __sanitizer_start_switch_fiber(ended ? nullptr : &f.asan_fake, b.sched_bottom, b.sched_size);
#else
  (void)ended;
#endif
  context_switch(f.ctx, b.sched);
#if STEER_EMU_ASAN
  __sanitizer_finish_switch_fiber(f.asan_fake, &b.sched_bottom, &b.sched_size);
#endif
}

void make_ready(Block& b, std::vector<int>& waiters) {
  std::sort(waiters.begin(), waiters.end());  // in-order: released lowest index first
  for (int i : waiters) {
    b.fibers[i].state = Fiber::kReady;
    b.ready.push_back(i);
  }
  waiters.clear();
}

void check_block_release(Block& b) {
  if (b.block_arrived > 0 && b.block_arrived == b.live) {
    b.block_arrived = 0;
    make_ready(b, b.block_waiters);
  }
}

void check_warp_release(Block& b, Warp& w) {
  if (w.arrived > 0 && w.arrived == __builtin_popcount(w.mask & w.live)) {
    w.arrived = 0;
    make_ready(b, w.waiters);
  }
}

void fiber_main(void* arg) {
  Fiber& f = *static_cast<Fiber*>(arg);
  Block& b = *t_block;
#if STEER_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &b.sched_bottom, &b.sched_size);
#endif
  try {
    b.body(b.ctx);
  } catch (const std::exception& e) {
    if (b.fault.empty()) b.fault = std::string("an exception left the kernel: ") + e.what();
  } catch (...) {
    if (b.fault.empty()) b.fault = "an exception left the kernel";
  }
  f.state = Fiber::kDone;
  b.live -= 1;
  Warp& w = b.warps[f.index / 32];
  w.live &= ~(1u << (f.index % 32));
  check_block_release(b);
  check_warp_release(b, w);
  to_scheduler(b, f, true);
  std::abort();  // an ended fiber is never resumed
}

void maybe_preempt(Block& b) {
  if (b.preempt <= 0) return;
  const double u = double(b.rng() >> 11) * 0x1.0p-53;
  if (u >= b.preempt) return;
  Fiber& f = *b.current;
  f.state = Fiber::kReady;
  b.ready.push_back(f.index);
  b.counters.preemptions += 1;
  to_scheduler(b, f, false);
}

// runs block b.idx to the end; false if it faulted
bool run_block(Block& b) {
  const int n = int(b.dim.x * b.dim.y * b.dim.z);
  b.fibers.assign(std::size_t(n), Fiber{});
  b.warps.assign(std::size_t((n + 31) / 32), Warp{});
  for (int i = 0; i < n; ++i) {
    Fiber& f = b.fibers[i];
    f.index = i;
    f.tid = uint3{unsigned(i) % b.dim.x, unsigned(i) / b.dim.x % b.dim.y,
                  unsigned(i) / (b.dim.x * b.dim.y)};
    b.warps[i / 32].live |= 1u << (i % 32);
    b.ready.push_back(i);
  }
  b.live = n;
  b.block_arrived = 0;
  b.block_waiters.clear();
  b.counters.blocks += 1;
  b.counters.threads += n;
  while (b.fault.empty()) {
    if (b.ready.empty()) {
      if (b.live == 0) break;
      int at_block = int(b.block_waiters.size()), at_warp = 0;
      for (const Warp& w : b.warps) at_warp += int(w.waiters.size());
      b.fault = "deadlock in block (" + std::to_string(b.idx.x) + ", " + std::to_string(b.idx.y) +
                ", " + std::to_string(b.idx.z) + "): " + std::to_string(at_block) +
                " threads wait at __syncthreads, " + std::to_string(at_warp) +
                " at __syncwarp, none can go on (barriers in divergent code)";
      break;
    }
    std::size_t pick = 0;
    if (b.shuffled) {
      pick = std::size_t(b.rng() % b.ready.size());
      std::swap(b.ready[pick], b.ready.front());
    }
    Fiber& f = b.fibers[b.ready.front()];
    b.ready.pop_front();
    if (f.state == Fiber::kNew) {
      f.stack = stack_get();
      context_init(f.ctx, f.stack.base, kStackBytes, fiber_main, &f);
    }
    f.state = Fiber::kReady;
    b.current = &f;
#if STEER_EMU_ASAN
    __sanitizer_start_switch_fiber(&b.sched_fake, f.stack.base, kStackBytes);
#endif
    context_switch(b.sched, f.ctx);
#if STEER_EMU_ASAN
    __sanitizer_finish_switch_fiber(b.sched_fake, nullptr, nullptr);
#endif
    b.current = nullptr;
    if (f.state == Fiber::kDone) {
      stack_put(f.stack, false);
      f.stack = Stack{};
    }
  }
  // a faulted block's fibers are abandoned where they stand
  for (Fiber& f : b.fibers)
    if (f.stack.base) stack_put(f.stack, true);
  b.ready.clear();
  return b.fault.empty();
}

bool valid_config(dim3 g, dim3 t) {
  const unsigned long threads = (unsigned long)t.x * t.y * t.z;
  return g.x >= 1 && g.y >= 1 && g.z >= 1 && t.x >= 1 && t.y >= 1 && t.z >= 1 &&
         g.x <= 2147483647u && g.y <= 65535u && g.z <= 65535u && t.x <= 1024u && t.y <= 1024u &&
         t.z <= 64u && threads <= 1024ul;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// built-ins and barriers
const uint3& thread_index() {
  Block& b = block_or_die("threadIdx");
  maybe_preempt(b);
  return b.current->tid;
}
const uint3& block_index() {
  Block& b = block_or_die("blockIdx");
  maybe_preempt(b);
  return b.idx;
}
const dim3& block_dim() {
  Block& b = block_or_die("blockDim");
  maybe_preempt(b);
  return b.dim;
}
const dim3& grid_dim() {
  Block& b = block_or_die("gridDim");
  maybe_preempt(b);
  return b.grid;
}

void sync_block() {
  Block& b = block_or_die("__syncthreads");
  Fiber& f = *b.current;
  f.state = Fiber::kWaiting;
  b.block_waiters.push_back(f.index);
  b.block_arrived += 1;
  check_block_release(b);
  to_scheduler(b, f, false);
}

void sync_warp(unsigned mask) {
  Block& b = block_or_die("__syncwarp");
  Fiber& f = *b.current;
  Warp& w = b.warps[f.index / 32];
  const unsigned bit = 1u << (f.index % 32);
  if (!(mask & bit) && b.fault.empty())
    b.fault = "__syncwarp(" + std::to_string(mask) + ") called by lane " +
              std::to_string(f.index % 32) + ", which its mask leaves out";
  if (w.arrived > 0 && w.mask != mask && b.fault.empty())
    b.fault = "the lanes of warp " + std::to_string(f.index / 32) +
              " wait at __syncwarp with different masks";
  if (w.arrived == 0) w.mask = mask;
  f.state = Fiber::kWaiting;
  w.waiters.push_back(f.index);
  w.arrived += 1;
  check_warp_release(b, w);
  to_scheduler(b, f, false);
}

void sync_warp_hook(void*) { sync_warp(0xffffffffu); }

void run_grid(dim3 grid, dim3 dim, void (*body)(void*), void* ctx) {
  if (t_block) {
    std::fprintf(stderr, "steer CUDA emulator: a kernel launched a kernel (not emulated)\n");
    std::abort();
  }
  Schedule sched;
  long number = 0;
  {
    std::lock_guard<std::mutex> lk(g_mutex);
    Device& d = device();
    if (d.sticky != cudaSuccess) {
      record(d, d.sticky);
      return;
    }
    if (!valid_config(grid, dim)) {
      record(d, cudaErrorInvalidConfiguration);
      return;
    }
    if (d.fail_launch_in >= 0 && d.fail_launch_in-- == 0) {
      const cudaError_t e = d.fail_launch_err;
      if (sticky_kind(e)) d.sticky = e;
      record(d, e);
      return;
    }
    sched = d.schedule;
    number = ++d.launch_number;
  }
  std::lock_guard<std::mutex> launch_lock(g_launch_mutex);
  Block b;
  b.grid = grid;
  b.dim = dim;
  b.body = body;
  b.ctx = ctx;
  b.shuffled = sched.shuffled;
  b.preempt = sched.shuffled ? sched.preempt : 0.0;
  b.rng.seed(sched.seed * 0x9E3779B97F4A7C15ull + std::uint64_t(number));
  t_block = &b;
  bool ok = true;
  for (unsigned z = 0; z < grid.z && ok; ++z)
    for (unsigned y = 0; y < grid.y && ok; ++y)
      for (unsigned x = 0; x < grid.x && ok; ++x) {
        b.idx = uint3{x, y, z};
        ok = run_block(b);
      }
  t_block = nullptr;
  std::lock_guard<std::mutex> lk(g_mutex);
  Device& d = device();
  d.counters.launches += 1;
  d.counters.blocks += b.counters.blocks;
  d.counters.threads += b.counters.threads;
  d.counters.switches += b.counters.switches;
  d.counters.preemptions += b.counters.preemptions;
  if (!ok) {
    // a fault inside a kernel: on hardware the context is lost (a sticky error)
    std::fprintf(stderr, "steer CUDA emulator: kernel fault: %s\n", b.fault.c_str());
    d.sticky = cudaErrorLaunchFailure;
    record(d, d.sticky);
  }
}

// ---------------------------------------------------------------------------------------
// test controls
Schedule schedule_from_string(const std::string& text) {
  Schedule s;
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string seed = text.substr(colon + 1);
    const bool digits = !seed.empty() && seed.size() <= 19 &&
                        seed.find_first_not_of("0123456789") == std::string::npos;
    if (digits) s.seed = std::strtoull(seed.c_str(), nullptr, 10);
    if (!digits)
      throw std::invalid_argument("STEER_CUDA_EMULATION_SCHEDULE: seed '" + seed +
                                  "' is not a non-negative integer");
  }
  if (kind == "in-order" && colon == std::string::npos) return s;
  if (kind == "shuffled" || kind == "preempt") {
    s.shuffled = true;
    s.preempt = kind == "preempt" ? 0.25 : 0.0;
    return s;
  }
  throw std::invalid_argument("STEER_CUDA_EMULATION_SCHEDULE: '" + text +
                              "' is not one of in-order, shuffled[:SEED], preempt[:SEED]");
}

void set_schedule(const Schedule& s) {
  std::lock_guard<std::mutex> lk(g_mutex);
  device().schedule = s;
}
Schedule schedule() {
  std::lock_guard<std::mutex> lk(g_mutex);
  return device().schedule;
}
void set_memory_bytes(std::size_t bytes) {
  std::lock_guard<std::mutex> lk(g_mutex);
  device().capacity = bytes;
}
std::size_t memory_bytes() {
  std::lock_guard<std::mutex> lk(g_mutex);
  return device().capacity;
}
std::size_t allocated_bytes() {
  std::lock_guard<std::mutex> lk(g_mutex);
  return device().used;
}
int live_allocations() {
  std::lock_guard<std::mutex> lk(g_mutex);
  return int(device().allocs.size());
}
void fail_allocation(int after) {
  std::lock_guard<std::mutex> lk(g_mutex);
  device().fail_alloc_in = after;
}
void fail_launch(int after, cudaError_t err) {
  std::lock_guard<std::mutex> lk(g_mutex);
  device().fail_launch_in = after;
  device().fail_launch_err = err;
}
Counters counters() {
  std::lock_guard<std::mutex> lk(g_mutex);
  return device().counters;
}
void reset() {
  std::lock_guard<std::mutex> lk(g_mutex);
  Device& d = device();
  d.sticky = d.last = cudaSuccess;
  d.fail_alloc_in = d.fail_launch_in = -1;
  d.capacity = kDefaultMemoryBytes;
  d.schedule = env_schedule();
}

}  // namespace steer_emu

// ---------------------------------------------------------------------------------------
// the runtime API
using steer_emu::device;
using steer_emu::g_mutex;
using steer_emu::record;

#define STEER_EMU_LOCK_AND_CHECK_STICKY()  \
  std::lock_guard<std::mutex> lk(g_mutex); \
  steer_emu::Device& d = device();         \
  if (d.sticky != cudaSuccess) return record(d, d.sticky)

cudaError_t cudaGetDeviceCount(int* count) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (!count) return record(d, cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* dev) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (!dev) return record(d, cudaErrorInvalidValue);
  *dev = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int dev) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (!prop) return record(d, cudaErrorInvalidValue);
  if (dev != 0) return record(d, cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof(prop->name), "steer CUDA emulator");
  prop->totalGlobalMem = d.capacity;
  prop->sharedMemPerBlock = 48 << 10;
  prop->regsPerBlock = 65536;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = 1024;
  prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = 65535;
  prop->maxGridSize[2] = 65535;
  prop->major = 9;  // the architecture the kernels are compiled for without a GPU (sm_90)
  prop->minor = 0;
  prop->multiProcessorCount = 1;  // one block at a time
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int dev) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (!value) return record(d, cudaErrorInvalidValue);
  if (dev != 0) return record(d, cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = 1024;
      return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
      *value = 1;
      return cudaSuccess;
    default:
      // clocks and the memory bus: an emulator has none (cuda_device.cpp leaves the
      // ceilings it derives from them at 0, unknown)
      return record(d, cudaErrorNotSupported);
  }
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (!free_bytes || !total_bytes) return record(d, cudaErrorInvalidValue);
  *total_bytes = d.capacity;
  *free_bytes = d.capacity > d.used ? d.capacity - d.used : 0;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (!ptr) return record(d, cudaErrorInvalidValue);
  *ptr = nullptr;
  if (bytes == 0) return cudaSuccess;
  if (d.fail_alloc_in >= 0 && d.fail_alloc_in-- == 0) return record(d, cudaErrorMemoryAllocation);
  const std::size_t units = steer_emu::units_of(bytes);
  if (units > d.capacity - std::min(d.used, d.capacity))
    return record(d, cudaErrorMemoryAllocation);
  // exactly `bytes` from the host heap, so that AddressSanitizer sees the first byte past it
  void* p = nullptr;
  if (posix_memalign(&p, 256, bytes) != 0) return record(d, cudaErrorMemoryAllocation);
  d.allocs[reinterpret_cast<std::uintptr_t>(p)] = bytes;
  d.used += units;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  std::lock_guard<std::mutex> lk(g_mutex);
  steer_emu::Device& d = device();
  if (!ptr) return d.sticky != cudaSuccess ? record(d, d.sticky) : cudaSuccess;
  auto it = d.allocs.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == d.allocs.end())
    return record(d, d.sticky != cudaSuccess ? d.sticky : cudaErrorInvalidValue);
  d.used -= steer_emu::units_of(it->second);
  d.allocs.erase(it);
  std::free(ptr);
  return d.sticky != cudaSuccess ? record(d, d.sticky) : cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return record(d, cudaErrorInvalidValue);
  if (kind == cudaMemcpyDefault)
    kind =
        steer_emu::touches_device(d, src)
            ? (steer_emu::touches_device(d, dst) ? cudaMemcpyDeviceToDevice
                                                 : cudaMemcpyDeviceToHost)
            : (steer_emu::touches_device(d, dst) ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
  const bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  const bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  // a device side must lie inside one allocation, a host side outside every allocation
  const bool ok =
      (src_dev ? steer_emu::in_device(d, src, bytes) : !steer_emu::touches_device(d, src)) &&
      (dst_dev ? steer_emu::in_device(d, dst, bytes) : !steer_emu::touches_device(d, dst));
  if (!ok || kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
    return record(d, cudaErrorInvalidValue);
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (bytes == 0) return cudaSuccess;
  if (!steer_emu::in_device(d, ptr, bytes)) return record(d, cudaErrorInvalidValue);
  std::memset(ptr, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (!event) return record(d, cudaErrorInvalidValue);
  *event = new steer_emu_event;
  d.events.insert(*event);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  std::lock_guard<std::mutex> lk(g_mutex);
  steer_emu::Device& d = device();
  if (d.events.erase(event) == 0)
    return record(d, d.sticky != cudaSuccess ? d.sticky : cudaErrorInvalidResourceHandle);
  delete event;
  return d.sticky != cudaSuccess ? record(d, d.sticky) : cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (stream != nullptr || d.events.count(event) == 0)
    return record(d, cudaErrorInvalidResourceHandle);
  // every call before this one has completed: launches and copies are synchronous here
  event->recorded = true;
  event->when = std::chrono::steady_clock::now();
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (d.events.count(event) == 0) return record(d, cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  if (!ms) return record(d, cudaErrorInvalidValue);
  if (d.events.count(start) == 0 || d.events.count(end) == 0 || !start->recorded || !end->recorded)
    return record(d, cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  std::lock_guard<std::mutex> lk(g_mutex);
  steer_emu::Device& d = device();
  const cudaError_t e = d.sticky != cudaSuccess ? d.sticky : d.last;
  d.last = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() {
  std::lock_guard<std::mutex> lk(g_mutex);
  steer_emu::Device& d = device();
  return d.sticky != cudaSuccess ? d.sticky : d.last;
}

cudaError_t cudaDeviceSynchronize() {
  STEER_EMU_LOCK_AND_CHECK_STICKY();
  return cudaSuccess;
}

namespace {
struct ErrorText {
  cudaError_t code;
  const char* name;
  const char* text;
};
// the runtime's names and descriptions of the errors this emulator can return
constexpr ErrorText kErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources",
     "too many resources requested for launch"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};
}  // namespace

const char* cudaGetErrorName(cudaError_t error) {
  for (const ErrorText& e : kErrors)
    if (e.code == error) return e.name;
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  for (const ErrorText& e : kErrors)
    if (e.code == error) return e.text;
  return "unknown error";
}
