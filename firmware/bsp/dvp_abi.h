// SPDX-License-Identifier: MIT
/* The interface between the platform and its firmware, shared by both sides (C and C++): the
   job table the scenario loader places in DRAM, and the task scheduler's submission and
   completion queue entries. All fields little-endian, naturally aligned. */
#ifndef DVP_ABI_H
#define DVP_ABI_H
#include <stdint.h>

/* The job table: at DVP_JOB_TABLE (16 MiB into DRAM, after the firmware's own 16 MiB). */
#define DVP_JOB_TABLE_OFFSET 0x1000000ull
#define DVP_JOB_MAGIC 0x31534a4f42505644ull /* "DVPBOJS1" */
#define DVP_MAX_STREAMS 8
#define DVP_MAX_EVENTS 64

enum dvp_task_type {
  DVP_TASK_KERNEL = 1,  /* an AI Core kernel: blocks onto free AI Cores */
  DVP_TASK_RECORD = 2,  /* set event `event` */
  DVP_TASK_WAIT = 3,    /* wait until event `event` is set, then clear it */
  DVP_TASK_BARRIER = 4, /* wait until every other stream has nothing queued or running */
  DVP_TASK_AICPU = 5,   /* an AI CPU kernel: `entry` is its function, `args` its argument table */
};

/* AI CPU kernels (the firmware's function numbers). Argument table, 8 bytes each:
   x (f32 rows x cols), rows, cols, k, values (f32 rows x k; argmax: unused), indices (s32). */
enum dvp_aicpu_func { DVP_AICPU_TOPK = 1, DVP_AICPU_ARGMAX = 2 };

/* One task: a job table entry, and (with `id` set by the firmware) a submission queue entry. */
struct dvp_task {
  uint32_t type;       /* enum dvp_task_type */
  uint32_t stream;     /* 0 .. DVP_MAX_STREAMS - 1 */
  uint32_t id;         /* the firmware's number for it; comes back in its completion */
  uint32_t event;      /* RECORD / WAIT */
  uint64_t image;      /* KERNEL: GM address of the kernel's code */
  uint64_t code_bytes; /* KERNEL: its size */
  uint32_t entry;      /* KERNEL: byte offset of the first instruction */
  uint32_t blocks;     /* KERNEL: block count */
  uint64_t args;       /* KERNEL: GM address of the argument table */
  char name[24];       /* for reports */
};

struct dvp_job_table {
  uint64_t magic;
  uint64_t tasks;         /* entries that follow */
  uint64_t streams;       /* streams used (1 + the highest stream number) */
  uint64_t control_cores; /* cores 0 .. control_cores - 1 are control CPUs; the rest AI CPUs */
  struct dvp_task task[];
};

/* Completion queue entry, written by the task scheduler. */
enum dvp_status { DVP_OK = 0, DVP_FAULT = 1 };
struct dvp_completion {
  uint32_t id;         /* the task's id */
  uint32_t status;     /* enum dvp_status */
  uint32_t fault_core; /* DVP_FAULT: the AI Core that faulted */
  uint32_t fault_block;
  uint64_t fault_pc;
  uint64_t start_ns; /* when the scheduler started the task */
  uint64_t end_ns;   /* when it completed */
  char fault_reason[88];
};

#endif
