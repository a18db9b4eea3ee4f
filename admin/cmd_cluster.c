/* streamflow broker list|api-versions, streamflow cluster status|health. */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
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

/* ------------------------------------------------------------------------------------------
 * cluster health
 * ------------------------------------------------------------------------------------------ */

/* Exit codes of cluster health beyond the common ones. */
#define HEALTH_EXIT_CRITICAL 1 /* a check failed: the cluster loses availability or data */
#define HEALTH_EXIT_DEGRADED 4 /* only warnings: redundancy or consumers behind */

static void cluster_health_help(void) {
    fputs("Usage: streamflow cluster health [OPTIONS]\n"
          "\n"
          "Check the cluster for scripts and service managers. Critical: no controller, fewer\n"
          "live brokers than --brokers, partitions without a leader, partitions whose ISR is\n"
          "below min.insync.replicas (acks=all producers fail). Warnings: under-replicated\n"
          "partitions, consumer groups lagging more than --max-lag records.\n"
          "\n"
          "Exit status: 0 healthy, 1 a critical check failed, 4 warnings only (1 with\n"
          "--strict), 3 no broker answered, 2 bad usage.\n"
          "\n"
          "      --brokers N      the number of brokers the cluster should have\n"
          "      --max-lag N      warn about groups more than N records behind (default: no\n"
          "                       lag check)\n"
          "      --strict         warnings fail too (exit 1)\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

typedef struct health {
    json_t *checks; /* [{name, status: OK|WARNING|CRITICAL, detail}] */
    int critical, warnings;
} health_t;

static void health_check(health_t *h, const char *name, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record one check: @level 0 OK, 1 WARNING, 2 CRITICAL. */
static void health_check(health_t *h, const char *name, int level, const char *fmt, ...) {
    static const char *const names[] = {"OK", "WARNING", "CRITICAL"};
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    h->critical += level == 2;
    h->warnings += level == 1;
    json_array_append_new(h->checks, json_pack("{s:s, s:s, s:s}", "name", name, "status",
                                               names[level], "detail", detail));
}

/* min.insync.replicas of @topic, or 1 when it cannot be read. */
static long topic_min_isr(sf_admin_t *a, const char *topic, int timeout_ms) {
    sf_config_entry_t *e = NULL;
    size_t n = 0, i;
    long v = 1;
    if (sf_admin_describe_configs(a, topic, 0, timeout_ms, &e, &n) == 0)
        for (i = 0; i < n; i++)
            if (!strcmp(e[i].name, "min.insync.replicas") && e[i].value)
                v = strtol(e[i].value, NULL, 10);
    sf_config_entries_destroy(e, n);
    return v;
}

/* The partition checks: leaders, the ISR against replicas and min.insync.replicas. */
static void health_partitions(health_t *h, sf_admin_t *a, const sf_cluster_info_t *info,
                              int timeout_ms) {
    size_t i, j, offline = 0, under = 0, below = 0;
    char first[3][300] = {"", "", ""};
    for (i = 0; i < info->topic_count; i++) {
        const sf_topic_info_t *t = &info->topics[i];
        long min_isr = 0;
        for (j = 0; j < t->partition_count; j++) {
            const sf_partition_info_t *p = &t->partitions[j];
            if (p->leader < 0 && !offline++)
                snprintf(first[0], sizeof(first[0]), " (first: %s-%d)", t->name, (int)p->id);
            if (p->isr_count >= p->replica_count)
                continue;
            if (!under++)
                snprintf(first[1], sizeof(first[1]), " (first: %s-%d)", t->name, (int)p->id);
            if (!min_isr)
                min_isr = topic_min_isr(a, t->name, timeout_ms);
            if ((long)p->isr_count < min_isr && !below++)
                snprintf(first[2], sizeof(first[2]), " (first: %s-%d)", t->name, (int)p->id);
        }
    }
    health_check(h, "offline_partitions", offline ? 2 : 0, "%zu partitions without a leader%s",
                 offline, first[0]);
    health_check(h, "min_insync_replicas", below ? 2 : 0,
                 "%zu partitions with fewer in-sync replicas than min.insync.replicas%s", below,
                 first[2]);
    health_check(h, "under_replicated_partitions", under ? 1 : 0,
                 "%zu under-replicated partitions%s", under, first[1]);
}

/* Groups more than @max_lag records behind. */
static void health_lag(health_t *h, sf_admin_t *a, long long max_lag, int timeout_ms) {
    sf_group_listing_t *groups = NULL;
    size_t n = 0, i, k, nlag, behind = 0;
    char worst[300] = "";
    long long worst_lag = -1;
    int rc = sf_admin_list_groups(a, timeout_ms, &groups, &n);
    for (i = 0; i < n; i++) {
        sf_group_lag_t *lag = NULL;
        long long total = 0;
        if (sf_admin_group_lag(a, groups[i].group_id, timeout_ms, &lag, &nlag) != 0)
            continue;
        for (k = 0; k < nlag; k++)
            total += lag[k].lag > 0 ? lag[k].lag : 0;
        sf_group_lag_destroy(lag);
        if (total > max_lag)
            behind++;
        if (total > worst_lag) {
            worst_lag = total;
            snprintf(worst, sizeof(worst), "; most behind: %s, %lld records", groups[i].group_id,
                     total);
        }
    }
    sf_group_listings_destroy(groups, n);
    if (rc != 0 && !n)
        health_check(h, "consumer_lag", 1, "the groups could not be listed: %s",
                     sf_error_str(rc));
    else
        health_check(h, "consumer_lag", behind ? 1 : 0,
                     "%zu of %zu groups more than %lld records behind%s", behind, n, max_lag,
                     worst);
}

static int cluster_health(sf_cli_t *cli, int argc, char **argv) {
    enum { OPT_BROKERS = 0x200, OPT_MAX_LAG, OPT_STRICT };
    static const struct option longopts[] = {SF_CLI_LONGOPTS,
                                             {"brokers", required_argument, NULL, OPT_BROKERS},
                                             {"max-lag", required_argument, NULL, OPT_MAX_LAG},
                                             {"strict", no_argument, NULL, OPT_STRICT},
                                             {NULL, 0, NULL, 0}};
    long long want_brokers = 0, max_lag = -1;
    sf_cluster_info_t *info = NULL;
    health_t h = {json_array(), 0, 0};
    int opt, strict = 0, code, rc;
    size_t i;
    sf_admin_t *a;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h': cluster_health_help(); json_decref(h.checks); return SF_CLI_EXIT_OK;
        case OPT_BROKERS:
            if (sf_cli_parse_int(cli, "--brokers", optarg, 1, 100000, &want_brokers) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_MAX_LAG:
            if (sf_cli_parse_int(cli, "--max-lag", optarg, 0, INT64_MAX, &max_lag) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_STRICT: strict = 1; break;
        default: return SF_CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        sf_cli_error(cli, "unexpected argument '%s'; see '%s --help'", argv[optind], cli->prog);
        return SF_CLI_EXIT_USAGE;
    }
    if (!(a = sf_cli_admin(cli)))
        return SF_CLI_EXIT_USAGE;
    if ((rc = sf_admin_describe_cluster(a, NULL, 0, cli->timeout_ms, &info)) != 0) {
        sf_admin_destroy(a);
        json_decref(h.checks);
        return sf_cli_fail(cli, "reading the cluster state", rc);
    }
    health_check(&h, "controller", info->controller_id < 0 ? 2 : 0, info->controller_id < 0
                 ? "no controller" : "broker %d", (int)info->controller_id);
    if (want_brokers)
        health_check(&h, "brokers", (long long)info->broker_count < want_brokers ? 2 : 0,
                     "%zu live of the %lld expected", info->broker_count, want_brokers);
    else
        health_check(&h, "brokers", 0, "%zu live", info->broker_count);
    health_partitions(&h, a, info, cli->timeout_ms);
    if (max_lag >= 0)
        health_lag(&h, a, max_lag, cli->timeout_ms);
    code = h.critical || (strict && h.warnings) ? HEALTH_EXIT_CRITICAL
           : h.warnings                         ? HEALTH_EXIT_DEGRADED
                                                : SF_CLI_EXIT_OK;
    if (cli->json) {
        sf_cli_json_print(json_pack("{s:s, s:o}", "status", h.critical ? "CRITICAL"
                                                            : h.warnings ? "WARNING" : "OK",
                                    "checks", json_incref(h.checks)));
    } else {
        for (i = 0; i < json_array_size(h.checks); i++) {
            json_t *c = json_array_get(h.checks, i);
            printf("%-8s %-28s %s\n", json_string_value(json_object_get(c, "status")),
                   json_string_value(json_object_get(c, "name")),
                   json_string_value(json_object_get(c, "detail")));
        }
    }
    json_decref(h.checks);
    sf_cluster_info_destroy(info);
    sf_admin_destroy(a);
    return code;
}

int sf_cmd_cluster(sf_cli_t *cli, int argc, char **argv) {
    if (argc >= 1 && strcmp(argv[0], "status") == 0)
        return cluster_status(cli, argc, argv);
    if (argc >= 1 && strcmp(argv[0], "health") == 0)
        return cluster_health(cli, argc, argv);
    if (argc >= 1 && strcmp(argv[0], "rebalance") == 0)
        return sf_cmd_cluster_rebalance(cli, argc, argv);
    sf_cli_error(cli, "unknown sub-command 'cluster %s'; see 'streamflow help cluster'",
                 argc >= 1 ? argv[0] : "");
    return SF_CLI_EXIT_USAGE;
}
