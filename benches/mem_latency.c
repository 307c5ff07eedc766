/* Latency of one dependent load against the size of the memory it ranges over: a pointer
 * chase through a random cyclic permutation of 64-byte lines (each load's address is the
 * previous load's value, so nothing overlaps and no prefetcher can guess the next line).
 * docs/performance.md ("Session 13: why 2× is out of reach") uses it to price the cache
 * misses of a simulation with many connections, whose state is touched in no useful order.
 *
 *   gcc -O2 -o /tmp/mem_latency benches/mem_latency.c && /tmp/mem_latency
 *
 * prints one line per working-set size: KiB, nanoseconds per load.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void) { /* xorshift64*: deterministic, no libc rand() limits */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

static double ns_per_load(size_t bytes) {
    size_t lines = bytes / 64, i;
    uint64_t *mem = aligned_alloc(64, lines * 64);
    size_t *order = malloc(lines * sizeof *order);
    if (!mem || !order) {
        perror("alloc");
        exit(1);
    }
    for (i = 0; i < lines; i++) order[i] = i;
    for (i = lines - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = next_random() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (i = 0; i < lines; i++) mem[order[i] * 8] = order[(i + 1) % lines] * 8;
    volatile uint64_t sink;
    uint64_t p = 0;
    for (i = 0; i < lines; i++) p = mem[p]; /* warm: one lap */
    long loads = 20000000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long k = 0; k < loads; k++) p = mem[p];
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sink = p;
    (void)sink;
    free(mem);
    free(order);
    return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / loads;
}

int main(void) {
    static const size_t kib[] = {16, 256, 768, 2048, 4096, 8192, 16384, 32768, 131072};
    for (size_t i = 0; i < sizeof kib / sizeof kib[0]; i++)
        printf("%8zu KiB  %6.1f ns/load\n", kib[i], ns_per_load(kib[i] * 1024));
    return 0;
}
