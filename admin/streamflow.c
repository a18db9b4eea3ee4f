/* streamflow: administer and use a StreamFlow (or any Kafka-protocol) cluster.
 *
 *   streamflow [OPTIONS] COMMAND [SUBCOMMAND] [OPTIONS] [ARGS]
 *
 * The common options (cli.h) are accepted before the command, between the command and its
 * sub-command, and by every sub-command. */
#include "config.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"

typedef int (*sf_cmd_fn)(sf_cli_t *cli, int argc, char **argv);

typedef struct sf_sub {
    const char *name;
    const char *summary;
} sf_sub_t;

typedef struct sf_command {
    const char *name;
    sf_cmd_fn fn;
    const sf_sub_t *subs; /* NULL: no sub-commands, fn gets argv[0] = name */
    const char *summary;
} sf_command_t;

static const sf_sub_t topic_subs[] = {
    {"create", "create a topic"},
    {"list", "list the topics"},
    {"describe", "show partitions, leaders, replicas, ISR and config overrides"},
    {"delete", "delete a topic"},
    {"alter", "add partitions, set or remove config overrides"},
    {"describe-producers", "show the idempotent producers the partition leaders know"},
    {"reassign", "move partitions to other brokers (plans in Kafka's JSON format)"},
    {"elect-leaders", "move leadership to the preferred replicas (or unclean)"},
    {NULL, NULL}};

static const sf_sub_t config_subs[] = {
    {"get", "show the configs of a topic or a broker"},
    {"set", "set or remove topic overrides and dynamic broker configs"},
    {NULL, NULL}};

static const sf_sub_t broker_subs[] = {
    {"list", "list the brokers"},
    {"api-versions", "list the APIs and versions a broker serves"},
    {NULL, NULL}};

static const sf_sub_t group_subs[] = {
    {"list", "list the consumer groups"},
    {"describe", "committed offsets, lag and members of groups"},
    {"delete", "delete groups and their committed offsets"},
    {"reset-offsets", "change a group's committed offsets (dry run unless --execute)"},
    {NULL, NULL}};

static const sf_sub_t txn_subs[] = {
    {"list", "list the transactional ids and their states"},
    {"describe", "producer, state, timeout and partitions of a transactional id"},
    {NULL, NULL}};

static const sf_sub_t cluster_subs[] = {
    {"status", "cluster id, controller, brokers, topic and partition health"},
    {"health", "checks with an exit status for scripts and service managers"},
    {"rebalance", "spread replicas and leaders evenly over the brokers (dry run unless "
                  "--execute)"},
    {NULL, NULL}};

static const sf_sub_t perf_subs[] = {
    {"produce", "producer throughput"},
    {"consume", "consumer throughput"},
    {"e2e", "end-to-end latency"},
    {NULL, NULL}};

static const sf_command_t commands[] = {
    {"topic", sf_cmd_topic, topic_subs, "manage topics"},
    {"config", sf_cmd_config, config_subs, "show and change topic and broker configs"},
    {"broker", sf_cmd_broker, broker_subs, "list the brokers and their APIs"},
    {"group", sf_cmd_group, group_subs, "manage consumer groups"},
    {"transactions", sf_cmd_transactions, txn_subs, "show the transactional producers"},
    {"cluster", sf_cmd_cluster, cluster_subs, "show the cluster's state"},
    {"produce", sf_cmd_produce, NULL, "write records to a topic"},
    {"consume", sf_cmd_consume, NULL, "read records from a topic"},
    {"request", sf_cmd_request, NULL, "send a request record and wait for the reply"},
    {"respond", sf_cmd_respond, NULL, "answer request records"},
    {"perf", sf_cmd_perf, perf_subs, "measure throughput and latency"},
    {NULL, NULL, NULL, NULL}};

static const struct option global_longopts[] = {
    SF_CLI_LONGOPTS, {"version", no_argument, NULL, 0x1ff}, {NULL, 0, NULL, 0}};

static void usage(FILE *out) {
    const sf_command_t *c;

    fputs("Usage: streamflow [OPTIONS] COMMAND [SUBCOMMAND] [OPTIONS] [ARGS]\n"
          "\n"
          "Administer and use a StreamFlow cluster (or any broker speaking the Kafka protocol).\n"
          "\n"
          "Commands:\n",
          out);
    for (c = commands; c->name != NULL; c++) {
        char left[64];
        size_t off;
        const sf_sub_t *s;

        off = (size_t)snprintf(left, sizeof left, "%s", c->name);
        if (c->subs != NULL) {
            for (s = c->subs; s->name != NULL && off < sizeof left; s++)
                off += (size_t)snprintf(left + off, sizeof left - off, "%c%s",
                                        s == c->subs ? ' ' : '|', s->name);
        }
        fprintf(out, "  %-40s %s\n", left, c->summary);
    }
    fprintf(out, "  %-40s %s\n", "help [COMMAND [SUBCOMMAND]]", "show help");
    sf_cli_print_common_options(out);
    fputs("      --version                show the version\n"
          "\n"
          "Common options go before the command or after the sub-command. Run\n"
          "'streamflow COMMAND SUBCOMMAND --help' for a sub-command's own options.\n"
          "\n"
          "Exit status: 0 success, 1 the operation failed, 2 bad command line or configuration,\n"
          "3 no broker answered in time.\n",
          out);
}

static void command_usage(const sf_command_t *c, FILE *out) {
    const sf_sub_t *s;
    int width = 14;

    fprintf(out, "Usage: streamflow %s SUBCOMMAND [OPTIONS] [ARGS]\n\n%c%s.\n\nSub-commands:\n",
            c->name, toupper((unsigned char)c->summary[0]), c->summary + 1);
    for (s = c->subs; s->name != NULL; s++)
        if ((int)strlen(s->name) > width)
            width = (int)strlen(s->name);
    for (s = c->subs; s->name != NULL; s++)
        fprintf(out, "  %-*s %s\n", width, s->name, s->summary);
    fprintf(out, "\nRun 'streamflow %s SUBCOMMAND --help' for its options.\n", c->name);
}

static const sf_command_t *find_command(const char *name) {
    const sf_command_t *c;

    for (c = commands; c->name != NULL; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static const sf_sub_t *find_sub(const sf_command_t *c, const char *name) {
    const sf_sub_t *s;

    for (s = c->subs; s->name != NULL; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

/* Parse the common options at the front of @argv (argv[0] is the program or command name),
 * stopping at the first non-option. Sets *@help / *@version. Returns the index of the first
 * non-option, or -1 after an error. */
static int parse_front(sf_cli_t *cli, int argc, char **argv, int *help, int *version) {
    int opt;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, "+" SF_CLI_SHORTOPTS, global_longopts)) != -1) {
        switch (opt) {
        case 'h':
            *help = 1;
            break;
        case 0x1ff:
            if (version == NULL) {
                sf_cli_error(cli, "unknown option '--version'; see '%s --help'", cli->prog);
                return -1;
            }
            *version = 1;
            break;
        default:
            return -1;
        }
    }
    return optind;
}

/* Run @c's sub-command @sub (or @c itself) with @argv[0..argc) where argv[0] is its name. */
static int run(sf_cli_t *cli, const sf_command_t *c, int argc, char **argv) {
    if (c->subs != NULL)
        snprintf(cli->prog, sizeof cli->prog, "streamflow %s %s", c->name, argv[0]);
    else
        snprintf(cli->prog, sizeof cli->prog, "streamflow %s", c->name);
    optind = 0; /* every sub-command parses its own options from argv[1] */
    return c->fn(cli, argc, argv);
}

/* streamflow help [COMMAND [SUBCOMMAND]] */
static int help(sf_cli_t *cli, int argc, char **argv) {
    const sf_command_t *c;
    char *hargv[3];

    if (argc < 1) {
        usage(stdout);
        return SF_CLI_EXIT_OK;
    }
    c = find_command(argv[0]);
    if (c == NULL) {
        sf_cli_error(cli, "unknown command '%s'; run 'streamflow --help' for the list",
                     argv[0]);
        return SF_CLI_EXIT_USAGE;
    }
    if (c->subs != NULL) {
        if (argc < 2) {
            command_usage(c, stdout);
            return SF_CLI_EXIT_OK;
        }
        if (find_sub(c, argv[1]) == NULL) {
            sf_cli_error(cli, "unknown sub-command '%s %s'; run 'streamflow help %s'", c->name,
                         argv[1], c->name);
            return SF_CLI_EXIT_USAGE;
        }
        hargv[0] = argv[1];
    } else {
        hargv[0] = argv[0];
    }
    hargv[1] = (char *)"--help";
    hargv[2] = NULL;
    return run(cli, c, 2, hargv);
}

int main(int argc, char **argv) {
    sf_cli_t cli;
    const sf_command_t *c;
    const sf_sub_t *s;
    int first, help_flag = 0, version = 0;

    memset(&cli, 0, sizeof cli);
    snprintf(cli.prog, sizeof cli.prog, "streamflow");
    cli.timeout_ms = 30000;

    first = parse_front(&cli, argc, argv, &help_flag, &version);
    if (first < 0)
        return SF_CLI_EXIT_USAGE;
    if (version) {
        printf("streamflow %s (libstreamflow %s)\n", PACKAGE_VERSION, sf_version());
        return SF_CLI_EXIT_OK;
    }
    if (first >= argc) {
        if (help_flag) {
            usage(stdout);
            return SF_CLI_EXIT_OK;
        }
        sf_cli_error(&cli, "no command given");
        usage(stderr);
        return SF_CLI_EXIT_USAGE;
    }
    if (strcmp(argv[first], "help") == 0)
        return help(&cli, argc - first - 1, argv + first + 1);
    c = find_command(argv[first]);
    if (c == NULL) {
        sf_cli_error(&cli, "unknown command '%s'", argv[first]);
        usage(stderr);
        return SF_CLI_EXIT_USAGE;
    }
    if (c->subs == NULL) {
        if (help_flag)
            return help(&cli, 1, argv + first);
        return run(&cli, c, argc - first, argv + first);
    }

    /* COMMAND [OPTIONS] SUBCOMMAND ... */
    snprintf(cli.prog, sizeof cli.prog, "streamflow %s", c->name);
    {
        int n = argc - first, next;

        next = parse_front(&cli, n, argv + first, &help_flag, NULL);
        if (next < 0)
            return SF_CLI_EXIT_USAGE;
        first += next;
    }
    if (first >= argc) {
        if (help_flag) {
            command_usage(c, stdout);
            return SF_CLI_EXIT_OK;
        }
        sf_cli_error(&cli, "no sub-command given");
        command_usage(c, stderr);
        return SF_CLI_EXIT_USAGE;
    }
    s = find_sub(c, argv[first]);
    if (s == NULL) {
        sf_cli_error(&cli, "unknown sub-command '%s'", argv[first]);
        command_usage(c, stderr);
        return SF_CLI_EXIT_USAGE;
    }
    if (help_flag) {
        char *hargv[3] = {argv[first], (char *)"--help", NULL};
        return run(&cli, c, 2, hargv);
    }
    return run(&cli, c, argc - first, argv + first);
}
