/* Helpers shared by the administration sub-commands (topic, config, broker, cluster); they
 * live in cli.c next to the helpers of cli.h, the topic config ones in clidata.c. */
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

/* Zeroed room for a config per command line argument (@argc + 1 of them). Prints "out of
 * memory" and returns NULL when there is none. Caller frees. */
sf_config_kv_t *sf_cli_kvs_new(const sf_cli_t *cli, int argc);

/* Parse the value @s of @option (e.g. "--delete") into @kv: a config name to remove (NULL
 * value; the name points into @s). Prints an error and returns -1 when @s is empty or holds
 * an '='. */
int sf_cli_parse_delete(const sf_cli_t *cli, const char *option, char *s, sf_config_kv_t *kv);

/* Print "topic 'NAME' does not exist (UNKNOWN_TOPIC_OR_PARTITION); HINT" and return
 * SF_CLI_EXIT_FAIL. */
int sf_cli_topic_missing(const sf_cli_t *cli, const char *topic, const char *hint);

/* Set or remove (NULL value) the @n config overrides @kvs of topic @topic with @a, and report
 * the outcome: a failure is printed (its exit code returned); on success the changes are
 * printed one a line, or with --output json returned in *@set (an object of the configs set)
 * and *@del (an array of the names removed), both new references the caller owns. Returns
 * SF_CLI_EXIT_OK or the exit code of the failure. */
int sf_cli_alter_topic_configs(const sf_cli_t *cli, sf_admin_t *a, const char *topic,
                               const sf_config_kv_t *kvs, size_t n, json_t **set,
                               json_t **del);

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

/* streamflow topic reassign, topic elect-leaders and cluster rebalance (cmd_reassign.c). */
int sf_cmd_topic_reassign(sf_cli_t *cli, int argc, char **argv);
int sf_cmd_cluster_rebalance(sf_cli_t *cli, int argc, char **argv);
int sf_cmd_topic_elect(sf_cli_t *cli, int argc, char **argv);

/* A list of int32 as a new JSON array. */
json_t *sf_cli_json_ids(const int32_t *ids, size_t n);

/* The common options plus @... (getopt_long entries) in one table, terminated. */
#define SF_CLI_OPTS(...) { SF_CLI_LONGOPTS, __VA_ARGS__, {NULL, 0, NULL, 0} }

/* Render a list of int32 as "1,2,3" into @buf (truncated to @size). */
const char *sf_cli_join_ids(const int32_t *ids, size_t n, char *buf, size_t size);

#endif
