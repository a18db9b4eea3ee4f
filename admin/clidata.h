/* Helpers shared by the data sub-commands of the streamflow command (produce, consume,
 * request, respond, perf): record headers from the command line, client configuration
 * overrides, clocks, a latency histogram and signal handling. */
#ifndef SF_CLIDATA_H
#define SF_CLIDATA_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "cmdutil.h"

/* Record headers given as --header KEY=VALUE (the strings are borrowed from argv). */
typedef struct sf_clidata_headers {
    sf_header_t *v;
    size_t n;
    size_t cap;
} sf_clidata_headers_t;

/* Add "KEY=VALUE" (split at the first '='; "KEY=" is an empty value). Prints an error and
 * returns -1 when there is no '=' or the key is empty, or when out of memory. */
int sf_clidata_headers_add(const sf_cli_t *cli, sf_clidata_headers_t *h, const char *kv);
void sf_clidata_headers_free(sf_clidata_headers_t *h);

/* sf_conf_set @key to @value, or print "PROG: OPTION: problem" (@option names the command
 * line option the value came from) and return -1. */
int sf_clidata_conf_set(const sf_cli_t *cli, sf_conf_t *conf, const char *option,
                        const char *key, const char *value);

/* Set @key to @value unless it was configured (its value differs from the library's
 * default @dflt). Returns 0, or -1 after printing an error. */
int sf_clidata_conf_soft(const sf_cli_t *cli, sf_conf_t *conf, const char *key,
                         const char *dflt, const char *value);

/* max.block.ms (how long a send waits for metadata or buffer room) from --timeout, unless
 * configured. Returns 0 or -1. */
int sf_clidata_conf_block(const sf_cli_t *cli, sf_conf_t *conf);

/* Producer options shared by produce and perf (each NULL when not given). */
typedef struct sf_clidata_prodopts {
    const char *acks;
    const char *compression;
    const char *linger_ms;
    const char *batch_size;
} sf_clidata_prodopts_t;

/* Apply the given producer options to @conf. Returns 0, or -1 after printing an error. */
int sf_clidata_prodopts_apply(const sf_cli_t *cli, sf_conf_t *conf,
                              const sf_clidata_prodopts_t *po);

/* The one TOPIC operand left after the options (argv[optind]), or NULL after printing
 * "missing TOPIC" or "expected one TOPIC" when there is none or more than one. */
const char *sf_clidata_topic_arg(const sf_cli_t *cli, int argc, char **argv);

/* Copy @s into @out (@size > 0 bytes; truncated, always terminated), reading "\t" as a tab
 * and "\\" as one backslash. Returns the length of @out. */
size_t sf_clidata_unescape(const char *s, char *out, size_t size);

/* Parse a point in time: milliseconds since the epoch, or ISO 8601 (2024-05-01T12:00:00Z,
 * 2024-05-01T14:00:00.250+02:00; without a zone local time; a date alone is its midnight)
 * into *@ms. Returns 0, or -1 when @s is neither. */
int sf_clidata_parse_timestamp(const char *s, int64_t *ms);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t sf_clidata_now_ns(void);

/* A latency histogram of microsecond values: exact below 128 us, then 64 buckets per power
 * of two (under 1.6% relative error), no allocation after sf_clidata_hist_new. */
typedef struct sf_clidata_hist sf_clidata_hist_t;

sf_clidata_hist_t *sf_clidata_hist_new(void);
void sf_clidata_hist_free(sf_clidata_hist_t *h);
/* Record one value (negative values count as 0). */
void sf_clidata_hist_add(sf_clidata_hist_t *h, int64_t us);
/* Values recorded so far. */
uint64_t sf_clidata_hist_count(const sf_clidata_hist_t *h);
/* The @q quantile (0..1) in microseconds (the middle of its bucket, at most the maximum),
 * 0 when empty. */
double sf_clidata_hist_quantile(const sf_clidata_hist_t *h, double q);
double sf_clidata_hist_mean(const sf_clidata_hist_t *h);
int64_t sf_clidata_hist_max(const sf_clidata_hist_t *h);

/* Handle SIGINT and SIGTERM in a thread of their own: blocks both (and SIGUSR2, used to
 * stop the thread) in the calling thread (call it before creating any library handle, so
 * that their threads inherit the mask) and starts a thread that calls @cb(signal number,
 * @arg) for each one, from normal thread context (so @cb may call thread-safe library
 * functions such as sf_consumer_wakeup). Returns 0 or -1 (errno set). */
int sf_clidata_sigthread_start(void (*cb)(int sig, void *arg), void *arg);

/* Stop the signal thread (after its callback, if one is running, has returned). The signals
 * stay blocked. */
void sf_clidata_sigthread_stop(void);

/* Whether progress lines should be shown (standard error is a terminal). */
int sf_clidata_progress_enabled(void);

#endif
