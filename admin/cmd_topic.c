/* streamflow topic create|list|describe|delete|alter (after kafka-topics.sh) and
 * describe-producers (after kafka-transactions.sh describe-producers). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"

/* Kafka error codes the topic commands treat specially. */
#define KERR_UNKNOWN_TOPIC_OR_PARTITION 3
#define KERR_TOPIC_ALREADY_EXISTS 36
#define KERR_INVALID_PARTITIONS 37
#define KERR_INVALID_REPLICATION_FACTOR 38
#define KERR_INVALID_CONFIG 40

enum {
    OPT_PARTITIONS = 0x200,
    OPT_REPLICATION,
    OPT_CONFIG,
    OPT_DELETE_CONFIG,
    OPT_IF_NOT_EXISTS,
    OPT_IF_EXISTS,
    OPT_UNDER_REPLICATED,
    OPT_UNAVAILABLE,
    OPT_EXCLUDE_INTERNAL,
    OPT_PARTITION
};

/* The replication factor of a topic: the largest replica count of its partitions. */
static size_t topic_replication(const sf_topic_info_t *t) {
    size_t i, rf = 0;

    for (i = 0; i < t->partition_count; i++)
        if (t->partitions[i].replica_count > rf)
            rf = t->partitions[i].replica_count;
    return rf;
}

/* The one topic NAME operand left after the options (argv[optind]) of "topic @verb", or NULL
 * after printing what is wrong; @usage is the rest of the command's synopsis. */
static const char *topic_name_arg(const sf_cli_t *cli, int argc, char **argv, const char *verb,
                                  const char *usage) {
    if (optind >= argc) {
        sf_cli_error(cli, "missing the topic name; usage: streamflow topic %s NAME %s", verb,
                     usage);
        return NULL;
    }
    if (argc - optind > 1) {
        sf_cli_error(cli, "unexpected argument '%s': %s one topic at a time", argv[optind + 1],
                     verb);
        return NULL;
    }
    return argv[optind];
}

/* ------------------------------------------------------------------------------------------
 * create
 * ------------------------------------------------------------------------------------------ */

static void create_help(void) {
    fputs("Usage: streamflow topic create NAME [OPTIONS]\n"
          "\n"
          "Create a topic.\n"
          "\n"
          "Options:\n"
          "      --partitions N           number of partitions (default: the broker's "
          "num.partitions)\n"
          "      --replication-factor N   replicas of each partition (default: the broker's\n"
          "                               default.replication.factor)\n"
          "      --config KEY=VALUE       a topic config override, e.g. retention.ms=86400000\n"
          "                               (repeatable)\n"
          "      --if-not-exists          succeed when the topic already exists\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int topic_create(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = SF_CLI_OPTS(
        {"partitions", required_argument, NULL, OPT_PARTITIONS},
        {"replication-factor", required_argument, NULL, OPT_REPLICATION},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"if-not-exists", no_argument, NULL, OPT_IF_NOT_EXISTS});
    sf_config_kv_t *configs;
    size_t nconfigs = 0;
    long long partitions = -1, rf = -1, v;
    int if_not_exists = 0, opt, rc, code = SF_CLI_EXIT_USAGE;
    char errstr[512], what[300];
    const char *name;
    sf_admin_t *a = NULL;

    if ((configs = sf_cli_kvs_new(cli, argc)) == NULL)
        return SF_CLI_EXIT_FAIL;
    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            create_help();
            code = SF_CLI_EXIT_OK;
            goto out;
        case OPT_PARTITIONS:
            if (sf_cli_parse_int(cli, "--partitions", optarg, 1, INT32_MAX, &v) < 0)
                goto out;
            partitions = v;
            break;
        case OPT_REPLICATION:
            if (sf_cli_parse_int(cli, "--replication-factor", optarg, 1, INT16_MAX, &v) < 0)
                goto out;
            rf = v;
            break;
        case OPT_CONFIG:
            if (sf_cli_parse_kv(cli, "--config", optarg, &configs[nconfigs]) < 0)
                goto out;
            nconfigs++;
            break;
        case OPT_IF_NOT_EXISTS:
            if_not_exists = 1;
            break;
        default:
            goto out;
        }
    }
    name = topic_name_arg(cli, argc, argv, "create",
                          "[--partitions N] [--replication-factor N] [--config KEY=VALUE]");
    if (name == NULL)
        goto out;
    if ((a = sf_cli_admin(cli)) == NULL)
        goto out;
    rc = sf_admin_create_topic(a, name, (int32_t)partitions, (int16_t)rf, configs, nconfigs,
                               cli->timeout_ms, errstr, sizeof errstr);
    if (rc == KERR_TOPIC_ALREADY_EXISTS && if_not_exists) {
        if (cli->json)
            sf_cli_json_print(json_pack("{s:s, s:b}", "topic", name, "created", 0));
        else
            printf("Topic %s already exists.\n", name);
        code = SF_CLI_EXIT_OK;
        goto out;
    }
    if (rc == KERR_TOPIC_ALREADY_EXISTS) {
        sf_cli_error(cli, "topic '%s' already exists (TOPIC_ALREADY_EXISTS); use "
                          "--if-not-exists to ignore", name);
        code = SF_CLI_EXIT_FAIL;
        goto out;
    }
    if (rc != 0) {
        const char *hint = NULL;

        if (rc == KERR_INVALID_REPLICATION_FACTOR)
            hint = "--replication-factor cannot exceed the number of brokers (see 'streamflow "
                   "broker list')";
        else if (rc == KERR_INVALID_PARTITIONS)
            hint = "use --partitions N with N >= 1";
        else if (rc == KERR_INVALID_CONFIG)
            hint = "check the --config names and values (topic configs use Kafka's names, "
                   "e.g. retention.ms)";
        snprintf(what, sizeof what, "creating topic '%s'", name);
        code = sf_cli_fail_msg(cli, what, rc, errstr, hint);
        goto out;
    }
    if (cli->json)
        sf_cli_json_print(json_pack("{s:s, s:b}", "topic", name, "created", 1));
    else
        printf("Created topic %s.\n", name);
    code = SF_CLI_EXIT_OK;
out:
    sf_admin_destroy(a);
    free(configs);
    return code;
}

/* ------------------------------------------------------------------------------------------
 * list
 * ------------------------------------------------------------------------------------------ */

static void list_help(void) {
    fputs("Usage: streamflow topic list [OPTIONS]\n"
          "\n"
          "List the topics with their partition counts and replication factors.\n"
          "\n"
          "Options:\n"
          "      --exclude-internal       leave out internal topics\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int topic_list(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] =
        SF_CLI_OPTS({"exclude-internal", no_argument, NULL, OPT_EXCLUDE_INTERNAL});
    static const char *const headers[] = {"TOPIC", "PARTITIONS", "REPLICATION-FACTOR"};
    int opt, rc, exclude_internal = 0;
    sf_cluster_info_t *info = NULL;
    sf_admin_t *a;
    size_t i;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            list_help();
            return SF_CLI_EXIT_OK;
        case OPT_EXCLUDE_INTERNAL:
            exclude_internal = 1;
            break;
        default:
            return SF_CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        sf_cli_error(cli, "unexpected argument '%s'; to show some topics use 'streamflow topic "
                          "describe NAME...'", argv[optind]);
        return SF_CLI_EXIT_USAGE;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = sf_admin_describe_cluster(a, NULL, 0, cli->timeout_ms, &info);
    sf_admin_destroy(a);
    if (rc != 0)
        return sf_cli_fail(cli, "listing topics", rc);
    if (cli->json) {
        json_t *arr = json_array();

        for (i = 0; i < info->topic_count; i++) {
            const sf_topic_info_t *t = &info->topics[i];
            json_t *o;

            if (exclude_internal && t->internal)
                continue;
            o = json_pack("{s:s, s:I, s:I, s:b}", "name", t->name, "partitions",
                          (json_int_t)t->partition_count, "replication_factor",
                          (json_int_t)topic_replication(t), "internal", t->internal);
            if (t->err != 0)
                json_object_set_new(o, "error", json_string(sf_error_name(t->err)));
            json_array_append_new(arr, o);
        }
        sf_cli_json_print(json_pack("{s:o}", "topics", arr));
    } else {
        sf_cli_table_t *tab = sf_cli_table_new(3, headers);

        for (i = 0; i < info->topic_count; i++) {
            const sf_topic_info_t *t = &info->topics[i];
            char np[24], rf[24];
            const char *cells[3];

            if (exclude_internal && t->internal)
                continue;
            snprintf(np, sizeof np, "%zu", t->partition_count);
            snprintf(rf, sizeof rf, "%zu", topic_replication(t));
            cells[0] = t->name;
            cells[1] = t->err ? sf_error_name(t->err) : np;
            cells[2] = t->err ? NULL : rf;
            sf_cli_table_add(tab, cells);
        }
        sf_cli_table_print(tab, stdout);
        sf_cli_table_free(tab);
    }
    sf_cluster_info_destroy(info);
    return SF_CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * describe
 * ------------------------------------------------------------------------------------------ */

static void describe_help(void) {
    fputs("Usage: streamflow topic describe [NAME...] [OPTIONS]\n"
          "\n"
          "Show each topic's partitions (leader, replicas, in-sync replicas) and its config\n"
          "overrides. Without a NAME every topic is described.\n"
          "\n"
          "Options:\n"
          "      --under-replicated-partitions  only partitions with fewer in-sync replicas "
          "than\n"
          "                                     replicas\n"
          "      --unavailable-partitions       only partitions without a leader\n"
          "      --exclude-internal             leave out internal topics\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int partition_shown(const sf_partition_info_t *p, int under, int unavail) {
    if (!under && !unavail)
        return 1;
    if (under && p->isr_count < p->replica_count)
        return 1;
    if (unavail && p->leader < 0)
        return 1;
    return 0;
}

/* The topic's config overrides (dynamic topic configs) as "k=v,k=v" or as a JSON object. */
static int topic_overrides(sf_cli_t *cli, sf_admin_t *a, const char *topic, char **text,
                           json_t **obj) {
    sf_config_entry_t *entries = NULL;
    size_t n = 0, i, len = 0;
    char *s;
    int rc;

    *text = NULL;
    *obj = json_object();
    rc = sf_admin_describe_configs(a, topic, 0, cli->timeout_ms, &entries, &n);
    if (rc != 0)
        return rc;
    for (i = 0; i < n; i++)
        if (entries[i].source == 1 && !entries[i].is_default)
            len += strlen(entries[i].name) + (entries[i].value ? strlen(entries[i].value) : 0) +
                   2;
    s = calloc(1, len + 1);
    if (s == NULL) {
        sf_config_entries_destroy(entries, n);
        return SF_ERROR_NOMEM;
    }
    for (i = 0; i < n; i++) {
        const sf_config_entry_t *e = &entries[i];

        if (e->source != 1 || e->is_default)
            continue;
        if (s[0] != '\0')
            strcat(s, ",");
        strcat(s, e->name);
        strcat(s, "=");
        if (e->value != NULL)
            strcat(s, e->value);
        json_object_set_new(*obj, e->name, e->value ? json_string(e->value) : json_null());
    }
    sf_config_entries_destroy(entries, n);
    *text = s;
    return 0;
}

static int topic_describe(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] =
        SF_CLI_OPTS({"under-replicated-partitions", no_argument, NULL, OPT_UNDER_REPLICATED},
                   {"unavailable-partitions", no_argument, NULL, OPT_UNAVAILABLE},
                   {"exclude-internal", no_argument, NULL, OPT_EXCLUDE_INTERNAL});
    static const char *const headers[] = {"PARTITION", "LEADER", "REPLICAS", "ISR"};
    int opt, rc, under = 0, unavail = 0, exclude_internal = 0, code = SF_CLI_EXIT_OK;
    int first = 1;
    sf_cluster_info_t *info = NULL;
    json_t *jtopics = NULL;
    sf_admin_t *a;
    size_t i, j;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            describe_help();
            return SF_CLI_EXIT_OK;
        case OPT_UNDER_REPLICATED:
            under = 1;
            break;
        case OPT_UNAVAILABLE:
            unavail = 1;
            break;
        case OPT_EXCLUDE_INTERNAL:
            exclude_internal = 1;
            break;
        default:
            return SF_CLI_EXIT_USAGE;
        }
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = sf_admin_describe_cluster(a, (const char *const *)(argv + optind),
                                   (size_t)(argc - optind), cli->timeout_ms, &info);
    if (rc != 0) {
        sf_admin_destroy(a);
        return sf_cli_fail(cli, "describing topics", rc);
    }
    if (cli->json)
        jtopics = json_array();
    for (i = 0; i < info->topic_count; i++) {
        const sf_topic_info_t *t = &info->topics[i];
        char *overrides = NULL;
        json_t *jconf = NULL, *jparts;
        char what[300];

        if (t->err != 0) {
            if (t->err == KERR_UNKNOWN_TOPIC_OR_PARTITION)
                sf_cli_topic_missing(cli, t->name, "see 'streamflow topic list'");
            else {
                snprintf(what, sizeof what, "describing topic '%s'", t->name);
                sf_cli_fail(cli, what, t->err);
            }
            code = SF_CLI_EXIT_FAIL;
            continue;
        }
        if (exclude_internal && t->internal)
            continue;
        rc = topic_overrides(cli, a, t->name, &overrides, &jconf);
        if (rc != 0) {
            snprintf(what, sizeof what, "reading the configs of topic '%s'", t->name);
            code = sf_cli_fail(cli, what, rc);
            json_decref(jconf);
            if (code == SF_CLI_EXIT_UNREACHABLE)
                break;
            continue;
        }
        if (cli->json) {
            json_t *jt;

            jparts = json_array();
            for (j = 0; j < t->partition_count; j++) {
                const sf_partition_info_t *p = &t->partitions[j];
                json_t *jp;

                if (!partition_shown(p, under, unavail))
                    continue;
                jp = json_pack("{s:i, s:i, s:i, s:o, s:o}", "partition", (int)p->id, "leader",
                               (int)p->leader, "leader_epoch", (int)p->leader_epoch, "replicas",
                               sf_cli_json_ids(p->replicas, p->replica_count), "isr",
                               sf_cli_json_ids(p->isr, p->isr_count));
                if (p->err != 0)
                    json_object_set_new(jp, "error", json_string(sf_error_name(p->err)));
                json_array_append_new(jparts, jp);
            }
            jt = json_pack("{s:s, s:b, s:I, s:I, s:o, s:o}", "name", t->name, "internal",
                           t->internal, "partition_count", (json_int_t)t->partition_count,
                           "replication_factor", (json_int_t)topic_replication(t), "configs",
                           jconf, "partitions", jparts);
            json_array_append_new(jtopics, jt);
        } else {
            sf_cli_table_t *tab = sf_cli_table_new(4, headers);

            json_decref(jconf);
            if (!first)
                fputc('\n', stdout);
            first = 0;
            printf("Topic: %s  Partitions: %zu  Replication factor: %zu  Configs: %s%s\n",
                   t->name, t->partition_count, topic_replication(t),
                   overrides[0] ? overrides : "-", t->internal ? "  (internal)" : "");
            for (j = 0; j < t->partition_count; j++) {
                const sf_partition_info_t *p = &t->partitions[j];
                char id[16], leader[32], reps[256], isr[256];
                const char *cells[4];

                if (!partition_shown(p, under, unavail))
                    continue;
                snprintf(id, sizeof id, "%d", (int)p->id);
                if (p->leader >= 0)
                    snprintf(leader, sizeof leader, "%d", (int)p->leader);
                else
                    snprintf(leader, sizeof leader, "none");
                cells[0] = id;
                cells[1] = leader;
                cells[2] = sf_cli_join_ids(p->replicas, p->replica_count, reps, sizeof reps);
                cells[3] = sf_cli_join_ids(p->isr, p->isr_count, isr, sizeof isr);
                sf_cli_table_add(tab, cells);
            }
            sf_cli_table_print(tab, stdout);
            sf_cli_table_free(tab);
        }
        free(overrides);
    }
    sf_admin_destroy(a);
    if (cli->json)
        sf_cli_json_print(json_pack("{s:o}", "topics", jtopics));
    sf_cluster_info_destroy(info);
    return code;
}

/* ------------------------------------------------------------------------------------------
 * delete
 * ------------------------------------------------------------------------------------------ */

static void delete_help(void) {
    fputs("Usage: streamflow topic delete NAME... [OPTIONS]\n"
          "\n"
          "Delete topics and all their records.\n"
          "\n"
          "Options:\n"
          "      --if-exists              succeed when a topic does not exist\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int topic_delete(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] =
        SF_CLI_OPTS({"if-exists", no_argument, NULL, OPT_IF_EXISTS});
    int opt, rc, if_exists = 0, code = SF_CLI_EXIT_OK;
    json_t *jres = NULL;
    char errstr[512], what[300];
    sf_admin_t *a;
    int i;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            delete_help();
            return SF_CLI_EXIT_OK;
        case OPT_IF_EXISTS:
            if_exists = 1;
            break;
        default:
            return SF_CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        sf_cli_error(cli, "missing the topic name; usage: streamflow topic delete NAME... "
                          "[--if-exists]");
        return SF_CLI_EXIT_USAGE;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    if (cli->json)
        jres = json_array();
    for (i = optind; i < argc; i++) {
        const char *name = argv[i];
        int deleted = 1;

        rc = sf_admin_delete_topic(a, name, cli->timeout_ms, errstr, sizeof errstr);
        if (rc == KERR_UNKNOWN_TOPIC_OR_PARTITION && if_exists) {
            deleted = 0;
            if (!cli->json)
                printf("Topic %s does not exist.\n", name);
        } else if (rc == KERR_UNKNOWN_TOPIC_OR_PARTITION) {
            code = sf_cli_topic_missing(cli, name, "use --if-exists to ignore");
            continue;
        } else if (rc != 0) {
            snprintf(what, sizeof what, "deleting topic '%s'", name);
            code = sf_cli_fail_msg(cli, what, rc, errstr, NULL);
            if (code == SF_CLI_EXIT_UNREACHABLE)
                break;
            continue;
        } else if (!cli->json) {
            printf("Deleted topic %s.\n", name);
        }
        if (cli->json)
            json_array_append_new(jres,
                                  json_pack("{s:s, s:b}", "topic", name, "deleted", deleted));
    }
    sf_admin_destroy(a);
    if (cli->json)
        sf_cli_json_print(json_pack("{s:o}", "topics", jres));
    return code;
}

/* ------------------------------------------------------------------------------------------
 * alter
 * ------------------------------------------------------------------------------------------ */

static void alter_help(void) {
    fputs("Usage: streamflow topic alter NAME [OPTIONS]\n"
          "\n"
          "Add partitions to a topic and set or remove its config overrides.\n"
          "\n"
          "Options:\n"
          "      --partitions N           the new total number of partitions (only grows)\n"
          "      --config KEY=VALUE       set a topic config override (repeatable)\n"
          "      --delete-config KEY      remove an override: back to the broker's default\n"
          "                               (repeatable)\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int topic_alter(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] =
        SF_CLI_OPTS({"partitions", required_argument, NULL, OPT_PARTITIONS},
                   {"config", required_argument, NULL, OPT_CONFIG},
                   {"delete-config", required_argument, NULL, OPT_DELETE_CONFIG});
    sf_config_kv_t *kvs;
    size_t nkvs = 0;
    long long partitions = -1, v;
    int opt, rc, code = SF_CLI_EXIT_USAGE;
    char errstr[512], what[300];
    const char *name;
    sf_admin_t *a = NULL;
    json_t *jout = NULL;

    if ((kvs = sf_cli_kvs_new(cli, argc)) == NULL)
        return SF_CLI_EXIT_FAIL;
    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            alter_help();
            code = SF_CLI_EXIT_OK;
            goto out;
        case OPT_PARTITIONS:
            if (sf_cli_parse_int(cli, "--partitions", optarg, 1, INT32_MAX, &v) < 0)
                goto out;
            partitions = v;
            break;
        case OPT_CONFIG:
            if (sf_cli_parse_kv(cli, "--config", optarg, &kvs[nkvs]) < 0)
                goto out;
            nkvs++;
            break;
        case OPT_DELETE_CONFIG:
            if (sf_cli_parse_delete(cli, "--delete-config", optarg, &kvs[nkvs]) < 0)
                goto out;
            nkvs++;
            break;
        default:
            goto out;
        }
    }
    name = topic_name_arg(cli, argc, argv, "alter",
                          "[--partitions N] [--config KEY=VALUE] [--delete-config KEY]");
    if (name == NULL)
        goto out;
    if (partitions < 0 && nkvs == 0) {
        sf_cli_error(cli, "nothing to change: give --partitions, --config or --delete-config");
        goto out;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        goto out;
    if (cli->json)
        jout = json_pack("{s:s}", "topic", name);
    if (partitions > 0) {
        rc = sf_admin_create_partitions(a, name, (int32_t)partitions, cli->timeout_ms, errstr,
                                        sizeof errstr);
        if (rc == KERR_UNKNOWN_TOPIC_OR_PARTITION) {
            code = sf_cli_topic_missing(cli, name, "see 'streamflow topic list'");
            goto out;
        }
        if (rc != 0) {
            snprintf(what, sizeof what, "adding partitions to topic '%s'", name);
            code = sf_cli_fail_msg(cli, what, rc, errstr,
                                   rc == KERR_INVALID_PARTITIONS
                                       ? "--partitions is the new total and must be larger "
                                         "than the current count (see 'streamflow topic "
                                         "describe')"
                                       : NULL);
            goto out;
        }
        if (cli->json)
            json_object_set_new(jout, "partitions", json_integer(partitions));
        else
            printf("Topic %s now has %lld partitions.\n", name, partitions);
    }
    if (nkvs > 0) {
        json_t *set, *del;

        code = sf_cli_alter_topic_configs(cli, a, name, kvs, nkvs, &set, &del);
        if (code != SF_CLI_EXIT_OK)
            goto out;
        if (cli->json) {
            json_object_set_new(jout, "configs_set", set);
            json_object_set_new(jout, "configs_deleted", del);
        }
    }
    if (cli->json) {
        sf_cli_json_print(jout);
        jout = NULL;
    }
    code = SF_CLI_EXIT_OK;
out:
    json_decref(jout);
    sf_admin_destroy(a);
    free(kvs);
    return code;
}

/* ------------------------------------------------------------------------------------------
 * describe-producers
 * ------------------------------------------------------------------------------------------ */

static void producers_help(void) {
    fputs("Usage: streamflow topic describe-producers NAME [OPTIONS]\n"
          "\n"
          "Show the idempotent producers the leaders of the topic's partitions keep state for:\n"
          "producer id, epoch, last sequence number and the time of the last batch.\n"
          "\n"
          "Options:\n"
          "      --partition N            that partition only (default: every partition)\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

/* The partitions to show: @only, else every one of @topic. */
static int producers_partitions(sf_cli_t *cli, sf_admin_t *a, const char *topic, long long only,
                                int32_t **out, size_t *n) {
    sf_cluster_info_t *info = NULL;
    size_t i;
    int rc;
    *n = 0;
    if (only >= 0) {
        if (!(*out = malloc(sizeof(**out))))
            return SF_ERROR_NOMEM;
        (*out)[(*n)++] = (int32_t)only;
        return SF_OK;
    }
    rc = sf_admin_describe_cluster(a, &topic, 1, cli->timeout_ms, &info);
    if (rc == SF_OK && (info->topic_count != 1 || info->topics[0].err))
        rc = info->topic_count == 1 ? info->topics[0].err : KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (rc == SF_OK && !(*out = malloc((info->topics[0].partition_count + 1) * sizeof(**out))))
        rc = SF_ERROR_NOMEM;
    for (i = 0; rc == SF_OK && i < info->topics[0].partition_count; i++)
        (*out)[(*n)++] = info->topics[0].partitions[i].id;
    sf_cluster_info_destroy(info);
    return rc;
}

static void producers_show(const sf_cli_t *cli, int32_t part, const sf_producer_state_t *v,
                           size_t n, json_t *jarr, sf_cli_table_t *tab) {
    size_t i;
    for (i = 0; i < n; i++) {
        char cells[6][24];
        const char *row[6];
        int k;
        if (cli->json) {
            json_array_append_new(
                jarr, json_pack("{s:i, s:I, s:i, s:i, s:I, s:I}", "partition", (int)part,
                                "producer_id", (json_int_t)v[i].producer_id, "epoch",
                                (int)v[i].producer_epoch, "last_sequence",
                                (int)v[i].last_sequence, "last_timestamp",
                                (json_int_t)v[i].last_timestamp, "current_txn_start_offset",
                                (json_int_t)v[i].current_txn_start_offset));
            continue;
        }
        snprintf(cells[0], sizeof cells[0], "%d", (int)part);
        snprintf(cells[1], sizeof cells[1], "%lld", (long long)v[i].producer_id);
        snprintf(cells[2], sizeof cells[2], "%d", (int)v[i].producer_epoch);
        snprintf(cells[3], sizeof cells[3], "%d", (int)v[i].last_sequence);
        snprintf(cells[4], sizeof cells[4], "%lld", (long long)v[i].last_timestamp);
        snprintf(cells[5], sizeof cells[5], "%lld", (long long)v[i].current_txn_start_offset);
        for (k = 0; k < 6; k++)
            row[k] = cells[k];
        sf_cli_table_add(tab, row);
    }
}

static int topic_describe_producers(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] =
        SF_CLI_OPTS({"partition", required_argument, NULL, OPT_PARTITION});
    static const char *const headers[] = {"PARTITION", "PRODUCER-ID", "EPOCH",
                                          "LAST-SEQUENCE", "LAST-TIMESTAMP", "TXN-START-OFFSET"};
    long long only = -1;
    int32_t *parts = NULL;
    size_t nparts = 0, i;
    int opt, rc, code = SF_CLI_EXIT_OK;
    const char *name;
    sf_cli_table_t *tab = NULL;
    json_t *jarr = NULL;
    sf_admin_t *a;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h':
            producers_help();
            return SF_CLI_EXIT_OK;
        case OPT_PARTITION:
            if (sf_cli_parse_int(cli, "--partition", optarg, 0, INT32_MAX, &only) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        default:
            return SF_CLI_EXIT_USAGE;
        }
    }
    if ((name = topic_name_arg(cli, argc, argv, "describe-producers", "[--partition N]")) == NULL)
        return SF_CLI_EXIT_USAGE;
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = producers_partitions(cli, a, name, only, &parts, &nparts);
    if (rc != SF_OK) {
        sf_admin_destroy(a);
        return sf_cli_fail(cli, "describing the topic", rc);
    }
    if (cli->json)
        jarr = json_array();
    else
        tab = sf_cli_table_new(6, headers);
    for (i = 0; i < nparts && code == SF_CLI_EXIT_OK; i++) {
        sf_producer_state_t *v = NULL;
        size_t n = 0;
        char what[320];
        rc = sf_admin_describe_producers(a, name, parts[i], cli->timeout_ms, &v, &n);
        snprintf(what, sizeof what, "describing the producers of %s partition %d", name,
                 (int)parts[i]);
        if (rc != SF_OK)
            code = sf_cli_fail(cli, what, rc);
        else
            producers_show(cli, parts[i], v, n, jarr, tab);
        sf_producer_states_destroy(v);
    }
    if (code == SF_CLI_EXIT_OK && cli->json)
        sf_cli_json_print(json_pack("{s:s, s:O}", "topic", name, "producers", jarr));
    else if (code == SF_CLI_EXIT_OK)
        sf_cli_table_print(tab, stdout);
    json_decref(jarr);
    if (tab)
        sf_cli_table_free(tab);
    free(parts);
    sf_admin_destroy(a);
    return code;
}

/* ------------------------------------------------------------------------------------------ */

int sf_cmd_topic(sf_cli_t *cli, int argc, char **argv) {
    if (argc < 1) {
        sf_cli_error(cli, "missing the sub-command (create, list, describe, delete, alter, "
                          "describe-producers, reassign, elect-leaders)");
        return SF_CLI_EXIT_USAGE;
    }
    if (strcmp(argv[0], "create") == 0)
        return topic_create(cli, argc, argv);
    if (strcmp(argv[0], "list") == 0)
        return topic_list(cli, argc, argv);
    if (strcmp(argv[0], "describe") == 0)
        return topic_describe(cli, argc, argv);
    if (strcmp(argv[0], "delete") == 0)
        return topic_delete(cli, argc, argv);
    if (strcmp(argv[0], "alter") == 0)
        return topic_alter(cli, argc, argv);
    if (strcmp(argv[0], "describe-producers") == 0)
        return topic_describe_producers(cli, argc, argv);
    if (strcmp(argv[0], "reassign") == 0)
        return sf_cmd_topic_reassign(cli, argc, argv);
    if (strcmp(argv[0], "elect-leaders") == 0)
        return sf_cmd_topic_elect(cli, argc, argv);
    sf_cli_error(cli, "unknown sub-command 'topic %s'; see 'streamflow help topic'", argv[0]);
    return SF_CLI_EXIT_USAGE;
}
