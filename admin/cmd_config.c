/* streamflow config get|set (after kafka-configs.sh --describe / --alter). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"

#define KERR_UNKNOWN_TOPIC_OR_PARTITION 3
#define KERR_INVALID_CONFIG 40
#define KERR_INVALID_REQUEST 42

enum { OPT_TOPIC = 0x200, OPT_BROKER, OPT_BROKER_DEFAULTS, OPT_DELETE, OPT_OVERRIDES };

/* The resource a config command names: a topic, a broker, or the cluster-wide broker
 * default (Kafka's BROKER resource ""). */
typedef struct config_res {
    const char *topic; /* NULL for a broker resource */
    const char *broker; /* the id in decimal, or "" for the default; NULL for a topic */
    char id[24];
    char label[300]; /* "topic T", "broker 1", "the cluster-wide broker default" */
} config_res_t;

/* Take the value @arg of --broker, or --broker-defaults (@arg NULL), into @r. Prints an error
 * and returns -1 on a bad id or a second resource. An empty --broker is refused rather than
 * taken for the default, so that an unset shell variable cannot change every broker. */
static int config_res_broker(sf_cli_t *cli, config_res_t *r, const char *arg) {
    long long id;

    if (r->topic != NULL || r->broker != NULL) {
        sf_cli_error(cli, "give only one of --topic NAME, --broker ID or --broker-defaults");
        return -1;
    }
    if (arg == NULL) {
        r->broker = "";
        snprintf(r->label, sizeof r->label, "the cluster-wide broker default");
        return 0;
    }
    if (*arg == '\0') {
        sf_cli_error(cli, "--broker needs a broker id; --broker-defaults names the cluster-wide "
                          "default of every broker");
        return -1;
    }
    if (sf_cli_parse_int(cli, "--broker", arg, 0, INT32_MAX, &id) < 0)
        return -1;
    snprintf(r->id, sizeof r->id, "%lld", id);
    r->broker = r->id;
    snprintf(r->label, sizeof r->label, "broker %s", r->id);
    return 0;
}

/* Take --topic @arg into @r; -1 (printed) on a second resource. */
static int config_res_topic(sf_cli_t *cli, config_res_t *r, const char *arg) {
    if (r->topic != NULL || r->broker != NULL) {
        sf_cli_error(cli, "give only one of --topic NAME, --broker ID or --broker-defaults");
        return -1;
    }
    r->topic = arg;
    snprintf(r->label, sizeof r->label, "topic %s", arg);
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * get
 * ------------------------------------------------------------------------------------------ */

static void get_help(void) {
    fputs("Usage: streamflow config get (--topic NAME | --broker ID | --broker-defaults)\n"
          "       [KEY...] [OPTIONS]\n"
          "\n"
          "Show the configs of a topic or a broker with their values and where each comes\n"
          "from (DYNAMIC_TOPIC_CONFIG: a topic override, DYNAMIC_BROKER_CONFIG: set on that\n"
          "broker with 'config set', DYNAMIC_DEFAULT_BROKER_CONFIG: the cluster-wide default\n"
          "set with 'config set --broker-defaults', STATIC_BROKER_CONFIG: the broker's\n"
          "configuration file, DEFAULT_CONFIG: the default). With KEYs, only those.\n"
          "\n"
          "Options:\n"
          "      --topic NAME             the topic to describe\n"
          "      --broker ID              the broker to describe\n"
          "      --broker-defaults        the cluster-wide dynamic defaults of every broker\n"
          "                               (only those that are set)\n"
          "      --overrides              only the configs that are not defaults\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int config_get(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"topic", required_argument, NULL, OPT_TOPIC},
        {"broker", required_argument, NULL, OPT_BROKER},
        {"broker-defaults", no_argument, NULL, OPT_BROKER_DEFAULTS},
        {"overrides", no_argument, NULL, OPT_OVERRIDES},
        {NULL, 0, NULL, 0}};
    static const char *const headers[] = {"NAME", "VALUE", "SOURCE"};
    const char *topic, *broker, *res;
    int opt, rc, overrides = 0, code = SF_CLI_EXIT_OK, i;
    sf_config_entry_t *entries = NULL;
    size_t n = 0, k;
    config_res_t r;
    char what[400];
    sf_admin_t *a;
    json_t *jconfigs = NULL;
    sf_cli_table_t *tab = NULL;

    memset(&r, 0, sizeof r);
    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            get_help();
            return SF_CLI_EXIT_OK;
        case OPT_TOPIC:
            if (config_res_topic(cli, &r, optarg) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_BROKER:
        case OPT_BROKER_DEFAULTS:
            if (config_res_broker(cli, &r, opt == OPT_BROKER ? optarg : NULL) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_OVERRIDES:
            overrides = 1;
            break;
        default:
            return SF_CLI_EXIT_USAGE;
        }
    }
    topic = r.topic;
    broker = r.broker;
    if (topic == NULL && broker == NULL) {
        sf_cli_error(cli, "give exactly one of --topic NAME or --broker ID (or "
                          "--broker-defaults)");
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
        snprintf(what, sizeof what, "reading the configs of %s", r.label);
        return sf_cli_fail_hint(cli, what, rc,
                                broker != NULL && *broker != '\0' && rc > 0
                                    ? "is that a broker id? see 'streamflow broker list'"
                                    : NULL);
    }
    /* Every KEY asked for must exist (the defaults list only those that are set). */
    for (i = optind; i < argc && (broker == NULL || *broker != '\0'); i++) {
        for (k = 0; k < n; k++)
            if (strcmp(entries[k].name, argv[i]) == 0)
                break;
        if (k == n) {
            sf_cli_error(cli, "%s has no config '%s'; run without KEY to see every name", r.label,
                         argv[i]);
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
    fputs("Usage: streamflow config set (--topic NAME | --broker ID | --broker-defaults)\n"
          "       KEY=VALUE... [--delete KEY]... [OPTIONS]\n"
          "\n"
          "Set or remove config overrides of a topic, or dynamic configs of a broker or of\n"
          "every broker (the cluster-wide default), applied without a restart. Only the\n"
          "configs named change. A broker's dynamic config wins over the cluster-wide\n"
          "default, which wins over the broker's configuration file. Only the broker\n"
          "settings behind topic configs (log.retention.ms, log.segment.bytes,\n"
          "message.max.bytes, ...: those 'config get --broker ID' shows) can change at run\n"
          "time; the others (log.dirs, listeners, ...) only in the configuration file.\n"
          "\n"
          "Options:\n"
          "      --topic NAME             the topic to change\n"
          "      --broker ID              the broker to change (the request goes to it)\n"
          "      --broker-defaults        the cluster-wide default of every broker\n"
          "      --delete KEY             remove an override or dynamic config, back to the\n"
          "                               default (repeatable)\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

/* Set or remove (NULL value) the @n dynamic configs @kvs of broker resource @r with @a, and
 * report the outcome as sf_cli_alter_topic_configs does. */
static int alter_broker_configs(const sf_cli_t *cli, sf_admin_t *a, const config_res_t *r,
                                const sf_config_kv_t *kvs, size_t n, json_t **set,
                                json_t **del) {
    char errstr[512], what[400];
    size_t k;
    int rc;

    *set = NULL;
    *del = NULL;
    rc = sf_admin_alter_broker_configs(a, r->broker, kvs, n, cli->timeout_ms, errstr,
                                       sizeof errstr);
    if (rc == SF_ERROR_NOTFOUND) {
        sf_cli_error(cli, "broker %s is not in the cluster; see 'streamflow broker list'",
                     r->broker);
        return SF_CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        snprintf(what, sizeof what, "changing the configs of %s", r->label);
        return sf_cli_fail_msg(
            cli, what, rc, errstr,
            rc == KERR_INVALID_REQUEST
                ? "'streamflow config get --broker ID' lists the keys that can; set the others "
                  "in the broker's configuration file and restart it"
            : rc == KERR_INVALID_CONFIG
                ? "check the values (see 'streamflow config get --broker ID')"
            : rc == SF_ERROR_UNSUPPORTED
                ? "the broker does not support IncrementalAlterConfigs (Kafka API 44)"
                : NULL);
    }
    if (cli->json) {
        *set = json_object();
        *del = json_array();
    }
    for (k = 0; k < n; k++) {
        if (cli->json && kvs[k].value != NULL)
            json_object_set_new(*set, kvs[k].name, json_string(kvs[k].value));
        else if (cli->json)
            json_array_append_new(*del, json_string(kvs[k].name));
        else if (kvs[k].value != NULL)
            printf("Set %s=%s on %s.\n", kvs[k].name, kvs[k].value, r->label);
        else
            printf("Removed %s from %s.\n", kvs[k].name, r->label);
    }
    return SF_CLI_EXIT_OK;
}

static int config_set(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS,
        {"topic", required_argument, NULL, OPT_TOPIC},
        {"broker", required_argument, NULL, OPT_BROKER},
        {"broker-defaults", no_argument, NULL, OPT_BROKER_DEFAULTS},
        {"delete", required_argument, NULL, OPT_DELETE},
        {NULL, 0, NULL, 0}};
    config_res_t r;
    sf_config_kv_t *kvs;
    size_t nkvs = 0;
    int opt, i, code = SF_CLI_EXIT_USAGE;
    json_t *set = NULL, *del = NULL;
    sf_admin_t *a = NULL;

    if ((kvs = sf_cli_kvs_new(cli, argc)) == NULL)
        return SF_CLI_EXIT_FAIL;
    memset(&r, 0, sizeof r);
    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            set_help();
            code = SF_CLI_EXIT_OK;
            goto out;
        case OPT_TOPIC:
            if (config_res_topic(cli, &r, optarg) < 0)
                goto out;
            break;
        case OPT_BROKER:
        case OPT_BROKER_DEFAULTS:
            if (config_res_broker(cli, &r, opt == OPT_BROKER ? optarg : NULL) < 0)
                goto out;
            break;
        case OPT_DELETE:
            if (sf_cli_parse_delete(cli, "--delete", optarg, &kvs[nkvs]) < 0)
                goto out;
            nkvs++;
            break;
        default:
            goto out;
        }
    }
    if (r.broker == NULL && (r.topic == NULL || *r.topic == '\0')) {
        sf_cli_error(cli, "missing --topic NAME (or --broker ID, --broker-defaults); usage: "
                          "streamflow config set --topic NAME KEY=VALUE... [--delete KEY]");
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
    if (r.topic != NULL)
        code = sf_cli_alter_topic_configs(cli, a, r.topic, kvs, nkvs, &set, &del);
    else
        code = alter_broker_configs(cli, a, &r, kvs, nkvs, &set, &del);
    if (code == SF_CLI_EXIT_OK && cli->json)
        sf_cli_json_print(json_pack("{s:s, s:o, s:o}", r.topic != NULL ? "topic" : "broker",
                                    r.topic != NULL ? r.topic : r.broker, "set", set, "deleted",
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
