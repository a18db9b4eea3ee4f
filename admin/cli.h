/* Shared parts of the streamflow command: common options, client configuration, errors, exit
 * codes, and table/JSON output. Every sub-command is a function
 *   int sf_cmd_<name>(sf_cli_t *cli, int argc, char **argv)
 * called with argv[0] the sub-command's own name (e.g. "create" for "streamflow topic create",
 * or "produce" for "streamflow produce"), returning an exit code below. */
#ifndef SF_CLI_H
#define SF_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "streamflow.h"

/* Exit codes (documented in streamflow(1)). */
#define SF_CLI_EXIT_OK 0          /* success */
#define SF_CLI_EXIT_FAIL 1        /* the operation failed (e.g. the broker refused it) */
#define SF_CLI_EXIT_USAGE 2       /* bad command line or configuration */
#define SF_CLI_EXIT_UNREACHABLE 3 /* no broker answered in time */

typedef struct sf_cli {
    char prog[64];              /* "streamflow topic create": prefix of every message */
    const char *bootstrap;      /* --bootstrap-server, else $STREAMFLOW_BOOTSTRAP, else
                                 * "127.0.0.1:9092" */
    const char *command_config; /* --command-config FILE (client properties, e.g. TLS) */
    const char *props[64];      /* -X/--property key=value, applied after the file */
    size_t nprops;
    int json;                   /* --output json (default: table) */
    int timeout_ms;             /* --timeout MS, default 30000 */
} sf_cli_t;

/* The options every sub-command accepts; put SF_CLI_LONGOPTS in a getopt_long table and
 * SF_CLI_SHORTOPTS in its short-option string, and hand unknown options to sf_cli_option. */
#define SF_CLI_SHORTOPTS "b:X:h"
#define SF_CLI_LONGOPTS                                                                        \
    {"bootstrap-server", required_argument, NULL, 'b'},                                       \
        {"command-config", required_argument, NULL, 0x100},                                   \
        {"output", required_argument, NULL, 0x101},                                           \
        {"timeout", required_argument, NULL, 0x102},                                          \
        {"property", required_argument, NULL, 'X'}, {"help", no_argument, NULL, 'h'}

/* Handle common option @opt (getopt_long's return) with @arg. Returns 1 when handled, 0 when
 * @opt is not a common option, -1 after printing an error for a bad value. 'h' is NOT
 * handled: each sub-command prints its own help. */
int sf_cli_option(sf_cli_t *cli, int opt, const char *arg);

/* The client configuration: bootstrap.servers, then --command-config, then -X properties.
 * Prints the error and returns NULL when something is wrong. Caller destroys. */
sf_conf_t *sf_cli_conf(sf_cli_t *cli);

/* Print "PROG: message" to stderr. */
void sf_cli_error(const sf_cli_t *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print "PROG: WHAT: <error description>" plus a hint of what to try (e.g. for TRANSPORT or
 * TIMED_OUT: "is a broker listening on BOOTSTRAP? see --bootstrap-server") and return the exit
 * code for @err. */
int sf_cli_fail(const sf_cli_t *cli, const char *what, int err);

/* The exit code for a library error: 0 -> OK, TIMED_OUT/TRANSPORT/RESOLVE/TLS -> UNREACHABLE,
 * INVALID -> USAGE, anything else FAIL. */
int sf_cli_exit_code(int err);

/* Parse helpers: print an error naming @what and return -1 on a bad value. */
int sf_cli_parse_int(const sf_cli_t *cli, const char *what, const char *s, long long min,
                     long long max, long long *out);

/* A text table: columns left-aligned and padded, header line first. */
typedef struct sf_cli_table sf_cli_table_t;
sf_cli_table_t *sf_cli_table_new(size_t ncols, const char *const *headers);
/* Add a row of ncols strings (copied; NULL prints as "-"). */
void sf_cli_table_add(sf_cli_table_t *t, const char *const *cells);
void sf_cli_table_print(sf_cli_table_t *t, FILE *out);
void sf_cli_table_free(sf_cli_table_t *t);

/* Print @j (stolen) as indented JSON plus a newline to stdout. */
void sf_cli_json_print(json_t *j);

/* Sub-commands (admin/cmd_*.c). */
int sf_cmd_topic(sf_cli_t *cli, int argc, char **argv);   /* create|list|describe|delete|alter */
int sf_cmd_config(sf_cli_t *cli, int argc, char **argv);  /* get|set */
int sf_cmd_broker(sf_cli_t *cli, int argc, char **argv);  /* list|api-versions */
int sf_cmd_group(sf_cli_t *cli, int argc, char **argv);   /* list|describe|delete|reset-offsets */
int sf_cmd_transactions(sf_cli_t *cli, int argc, char **argv); /* list|describe */
int sf_cmd_cluster(sf_cli_t *cli, int argc, char **argv); /* status|health|rebalance */
int sf_cmd_produce(sf_cli_t *cli, int argc, char **argv);
int sf_cmd_consume(sf_cli_t *cli, int argc, char **argv);
int sf_cmd_request(sf_cli_t *cli, int argc, char **argv);
int sf_cmd_respond(sf_cli_t *cli, int argc, char **argv);
int sf_cmd_perf(sf_cli_t *cli, int argc, char **argv);    /* produce|consume|e2e */

#endif
