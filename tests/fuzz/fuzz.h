/* fuzz.h - what every harness shares: the libFuzzer entry point and a
 * check that turns a broken invariant into a crash libFuzzer records. */
#ifndef SFS_FUZZ_H
#define SFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() rather than assert(): it must hold in every build type. */
#define FUZZ_CHECK(cond, ...)                                                  \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"%s:%d: invariant broken: %s: ", __FILE__,     \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

#endif
