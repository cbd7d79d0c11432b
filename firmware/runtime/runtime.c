// SPDX-License-Identifier: MIT
// Runtime firmware. On the first control CPU: reads the job table the scenario loader placed in
// DRAM, submits its tasks to the task scheduler's streams, sleeps until completion interrupts,
// checks each task's status, prints the per-task table on its UART and exits with the number
// of tasks that failed (0: all ran). On an AI CPU core: runs AI CPU kernels (aicpu.c).
#include "aicpu.h"

#define SQ_ENTRIES 64
#define CQ_ENTRIES 64
#define MAX_TASKS DVP_MAX_TASKS

static struct dvp_task sq[DVP_MAX_STREAMS][SQ_ENTRIES] __attribute__((aligned(64)));
static struct dvp_completion cq[CQ_ENTRIES] __attribute__((aligned(64)));
static struct dvp_completion done[MAX_TASKS];
static volatile unsigned completed;
static volatile unsigned completed_on[DVP_MAX_STREAMS];  // per stream: its ring's entries free again
static unsigned submitted[DVP_MAX_STREAMS];

static const struct dvp_job_table* const jobs = (const struct dvp_job_table*)(0x80000000ull + DVP_JOB_TABLE_OFFSET);

static void ts_write(uint32_t off, uint32_t v) { reg_write(SOC_TS_BASE + off, v); }
static uint32_t ts_read(uint32_t off) { return reg_read(SOC_TS_BASE + off); }

// Completions: consume every entry the scheduler wrote, then end the interrupt.
void irq_handler(void) {
  const unsigned core = core_id();
  const uint32_t line = reg_read(SOC_IRQ_BASE + IRQ_ACK(core));
  if (core >= jobs->control_cores) {  // it ends the interrupt itself
    aicpu_irq(core - (unsigned)jobs->control_cores, line);
    return;
  }
  if (line == SOC_TS_IRQ) {
    uint32_t head = ts_read(TS_CQ_HEAD);
    const uint32_t tail = ts_read(TS_CQ_TAIL);
    for (; head != tail; ++head) {
      const struct dvp_completion* c = &cq[head % CQ_ENTRIES];
      if (c->id < MAX_TASKS) {
        done[c->id] = *c;
        ++completed_on[jobs->task[c->id].stream % DVP_MAX_STREAMS];
      }
      ++completed;
    }
    ts_write(TS_CQ_HEAD, head);  // lowers the line
  }
  reg_write(SOC_IRQ_BASE + IRQ_EOI(core), line);
}

int main(unsigned core) {
  if (jobs->magic != DVP_JOB_MAGIC) {
    printf("runtime: no job table at %p\n", (const void*)jobs);
    return 100;
  }
  if (core >= jobs->control_cores) aicpu_main(core, core - (unsigned)jobs->control_cores);
  const unsigned n = (unsigned)jobs->tasks;
  if (n > MAX_TASKS) {
    printf("runtime: %u tasks, at most %u\n", n, MAX_TASKS);
    return 101;
  }
  printf("runtime: %u tasks on %u streams, %u AI Cores\n", n, (unsigned)jobs->streams, ts_read(TS_CORES));

  // Queues: one submission ring per stream, one completion ring; their interrupt to this core.
  ts_write(TS_CQ_BASE_LO, (uint32_t)(uintptr_t)cq);
  ts_write(TS_CQ_BASE_HI, (uint32_t)((uint64_t)(uintptr_t)cq >> 32));
  ts_write(TS_CQ_SIZE, CQ_ENTRIES);
  for (unsigned s = 0; s < DVP_MAX_STREAMS; ++s) {
    ts_write(TS_SQ_BASE_LO(s), (uint32_t)(uintptr_t)sq[s]);
    ts_write(TS_SQ_BASE_HI(s), (uint32_t)((uint64_t)(uintptr_t)sq[s] >> 32));
    ts_write(TS_SQ_SIZE(s), SQ_ENTRIES);
  }
  reg_write(SOC_IRQ_BASE + IRQ_ROUTE(SOC_TS_IRQ), core);
  reg_write(SOC_IRQ_BASE + IRQ_ENABLE, reg_read(SOC_IRQ_BASE + IRQ_ENABLE) | 1u << SOC_TS_IRQ);
  irq_unmask();

  // Submit in table order; a stream whose ring is full waits for completions on it (a record
  // always comes before its wait in the table, so what a full stream waits for is submitted).
  const uint64_t t0 = time_ns();
  for (unsigned i = 0; i < n; ++i) {
    const struct dvp_task* t = &jobs->task[i];
    const unsigned s = t->stream;
    wfi_until(submitted[s] - completed_on[s] < SQ_ENTRIES);
    irq_unmask();
    struct dvp_task* e = &sq[s][submitted[s] % SQ_ENTRIES];
    *e = *t;
    e->id = i;
    ++submitted[s];
    ts_write(TS_SQ_TAIL(s), submitted[s]);  // doorbell
  }
  wfi_until(completed >= n);

  unsigned failed = 0;
  printf("runtime: all %u tasks completed in %lu ns\n", n, (unsigned long)(time_ns() - t0));
  printf("  id stream task                     start ns     end ns    time ns  status\n");
  for (unsigned i = 0; i < n; ++i) {
    const struct dvp_task* t = &jobs->task[i];
    const struct dvp_completion* c = &done[i];
    printf("%4u %6u %-24s %10lu %10lu %10lu  %s\n", i, t->stream, t->name, (unsigned long)c->start_ns,
           (unsigned long)c->end_ns, (unsigned long)(c->end_ns - c->start_ns), c->status == DVP_OK ? "ok" : "FAULT");
    if (c->status != DVP_OK) {
      ++failed;
      printf("       fault: AI Core %u, block %u, pc %lx: %s\n", c->fault_core, c->fault_block,
             (unsigned long)c->fault_pc, c->fault_reason);
    }
  }
  return (int)failed;
}
