// SPDX-License-Identifier: MIT
// What the units behind the AI Core's pipes (MTE, cube, vector, FixPipe) see: the instruction
// as issued, and their core through a small interface (its local buffers, its parameters, its
// bus interface to GM and its fault report). The units hold no pipe state of their own beyond
// their statistics; the core's pipe threads own the queues, the flags and the time.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "aicore_config.hpp"
#include "common/time.hpp"
#include "isa.hpp"

namespace dvp::aicore {

// An instruction in a pipe queue, with the registers it names read at issue.
struct Issued {
  Instr in;
  std::uint64_t pc;
  std::uint64_t v[5];  // register operands, read at issue
  // Special registers the pipes use, also read at issue: a later setmaskn / mtspr does not
  // change an instruction already in a queue.
  std::uint64_t mask[2];
  std::uint64_t fmatrix, padvalue;
  std::array<std::uint64_t, kAippSprs> aipp;  // aipp.gm2l1 only (zero for the rest)
};

// When an instruction frees its pipe for the next one, and when its effects are complete.
// Transfers through the bus free the pipe once their last request has left (the engine
// pipelines), and complete when the last data has moved.
struct Span {
  Tick free, done;
  static Span at(Tick t) { return Span{t, t}; }  // an instruction that holds its pipe until done
};

// One transfer between GM and a local byte array through the core's bus interface, in
// line-sized requests, `rate` bytes per cycle at most and gm_outstanding in flight.
struct GmTransfer {
  bool write = false;
  std::uint64_t addr = 0;
  std::uint8_t* data = nullptr;
  std::uint64_t len = 0;
  Tick start = 0;          // when the first request may leave
  std::uint32_t rate = 1;  // bytes per cycle
  bool functional = true;  // move the bytes (fetches and scalar data always do)
  std::uint64_t pc = 0;    // the instruction responsible, for a fault report
  const Instr* in = nullptr;
  bool no_alloc = false;  // a read that does not allocate in the L2 (DataCopyCfg::no_alloc)
};
struct GmTiming {
  Tick issued;  // when the last request left
  Tick done;    // when the last data has moved
};

// The core as its units see it.
class CoreServices {
 public:
  virtual const AiCoreConfig& config() const = 0;
  // Whether this run moves data (a timing-only run does not).
  virtual bool functional() const = 0;
  // A local buffer; L0C with every mmad's results in it (the cube's arithmetic runs beside the
  // simulation: cube.hpp).
  virtual std::uint8_t* buffer(Buffer b) = 0;
  // L0C (its base) with every mmad's results in its bytes [addr, addr + len): a reader of part of
  // L0C waits only for the mmads that write that part.
  virtual const std::uint8_t* l0c_settled(std::uint64_t addr, std::uint64_t len) = 0;
  // L0C as it is, for the cube alone: the results of mmads still on the host lane land in it later.
  virtual std::uint8_t* l0c_for_cube() = 0;
  // Whether [addr, addr + len) lies inside buffer `b` with its alignment; raises a fault naming
  // the operand (`what`) if not.
  virtual bool local_range(Buffer b, std::uint64_t addr, std::uint64_t len, const Issued& e, const char* what) = 0;
  // Stops the core with a report naming the instruction and `reason`.
  virtual void fault(const Issued& e, const std::string& reason) = 0;
  // True once a fault has stopped the core: a unit abandons its instruction.
  virtual bool stopping() const = 0;
  // May wait (SystemC) for the memory system; the caller runs in its pipe's thread.
  virtual GmTiming gm_access(const GmTransfer& x) = 0;

 protected:
  ~CoreServices() = default;
};

}  // namespace dvp::aicore
