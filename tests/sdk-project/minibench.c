// SPDX-License-Identifier: MIT
// minibench: a small CoreMark-like workload, written for this test (not CoreMark): linked-list
// work on heap nodes, a 16x16 integer matrix multiply, a state machine that classifies number
// tokens, and a CRC-16 over every result. Built as davinci-vp firmware by the SDK and, with
// -DDVP_HOST, for the host; both must print the same checksum lines.
#ifdef DVP_HOST
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#else
#include "bsp.h"
#endif

#define ITERATIONS 12
#define NODES 160
#define N 16

static uint32_t seed = 0x2545f491u;
static int out_of_memory;
static uint32_t next_random(void) { return seed = seed * 1103515245u + 12345u; }

// CRC-16/CCITT (polynomial 0x1021), bit by bit.
static uint16_t crc16(uint16_t crc, uint32_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) {
    crc ^= (uint16_t)(((v >> (8 * b)) & 0xff) << 8);
    for (int i = 0; i < 8; ++i) crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

struct node {
  struct node* next;
  int32_t key;
  int32_t value;
};

// Builds a list sorted by key (insertion), reverses it, looks up keys, drops every node whose
// value is odd, and folds what is left into the CRC. Every node comes from malloc.
static uint16_t list_work(uint16_t crc) {
  struct node* head = NULL;
  for (int i = 0; i < NODES; ++i) {
    struct node* n = malloc(sizeof *n);
    if (!n) {
      out_of_memory = 1;
      return crc;
    }
    n->key = (int32_t)(next_random() >> 20);
    n->value = (int32_t)(next_random() >> 16) - 32768;
    struct node** at = &head;
    while (*at && (*at)->key < n->key) at = &(*at)->next;
    n->next = *at;
    *at = n;
  }
  struct node* reversed = NULL;
  while (head) {
    struct node* n = head;
    head = n->next;
    n->next = reversed;
    reversed = n;
  }
  head = reversed;
  for (int q = 0; q < 32; ++q) {
    const int32_t key = (int32_t)(next_random() >> 20);
    int pos = 0;
    const struct node* n = head;
    while (n && n->key != key) n = n->next, ++pos;
    crc = crc16(crc, n ? (uint32_t)pos : 0xffffu, 2);
  }
  for (struct node** at = &head; *at;) {
    struct node* n = *at;
    if (n->value & 1) {
      *at = n->next;
      free(n);
    } else {
      at = &n->next;
    }
  }
  while (head) {
    struct node* n = head;
    crc = crc16(crc, (uint32_t)(n->key ^ n->value), 4);
    head = n->next;
    free(n);
  }
  return crc;
}

// C = A x B on int16 inputs into int32, then a bias and a shift as a quantized layer would.
static uint16_t matrix_work(uint16_t crc) {
  static int16_t a[N][N], b[N][N];
  static int32_t c[N][N];
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      a[i][j] = (int16_t)(next_random() >> 18) - 8192;
      b[i][j] = (int16_t)(next_random() >> 18) - 8192;
    }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      int32_t sum = 0;
      for (int k = 0; k < N; ++k) sum += (int32_t)a[i][k] * b[k][j] / 64;
      c[i][j] = (sum + i - j) >> 3;
    }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) crc = crc16(crc, (uint32_t)c[i][j], 4);
  return crc;
}

enum state { START, SIGN, INT, POINT, FRACTION, EXP, EXP_SIGN, EXP_DIGITS, BAD, STATES };

// One character's transition; ',' ends a token, anything unexpected makes it BAD.
static enum state step(enum state s, char ch) {
  const int digit = ch >= '0' && ch <= '9';
  switch (s) {
    case START: return ch == '+' || ch == '-' ? SIGN : digit ? INT : ch == '.' ? POINT : BAD;
    case SIGN: return digit ? INT : ch == '.' ? POINT : BAD;
    case INT: return digit ? INT : ch == '.' ? FRACTION : ch == 'e' ? EXP : BAD;
    case POINT: return digit ? FRACTION : BAD;
    case FRACTION: return digit ? FRACTION : ch == 'e' ? EXP : BAD;
    case EXP: return ch == '+' || ch == '-' ? EXP_SIGN : digit ? EXP_DIGITS : BAD;
    case EXP_SIGN:
    case EXP_DIGITS: return digit ? EXP_DIGITS : BAD;
    default: return BAD;
  }
}

// Random text of number-like tokens through the machine; the counts of final states.
static uint16_t state_work(uint16_t crc) {
  static const char alphabet[] = "0123456789012345.+-e,,x";
  uint32_t finals[STATES] = {0};
  enum state s = START;
  for (int i = 0; i < 600; ++i) {
    const char ch = alphabet[(next_random() >> 16) % (sizeof alphabet - 1)];
    if (ch == ',') {
      ++finals[s];
      s = START;
    } else {
      s = step(s, ch);
    }
  }
  for (int i = 0; i < STATES; ++i) crc = crc16(crc, finals[i], 4);
  return crc;
}

int main(void) {
  uint16_t list = 0, matrix = 0, states = 0;
#ifndef DVP_HOST
  const uint64_t t0 = time_ns();
#endif
  for (int it = 0; it < ITERATIONS; ++it) {
    list = list_work(list);
    matrix = matrix_work(matrix);
    states = state_work(states);
  }
  uint16_t all = crc16(0xffff, list, 2);
  all = crc16(all, matrix, 2);
  all = crc16(all, states, 2);
  printf("minibench: list %04x matrix %04x states %04x\n", list, matrix, states);
  printf("minibench: %d iterations, checksum %04x\n", ITERATIONS, all);
#ifndef DVP_HOST
  const uint64_t ns = time_ns() - t0;
  printf("minibench: %lu ns simulated, %lu iterations/s, heap %zu bytes free\n", (unsigned long)ns,
         (unsigned long)(ITERATIONS * 1000000000ull / (ns ? ns : 1)), heap_free_bytes());
#endif
  if (out_of_memory) printf("minibench: malloc returned NULL\n");
  return out_of_memory;
}
