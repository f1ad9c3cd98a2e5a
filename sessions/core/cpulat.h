/*
 * cpulat.h - idle CPUs kept polling while requests come (conf.cpu_poll_ms):
 * a PM QoS CPU latency request of 0 µs, held from a request until some
 * milliseconds after the last one.
 */
#ifndef SFS_CPULAT_H
#define SFS_CPULAT_H

#include <stdint.h>

/* Default device of the requests (tests give a file of their own). */
#define CPULAT_DEVICE "/dev/cpu_dma_latency"
/* The device's "no constraint" (PM_QOS_CPU_LATENCY_DEFAULT_VALUE). */
#define CPULAT_NONE 2000000000

/* Opens path for hold_ms after each request (0: never). Returns 0, also
 * when the device cannot be opened (then nothing is held: logged). */
int cpulat_init(const char *path, uint64_t hold_ms);
/* A request came: hold, or go on holding for hold_ms from now. */
void cpulat_touch(void);
/* How many times holding began (the metrics' counter). */
uint64_t cpulat_holds(void);
/* Lets go and closes the device. */
void cpulat_fini(void);

#endif
