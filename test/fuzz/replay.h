/* The corpus replay shared by the fuzz targets.
 *
 * Each target defines LLVMFuzzerTestOneInput. Linked with -fsanitize=fuzzer instead of
 * replay.c it is a libFuzzer target (test/fuzz/build-libfuzzer); linked with replay.c, main()
 * feeds it every file named on the command line and every file inside the directories named,
 * prints "N inputs replayed" and exits with sf_fuzz_finish()'s status once nothing crashed. CI
 * replays each target over its corpus in test/fuzz/. */
#ifndef SF_FUZZ_REPLAY_H
#define SF_FUZZ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by each target: its name for messages. */
extern const char sf_fuzz_name[];

/* May be defined by a target: take the replay option @opt (an argument starting with "--");
 * 0 when known, -1 when not. By default there are none. */
int sf_fuzz_option(const char *opt);

/* May be defined by a target: the exit status once every input was replayed (default 0). */
int sf_fuzz_finish(void);

#endif
