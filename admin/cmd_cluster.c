/* streamflow broker list|api-versions, streamflow cluster status. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"

/* Parse the options of a sub-command that takes only the common ones and no argument.
 * Returns -1 to go on, else the exit code. */
static int plain_options(sf_cli_t *cli, int argc, char **argv, void (*help)(void)) {
    static const struct option longopts[] = {SF_CLI_LONGOPTS, {NULL, 0, NULL, 0}};
    int opt;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        if (opt == 'h') {
            help();
            return SF_CLI_EXIT_OK;
        }
        return SF_CLI_EXIT_USAGE;
    }
    if (optind < argc) {
        sf_cli_error(cli, "unexpected argument '%s'; see '%s --help'", argv[optind], cli->prog);
        return SF_CLI_EXIT_USAGE;
    }
    return -1;
}

/* The cluster's metadata (every topic). Returns 0 or the exit code after printing why. */
static int cluster_fetch(sf_cli_t *cli, const char *what, sf_cluster_info_t **info) {
    sf_admin_t *a;
    int rc;

    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = sf_admin_describe_cluster(a, NULL, 0, cli->timeout_ms, info);
    sf_admin_destroy(a);
    if (rc != 0)
        return sf_cli_fail(cli, what, rc);
    return 0;
}

static const sf_broker_info_t *find_broker(const sf_cluster_info_t *info, int32_t id) {
    size_t i;

    for (i = 0; i < info->broker_count; i++)
        if (info->brokers[i].id == id)
            return &info->brokers[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * broker list
 * ------------------------------------------------------------------------------------------ */

static void broker_list_help(void) {
    fputs("Usage: streamflow broker list [OPTIONS]\n"
          "\n"
          "List the live brokers: id, advertised host and port, rack, and which one is the\n"
          "controller.\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int broker_list(sf_cli_t *cli, int argc, char **argv) {
    static const char *const headers[] = {"ID", "HOST", "PORT", "RACK", "CONTROLLER"};
    sf_cluster_info_t *info = NULL;
    size_t i;
    int code;

    if ((code = plain_options(cli, argc, argv, broker_list_help)) >= 0)
        return code;
    if ((code = cluster_fetch(cli, "listing brokers", &info)) != 0)
        return code;
    if (cli->json) {
        json_t *arr = json_array();

        for (i = 0; i < info->broker_count; i++) {
            const sf_broker_info_t *b = &info->brokers[i];

            json_array_append_new(
                arr, json_pack("{s:i, s:s, s:i, s:o, s:b}", "id", (int)b->id, "host", b->host,
                               "port", b->port, "rack",
                               b->rack ? json_string(b->rack) : json_null(), "controller",
                               b->id == info->controller_id));
        }
        sf_cli_json_print(json_pack("{s:i, s:o}", "controller_id", (int)info->controller_id,
                                    "brokers", arr));
    } else {
        sf_cli_table_t *tab = sf_cli_table_new(5, headers);

        for (i = 0; i < info->broker_count; i++) {
            const sf_broker_info_t *b = &info->brokers[i];
            char id[16], port[16];
            const char *cells[5];

            snprintf(id, sizeof id, "%d", (int)b->id);
            snprintf(port, sizeof port, "%d", b->port);
            cells[0] = id;
            cells[1] = b->host;
            cells[2] = port;
            cells[3] = b->rack;
            cells[4] = b->id == info->controller_id ? "yes" : "no";
            sf_cli_table_add(tab, cells);
        }
        sf_cli_table_print(tab, stdout);
        sf_cli_table_free(tab);
    }
    sf_cluster_info_destroy(info);
    return SF_CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * broker api-versions
 * ------------------------------------------------------------------------------------------ */

static void broker_apis_help(void) {
    fputs("Usage: streamflow broker api-versions [--broker ID] [OPTIONS]\n"
          "\n"
          "List the Kafka APIs a broker serves (its ApiVersions answer): name, key and the range\n"
          "of versions it accepts.\n"
          "\n"
          "Options:\n"
          "      --broker ID              ask broker ID (default: any broker)\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static void broker_apis_print(const sf_cli_t *cli, const sf_api_version_t *apis, size_t n) {
    static const char *const headers[] = {"API", "KEY", "MIN", "MAX"};
    sf_cli_table_t *tab;
    size_t i;

    if (cli->json) {
        json_t *arr = json_array();

        for (i = 0; i < n; i++)
            json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:i}", "name", apis[i].name,
                                                 "key", apis[i].api_key, "min",
                                                 apis[i].min_version, "max",
                                                 apis[i].max_version));
        sf_cli_json_print(json_pack("{s:o}", "apis", arr));
        return;
    }
    tab = sf_cli_table_new(4, headers);
    for (i = 0; i < n; i++) {
        char key[16], lo[16], hi[16];
        const char *cells[4];

        snprintf(key, sizeof key, "%d", apis[i].api_key);
        snprintf(lo, sizeof lo, "%d", apis[i].min_version);
        snprintf(hi, sizeof hi, "%d", apis[i].max_version);
        cells[0] = apis[i].name;
        cells[1] = key;
        cells[2] = lo;
        cells[3] = hi;
        sf_cli_table_add(tab, cells);
    }
    sf_cli_table_print(tab, stdout);
    sf_cli_table_free(tab);
}

static int broker_apis(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {
        SF_CLI_LONGOPTS, {"broker", required_argument, NULL, 0x200}, {NULL, 0, NULL, 0}};
    sf_api_version_t *apis = NULL;
    long long broker = -1;
    size_t n = 0;
    sf_admin_t *a;
    char what[64];
    int opt, rc;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        if (opt == 'h') {
            broker_apis_help();
            return SF_CLI_EXIT_OK;
        }
        if (opt != 0x200 || sf_cli_parse_int(cli, "--broker", optarg, 0, INT32_MAX, &broker) < 0)
            return SF_CLI_EXIT_USAGE;
    }
    if (optind < argc) {
        sf_cli_error(cli, "unexpected argument '%s'; see '%s --help'", argv[optind], cli->prog);
        return SF_CLI_EXIT_USAGE;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = sf_admin_api_versions(a, (int32_t)broker, cli->timeout_ms, &apis, &n);
    sf_admin_destroy(a);
    if (rc == SF_ERROR_NOTFOUND) {
        sf_cli_error(cli, "there is no broker %lld; see 'streamflow broker list'", broker);
        return SF_CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        snprintf(what, sizeof what, "asking broker %lld", broker);
        return sf_cli_fail(cli, broker < 0 ? "asking a broker" : what, rc);
    }
    broker_apis_print(cli, apis, n);
    sf_api_versions_destroy(apis);
    return SF_CLI_EXIT_OK;
}

int sf_cmd_broker(sf_cli_t *cli, int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "list") == 0)
        return broker_list(cli, argc, argv);
    if (argc >= 1 && strcmp(argv[0], "api-versions") == 0)
        return broker_apis(cli, argc, argv);
    sf_cli_error(cli, "unknown sub-command 'broker %s'; see 'streamflow help broker'",
                 argc >= 1 ? argv[0] : "");
    return SF_CLI_EXIT_USAGE;
}

/* ------------------------------------------------------------------------------------------
 * cluster status
 * ------------------------------------------------------------------------------------------ */

static void cluster_status_help(void) {
    fputs("Usage: streamflow cluster status [OPTIONS]\n"
          "\n"
          "Show the cluster id, the controller, the live brokers, the number of topics and\n"
          "partitions, and the partitions that need attention: those without a leader and\n"
          "those with fewer in-sync replicas than replicas (under-replicated).\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

/* At most this many problem partitions are listed in the table output. */
#define STATUS_LIST_MAX 20

/* Print the {topic, partition} entries of @arr as "  LABEL: TOPIC-PARTITION" lines while
 * fewer than STATUS_LIST_MAX are listed (counted in *@listed). */
static void status_list(const char *label, json_t *arr, size_t *listed) {
    size_t i;

    for (i = 0; i < json_array_size(arr) && *listed < STATUS_LIST_MAX; i++, (*listed)++) {
        json_t *e = json_array_get(arr, i);

        printf("  %s: %s-%d\n", label, json_string_value(json_object_get(e, "topic")),
               (int)json_integer_value(json_object_get(e, "partition")));
    }
}

static int cluster_status(sf_cli_t *cli, int argc, char **argv) {
    sf_cluster_info_t *info = NULL;
    size_t i, j, partitions = 0, offline = 0, under = 0, listed;
    const sf_broker_info_t *ctrl;
    json_t *joffline, *junder, *jbrokers;
    int code;

    if ((code = plain_options(cli, argc, argv, cluster_status_help)) >= 0)
        return code;
    if ((code = cluster_fetch(cli, "reading the cluster state", &info)) != 0)
        return code;
    joffline = json_array();
    junder = json_array();
    for (i = 0; i < info->topic_count; i++) {
        const sf_topic_info_t *t = &info->topics[i];

        for (j = 0; j < t->partition_count; j++) {
            const sf_partition_info_t *p = &t->partitions[j];

            partitions++;
            if (p->leader < 0) {
                offline++;
                json_array_append_new(joffline, json_pack("{s:s, s:i}", "topic", t->name,
                                                          "partition", (int)p->id));
            }
            if (p->isr_count < p->replica_count) {
                under++;
                json_array_append_new(junder, json_pack("{s:s, s:i}", "topic", t->name,
                                                        "partition", (int)p->id));
            }
        }
    }
    ctrl = find_broker(info, info->controller_id);
    if (cli->json) {
        jbrokers = json_array();
        for (i = 0; i < info->broker_count; i++)
            json_array_append_new(jbrokers, json_integer(info->brokers[i].id));
        sf_cli_json_print(json_pack(
            "{s:o, s:i, s:I, s:o, s:I, s:I, s:I, s:I, s:o, s:o}", "cluster_id",
            info->cluster_id ? json_string(info->cluster_id) : json_null(), "controller_id",
            (int)info->controller_id, "broker_count", (json_int_t)info->broker_count,
            "brokers", jbrokers, "topic_count", (json_int_t)info->topic_count,
            "partition_count", (json_int_t)partitions, "offline_partition_count",
            (json_int_t)offline, "under_replicated_partition_count", (json_int_t)under,
            "offline_partitions", joffline, "under_replicated_partitions", junder));
    } else {
        char ids[512];
        int32_t *idv = calloc(info->broker_count + 1, sizeof *idv);

        for (i = 0; idv != NULL && i < info->broker_count; i++)
            idv[i] = info->brokers[i].id;
        printf("Cluster id:                   %s\n", info->cluster_id ? info->cluster_id : "-");
        if (ctrl != NULL)
            printf("Controller:                   %d (%s:%d)\n", (int)ctrl->id, ctrl->host,
                   ctrl->port);
        else if (info->controller_id >= 0)
            printf("Controller:                   %d\n", (int)info->controller_id);
        else
            printf("Controller:                   none\n");
        printf("Brokers:                      %zu (%s)\n", info->broker_count,
               idv ? sf_cli_join_ids(idv, info->broker_count, ids, sizeof ids) : "?");
        printf("Topics:                       %zu\n", info->topic_count);
        printf("Partitions:                   %zu\n", partitions);
        printf("Partitions without a leader:  %zu\n", offline);
        printf("Under-replicated partitions:  %zu\n", under);
        free(idv);
        listed = 0;
        status_list("no leader", joffline, &listed);
        status_list("under-replicated", junder, &listed);
        if (offline + under > listed)
            printf("  ... %zu more (see 'streamflow topic describe --unavailable-partitions' "
                   "and '--under-replicated-partitions')\n",
                   offline + under - listed);
        json_decref(joffline);
        json_decref(junder);
    }
    sf_cluster_info_destroy(info);
    return SF_CLI_EXIT_OK;
}

int sf_cmd_cluster(sf_cli_t *cli, int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "status") == 0)
        return cluster_status(cli, argc, argv);
    sf_cli_error(cli, "unknown sub-command 'cluster %s'; see 'streamflow help cluster'",
                 argc >= 1 ? argv[0] : "");
    return SF_CLI_EXIT_USAGE;
}
