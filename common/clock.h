/* Clocks. */
#ifndef SF_CLOCK_H
#define SF_CLOCK_H

#include <stdint.h>

/* Wall-clock time in milliseconds since the epoch (record timestamps, retention). */
int64_t sf_clock_wall_ms(void);

/* Monotonic time in milliseconds (timeouts, intervals). */
int64_t sf_clock_mono_ms(void);
/* The same clock in microseconds. */
int64_t sf_clock_mono_us(void);

#endif
