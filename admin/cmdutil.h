/* Helpers shared by the administration sub-commands (topic, config, broker, cluster); they
 * live in cli.c next to the helpers of cli.h. */
#ifndef SF_CMDUTIL_H
#define SF_CMDUTIL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/* getopt_long with the messages of the streamflow command: an unknown option, a missing
 * argument or a stray value print "PROG: unknown option '--x'; see 'PROG --help'" and return
 * '?'. Common options (cli.h) are handled here too and not returned (a bad value returns '?').
 * Returns -1 at the end of the options. Reset optind to 0 before the first call. @argv is
 * permuted (options first), as GNU getopt does. */
int sf_cli_getopt(sf_cli_t *cli, int argc, char **argv, const char *shortopts,
                  const struct option *longopts);

/* Print the help of the common options (cli.h) to @out. */
void sf_cli_print_common_options(FILE *out);

/* A new admin client from sf_cli_conf(@cli). Prints the error and returns NULL (the caller
 * exits with SF_CLI_EXIT_USAGE) on a bad configuration. Caller destroys. */
sf_admin_t *sf_cli_admin(sf_cli_t *cli);

/* Split "key=value" at the first '=' into @kv (pointers into @s, which is modified). Prints
 * an error naming @what and returns -1 when there is no '=' or the key is empty. */
int sf_cli_parse_kv(const sf_cli_t *cli, const char *what, char *s, sf_config_kv_t *kv);

/* Kafka's name of a ConfigSource ("DYNAMIC_TOPIC_CONFIG", "DEFAULT_CONFIG", ...; static). */
const char *sf_cli_config_source_name(int source);

/* The bootstrap servers the last sf_cli_conf used (for hints; never NULL). */
const char *sf_cli_bootstrap(const sf_cli_t *cli);

/* Print "PROG: WHAT: DESCRIPTION (NAME)" and, when there is one, @hint on the same line
 * ("; HINT"), else sf_cli_fail's hint; returns the exit code for @err. */
int sf_cli_fail_hint(const sf_cli_t *cli, const char *what, int err, const char *hint);

/* Like sf_cli_fail_hint, with the broker's own message @msg (may be NULL or empty) in place
 * of the error's description. */
int sf_cli_fail_msg(const sf_cli_t *cli, const char *what, int err, const char *msg,
                    const char *hint);

/* Render a list of int32 as "1,2,3" into @buf (truncated to @size). */
const char *sf_cli_join_ids(const int32_t *ids, size_t n, char *buf, size_t size);

#endif
