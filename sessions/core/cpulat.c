/*
 * cpulat.c - keeps idle CPUs polling, not halting, while requests come.
 *
 * A round trip (open, write and close cmd, open and read exit) is five
 * requests a client waits for, and each wakes the daemon and then the
 * client again, mostly on the other CPU. A CPU with nothing to run halts
 * at once when the machine says so (a VM's guest_halt_poll_ns = 0), and
 * waking a halted virtual CPU goes through the host: ~25 µs a wakeup,
 * half of a round trip back to back (tests/bench/RESULTS.md). The kernel's
 * PM QoS CPU latency request (/dev/cpu_dma_latency) of 0 µs makes idle
 * CPUs poll instead; it is held from a request until hold_ms after the
 * last one, so that a quiet mount lets the machine's CPUs halt again. The
 * request lives as long as the descriptor: a killed daemon leaves none.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>
#include "sessions/core/cpulat.h"
#include "sessions/core/log.h"
#include "sessions/core/loop.h"

static int fd = -1;
static const char *dev; /* its path, for the log */
static int64_t hold_ms;
static int64_t last_ms; /* the last request */
static bool held;
static uint64_t holds;
static struct loop_timer timer;

/* Sets the request to v µs; on an error the request goes with the
 * descriptor, and is not made again. */
static int put(int32_t v)
{
	if (write(fd, &v, sizeof(v)) == sizeof(v))
		return 0;
	log_msg(LOG_WARNING,
		"cpu_poll_ms: cannot write %s: %m; idle CPUs "
		"will halt between requests",
		dev);
	close(fd);
	fd = -1;
	held = false;
	return -1;
}

static void on_timer(struct loop_timer *t)
{
	int64_t due = last_ms + hold_ms;

	if (loop_now_ms() < due) {
		loop_timer_add(t, due, on_timer, NULL);
		return;
	}
	put(CPULAT_NONE); /* on an error too, nothing is held after it */
	held = false;
}

int cpulat_init(const char *path, uint64_t ms)
{
	if (!ms)
		return 0;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		log_msg(LOG_INFO,
			"cpu_poll_ms: cannot open %s: %m; idle CPUs "
			"may halt between requests",
			path);
		return 0;
	}
	dev = path;
	hold_ms = (int64_t)ms;
	return 0;
}

void cpulat_touch(void)
{
	if (fd < 0)
		return;
	last_ms = loop_now_ms();
	if (held || put(0) < 0)
		return;
	held = true;
	holds++;
	loop_timer_add(&timer, last_ms + hold_ms, on_timer, NULL);
}

uint64_t cpulat_holds(void)
{
	return holds;
}

void cpulat_fini(void)
{
	loop_timer_del(&timer);
	if (fd >= 0)
		close(fd);
	fd = -1;
	held = false;
}
