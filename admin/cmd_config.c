/* streamflow config get|set (after kafka-configs.sh --describe / --alter). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"

#define KERR_UNKNOWN_TOPIC_OR_PARTITION 3

enum { OPT_TOPIC = 0x200, OPT_BROKER, OPT_DELETE, OPT_OVERRIDES };

/* ------------------------------------------------------------------------------------------
 * get
 * ------------------------------------------------------------------------------------------ */

static void get_help(void) {
    fputs("Usage: streamflow config get (--topic NAME | --broker ID) [KEY...] [OPTIONS]\n"
          "\n"
          "Show the configs of a topic or a broker with their values and where each comes\n"
          "from (DYNAMIC_TOPIC_CONFIG: a topic override, STATIC_BROKER_CONFIG: the broker's\n"
          "configuration file, DEFAULT_CONFIG: the default). With KEYs, only those.\n"
          "\n"
          "Options:\n"
          "      --topic NAME             the topic to describe\n"
          "      --broker ID              the broker to describe\n"
          "      --overrides              only the configs that are not defaults\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int config_get(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"topic", required_argument, NULL, OPT_TOPIC},
        {"broker", required_argument, NULL, OPT_BROKER},
        {"overrides", no_argument, NULL, OPT_OVERRIDES},
        {NULL, 0, NULL, 0}};
    static const char *const headers[] = {"NAME", "VALUE", "SOURCE"};
    const char *topic = NULL, *broker = NULL, *res;
    int opt, rc, overrides = 0, code = SF_CLI_EXIT_OK, i;
    sf_config_entry_t *entries = NULL;
    size_t n = 0, k;
    long long id;
    char what[300];
    sf_admin_t *a;
    json_t *jconfigs = NULL;
    sf_cli_table_t *tab = NULL;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            get_help();
            return SF_CLI_EXIT_OK;
        case OPT_TOPIC:
            topic = optarg;
            break;
        case OPT_BROKER:
            if (sf_cli_parse_int(cli, "--broker", optarg, 0, INT32_MAX, &id) < 0)
                return SF_CLI_EXIT_USAGE;
            broker = optarg;
            break;
        case OPT_OVERRIDES:
            overrides = 1;
            break;
        default:
            return SF_CLI_EXIT_USAGE;
        }
    }
    if ((topic == NULL) == (broker == NULL)) {
        sf_cli_error(cli, "give exactly one of --topic NAME or --broker ID");
        return SF_CLI_EXIT_USAGE;
    }
    if (topic != NULL && *topic == '\0') {
        sf_cli_error(cli, "--topic needs a topic name");
        return SF_CLI_EXIT_USAGE;
    }
    res = topic != NULL ? topic : broker;
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = sf_admin_describe_configs(a, res, broker != NULL, cli->timeout_ms, &entries, &n);
    sf_admin_destroy(a);
    if (rc == KERR_UNKNOWN_TOPIC_OR_PARTITION && topic != NULL)
        return sf_cli_topic_missing(cli, topic, "see 'streamflow topic list'");
    if (rc == SF_ERROR_NOTFOUND && broker != NULL) {
        sf_cli_error(cli, "broker %s is not in the cluster; see 'streamflow broker list'",
                     broker);
        return SF_CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        snprintf(what, sizeof what, "reading the configs of %s %s",
                 topic != NULL ? "topic" : "broker", res);
        return sf_cli_fail_hint(cli, what, rc,
                                broker != NULL && rc > 0
                                    ? "is that a broker id? see 'streamflow broker list'"
                                    : NULL);
    }
    /* Every KEY asked for must exist. */
    for (i = optind; i < argc; i++) {
        for (k = 0; k < n; k++)
            if (strcmp(entries[k].name, argv[i]) == 0)
                break;
        if (k == n) {
            sf_cli_error(cli, "%s %s has no config '%s'; run without KEY to see every name",
                         topic != NULL ? "topic" : "broker", res, argv[i]);
            code = SF_CLI_EXIT_FAIL;
        }
    }
    if (cli->json)
        jconfigs = json_array();
    else
        tab = sf_cli_table_new(3, headers);
    for (k = 0; k < n; k++) {
        const sf_config_entry_t *e = &entries[k];
        const char *value = e->value;

        if (overrides && e->is_default)
            continue;
        if (optind < argc) {
            for (i = optind; i < argc; i++)
                if (strcmp(e->name, argv[i]) == 0)
                    break;
            if (i == argc)
                continue;
        }
        if (cli->json) {
            json_array_append_new(
                jconfigs,
                json_pack("{s:s, s:o, s:s, s:b, s:b, s:b}", "name", e->name, "value",
                          value ? json_string(value) : json_null(), "source",
                          sf_cli_config_source_name(e->source), "default", e->is_default,
                          "read_only", e->read_only, "sensitive", e->sensitive));
        } else {
            const char *cells[3];

            if (value == NULL)
                value = e->sensitive ? "(sensitive)" : "(null)";
            cells[0] = e->name;
            cells[1] = value;
            cells[2] = sf_cli_config_source_name(e->source);
            sf_cli_table_add(tab, cells);
        }
    }
    if (cli->json) {
        sf_cli_json_print(json_pack("{s:s, s:s, s:o}", "resource_type",
                                    topic != NULL ? "topic" : "broker", "resource_name", res,
                                    "configs", jconfigs));
    } else {
        sf_cli_table_print(tab, stdout);
        sf_cli_table_free(tab);
    }
    sf_config_entries_destroy(entries, n);
    return code;
}

/* ------------------------------------------------------------------------------------------
 * set
 * ------------------------------------------------------------------------------------------ */

static void set_help(void) {
    fputs("Usage: streamflow config set --topic NAME KEY=VALUE... [--delete KEY]... [OPTIONS]\n"
          "\n"
          "Set or remove config overrides of a topic. Only the configs named change.\n"
          "Broker configs are static: change them in the broker's configuration file.\n"
          "\n"
          "Options:\n"
          "      --topic NAME             the topic to change\n"
          "      --delete KEY             remove an override, back to the broker's default\n"
          "                               (repeatable)\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int config_set(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"topic", required_argument, NULL, OPT_TOPIC},
        {"broker", required_argument, NULL, OPT_BROKER},
        {"delete", required_argument, NULL, OPT_DELETE},
        {NULL, 0, NULL, 0}};
    const char *topic = NULL;
    sf_config_kv_t *kvs;
    size_t nkvs = 0;
    int opt, i, code = SF_CLI_EXIT_USAGE;
    json_t *set = NULL, *del = NULL;
    sf_admin_t *a = NULL;

    if ((kvs = sf_cli_kvs_new(cli, argc)) == NULL)
        return SF_CLI_EXIT_FAIL;
    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            set_help();
            code = SF_CLI_EXIT_OK;
            goto out;
        case OPT_TOPIC:
            topic = optarg;
            break;
        case OPT_BROKER:
            sf_cli_error(cli, "broker configs are static: change them in the broker's "
                              "configuration file and restart it; 'config set' changes topic "
                              "configs (--topic NAME)");
            goto out;
        case OPT_DELETE:
            if (sf_cli_parse_delete(cli, "--delete", optarg, &kvs[nkvs]) < 0)
                goto out;
            nkvs++;
            break;
        default:
            goto out;
        }
    }
    if (topic == NULL || *topic == '\0') {
        sf_cli_error(cli, "missing --topic NAME; usage: streamflow config set --topic NAME "
                          "KEY=VALUE... [--delete KEY]");
        goto out;
    }
    for (i = optind; i < argc; i++) {
        if (sf_cli_parse_kv(cli, "setting", argv[i], &kvs[nkvs]) < 0)
            goto out;
        nkvs++;
    }
    if (nkvs == 0) {
        sf_cli_error(cli, "nothing to change: give KEY=VALUE or --delete KEY");
        goto out;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        goto out;
    code = sf_cli_alter_topic_configs(cli, a, topic, kvs, nkvs, &set, &del);
    if (code == SF_CLI_EXIT_OK && cli->json)
        sf_cli_json_print(json_pack("{s:s, s:o, s:o}", "topic", topic, "set", set, "deleted",
                                    del));
out:
    sf_admin_destroy(a);
    free(kvs);
    return code;
}

int sf_cmd_config(sf_cli_t *cli, int argc, char **argv) {
    if (argc < 1) {
        sf_cli_error(cli, "missing the sub-command (get, set)");
        return SF_CLI_EXIT_USAGE;
    }
    if (strcmp(argv[0], "get") == 0)
        return config_get(cli, argc, argv);
    if (strcmp(argv[0], "set") == 0)
        return config_set(cli, argc, argv);
    sf_cli_error(cli, "unknown sub-command 'config %s'; see 'streamflow help config'", argv[0]);
    return SF_CLI_EXIT_USAGE;
}
