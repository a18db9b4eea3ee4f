/* streamflow topic reassign (after kafka-reassign-partitions.sh: plans in its JSON format),
 * streamflow cluster rebalance (an even placement over the live brokers, applied as a
 * reassignment) and streamflow topic elect-leaders (after kafka-leader-election.sh). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cmdutil.h"
#include "rebalance.h"

enum {
    OPT_EXECUTE = 0x200,
    OPT_VERIFY,
    OPT_CANCEL,
    OPT_LIST,
    OPT_GENERATE,
    OPT_FILE,
    OPT_TOPICS,
    OPT_BROKERS,
    OPT_THROTTLE,
    OPT_TOPIC,
    OPT_PARTITION,
    OPT_ALL_TOPICS,
    OPT_ELECTION_TYPE
};

/* Kafka error codes elect-leaders treats specially. */
#define KERR_ELECTION_NOT_NEEDED 84

/* Kafka's replication quota configs (kafka-reassign-partitions.sh --throttle). */
#define LEADER_RATE "leader.replication.throttled.rate"
#define FOLLOWER_RATE "follower.replication.throttled.rate"
#define LEADER_REPLICAS "leader.replication.throttled.replicas"
#define FOLLOWER_REPLICAS "follower.replication.throttled.replicas"

/* A reassignment plan: partitions and their replica lists (topic names and lists owned). */
typedef struct plan {
    sf_reassignment_target_t *v;
    size_t n, cap;
} plan_t;

static void plan_free(plan_t *p) {
    size_t i;
    for (i = 0; i < p->n; i++) {
        free((char *)p->v[i].topic);
        free((int32_t *)p->v[i].replicas);
    }
    free(p->v);
    memset(p, 0, sizeof(*p));
}

static int plan_add(plan_t *p, const char *topic, int32_t partition, const int32_t *ids,
                    size_t n) {
    sf_reassignment_target_t *t;
    int32_t *copy = NULL;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        sf_reassignment_target_t *v = realloc(p->v, cap * sizeof(*v));
        if (!v)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    t = &p->v[p->n];
    memset(t, 0, sizeof(*t));
    if (n) {
        if (!(copy = malloc(n * sizeof(*copy))))
            return -1;
        memcpy(copy, ids, n * sizeof(*copy));
    }
    if (!(t->topic = strdup(topic))) {
        free(copy);
        return -1;
    }
    t->partition = partition;
    t->replicas = copy;
    t->replica_count = n;
    p->n++;
    return 0;
}

/* @p in the format of kafka-reassign-partitions.sh. */
static json_t *plan_json(const plan_t *p) {
    json_t *parts = json_array();
    size_t i, j;
    for (i = 0; i < p->n; i++) {
        json_t *dirs = json_array();
        json_t *reps = sf_cli_json_ids(p->v[i].replicas, p->v[i].replica_count);
        for (j = 0; j < p->v[i].replica_count; j++)
            json_array_append_new(dirs, json_string("any"));
        json_array_append_new(parts, json_pack("{s:s, s:i, s:o, s:o}", "topic", p->v[i].topic,
                                               "partition", (int)p->v[i].partition, "replicas",
                                               reps, "log_dirs", dirs));
    }
    return json_pack("{s:i, s:o}", "version", 1, "partitions", parts);
}

/* Check one entry of a plan file; returns NULL or why it is wrong. */
static const char *plan_entry_check(json_t *e, int32_t *ids, size_t *n) {
    json_t *reps = json_object_get(e, "replicas"), *dirs = json_object_get(e, "log_dirs"), *v;
    size_t i;
    if (!json_is_string(json_object_get(e, "topic")) ||
        !json_is_integer(json_object_get(e, "partition")) ||
        json_integer_value(json_object_get(e, "partition")) < 0 ||
        json_integer_value(json_object_get(e, "partition")) > INT32_MAX)
        return "needs \"topic\" (a string) and \"partition\" (a number)";
    if (!json_is_array(reps) || !json_array_size(reps) || json_array_size(reps) > 256)
        return "needs \"replicas\", a list of 1 to 256 broker ids";
    json_array_foreach(reps, i, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
            return "\"replicas\" holds something that is not a broker id";
        ids[i] = (int32_t)json_integer_value(v);
    }
    *n = json_array_size(reps);
    if (dirs && (!json_is_array(dirs) || json_array_size(dirs) != *n))
        return "\"log_dirs\" must list one directory per replica";
    json_array_foreach(dirs, i, v) {
        if (!json_is_string(v) || strcmp(json_string_value(v), "any"))
            return "\"log_dirs\" other than \"any\" are not supported";
    }
    return NULL;
}

/* Read a plan from @path ("-": standard input). Returns 0 or the exit code after printing. */
static int plan_read(const sf_cli_t *cli, const char *path, plan_t *p) {
    json_error_t jerr;
    json_t *root, *parts, *e;
    int32_t ids[256];
    size_t i, n;
    root = strcmp(path, "-") ? json_load_file(path, 0, &jerr) : json_loadf(stdin, 0, &jerr);
    if (!root) {
        sf_cli_error(cli, "%s: line %d: %s", path, jerr.line, jerr.text);
        return SF_CLI_EXIT_USAGE;
    }
    parts = json_object_get(root, "partitions");
    if (!json_is_array(parts) || !json_array_size(parts)) {
        sf_cli_error(cli, "%s: expected {\"version\":1,\"partitions\":[{\"topic\":...,"
                          "\"partition\":...,\"replicas\":[...]},...]}", path);
        json_decref(root);
        return SF_CLI_EXIT_USAGE;
    }
    json_array_foreach(parts, i, e) {
        const char *why = json_is_object(e) ? plan_entry_check(e, ids, &n) : "not an object";
        if (why) {
            sf_cli_error(cli, "%s: partitions[%zu] %s", path, i, why);
            json_decref(root);
            return SF_CLI_EXIT_USAGE;
        }
        if (plan_add(p, json_string_value(json_object_get(e, "topic")),
                     (int32_t)json_integer_value(json_object_get(e, "partition")), ids, n)) {
            json_decref(root);
            sf_cli_error(cli, "out of memory");
            return SF_CLI_EXIT_FAIL;
        }
    }
    json_decref(root);
    return 0;
}

static const sf_partition_info_t *find_partition(const sf_cluster_info_t *info,
                                                 const char *topic, int32_t partition) {
    size_t i, j;
    for (i = 0; i < info->topic_count; i++)
        if (!strcmp(info->topics[i].name, topic) && !info->topics[i].err)
            for (j = 0; j < info->topics[i].partition_count; j++)
                if (info->topics[i].partitions[j].id == partition)
                    return &info->topics[i].partitions[j];
    return NULL;
}

/* The cluster's metadata (every topic). Returns 0 or the exit code after printing why. */
static int describe(const sf_cli_t *cli, sf_admin_t *a, sf_cluster_info_t **info) {
    int rc = sf_admin_describe_cluster(a, NULL, 0, cli->timeout_ms, info);
    return rc ? sf_cli_fail(cli, "reading the cluster's metadata", rc) : 0;
}

/* Print the partitions of @p whose err is set; returns how many. */
static size_t report_failures(const sf_cli_t *cli, const plan_t *p, json_t *jfailed) {
    size_t i, failed = 0;
    for (i = 0; i < p->n; i++) {
        if (!p->v[i].err)
            continue;
        failed++;
        if (jfailed)
            json_array_append_new(jfailed, json_pack("{s:s, s:i, s:s}", "topic", p->v[i].topic,
                                                     "partition", (int)p->v[i].partition,
                                                     "error", sf_error_name(p->v[i].err)));
        else
            sf_cli_error(cli, "%s-%d: %s (%s)", p->v[i].topic, (int)p->v[i].partition,
                         sf_error_str(p->v[i].err), sf_error_name(p->v[i].err));
    }
    return failed;
}

/* Start (or cancel) the moves of @p and report the outcome: into @jout with --output json,
 * else "@done N partition(s)." and the failures. @what names the call in errors. */
static int plan_apply(const sf_cli_t *cli, sf_admin_t *a, plan_t *p, const char *what,
                      const char *done, json_t *jout) {
    char errstr[512];
    json_t *jfailed = jout ? json_array() : NULL;
    size_t failed;
    int rc = sf_admin_alter_reassignments(a, p->v, p->n, cli->timeout_ms, errstr,
                                          sizeof(errstr));
    if (rc) {
        json_decref(jfailed);
        return sf_cli_fail_msg(cli, what, rc, errstr, NULL);
    }
    failed = report_failures(cli, p, jfailed);
    if (jout)
        json_object_set_new(jout, "failed", jfailed);
    else if (failed < p->n)
        printf("%s %zu partition(s).\n", done, p->n - failed);
    return failed ? SF_CLI_EXIT_FAIL : SF_CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * Throttles, as kafka-reassign-partitions.sh sets them: each moving partition's current
 * replicas send at most the rate (leader side), its new replicas fetch at most the rate
 * (follower side), on every broker involved, until --verify finds every move done.
 * ------------------------------------------------------------------------------------------ */

static int has_id(const int32_t *ids, size_t n, int32_t id) {
    size_t i;
    for (i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

/* Append "partition:broker" to the list in @buf (@size). Returns -1 when it does not fit. */
static int list_add(char *buf, size_t size, int32_t partition, int32_t broker) {
    size_t len = strlen(buf);
    int n = snprintf(buf + len, size - len, "%s%d:%d", len ? "," : "", (int)partition,
                     (int)broker);
    return n < 0 || (size_t)n >= size - len ? -1 : 0;
}

/* Set the throttled replica lists of topic @topic from the moves of @p (the current replicas
 * in @info). Returns 0 or the exit code after printing. */
static int throttle_topic(const sf_cli_t *cli, sf_admin_t *a, const sf_cluster_info_t *info,
                          const plan_t *p, const char *topic) {
    static char leaders[65536], followers[65536];
    sf_config_kv_t kvs[2] = {{LEADER_REPLICAS, leaders}, {FOLLOWER_REPLICAS, followers}};
    char errstr[512], what[300];
    size_t i, j;
    int rc, full = 0;
    leaders[0] = followers[0] = '\0';
    for (i = 0; i < p->n; i++) {
        const sf_partition_info_t *pi = find_partition(info, p->v[i].topic, p->v[i].partition);
        if (strcmp(p->v[i].topic, topic) || !pi)
            continue;
        for (j = 0; j < pi->replica_count; j++)
            full |= list_add(leaders, sizeof(leaders), pi->id, pi->replicas[j]);
        for (j = 0; j < p->v[i].replica_count; j++)
            if (!has_id(pi->replicas, pi->replica_count, p->v[i].replicas[j]))
                full |= list_add(followers, sizeof(followers), pi->id, p->v[i].replicas[j]);
    }
    if (full) {
        sf_cli_error(cli, "too many partitions of topic '%s' to throttle in one list", topic);
        return SF_CLI_EXIT_USAGE;
    }
    snprintf(what, sizeof(what), "throttling the replication of topic '%s'", topic);
    rc = sf_admin_alter_configs(a, topic, kvs, 2, cli->timeout_ms, errstr, sizeof(errstr));
    return rc ? sf_cli_fail_msg(cli, what, rc, errstr, NULL) : 0;
}

/* Set (@rate, as text) or remove (NULL) both replication rates of broker @id. */
static int throttle_broker(const sf_cli_t *cli, sf_admin_t *a, int32_t id, const char *rate) {
    sf_config_kv_t kvs[2] = {{LEADER_RATE, rate}, {FOLLOWER_RATE, rate}};
    char errstr[512], broker[16], what[64];
    int rc;
    snprintf(broker, sizeof(broker), "%d", (int)id);
    snprintf(what, sizeof(what), "%s the replication throttle of broker %d",
             rate ? "setting" : "removing", (int)id);
    rc = sf_admin_alter_broker_configs(a, broker, kvs, 2, cli->timeout_ms, errstr,
                                       sizeof(errstr));
    return rc ? sf_cli_fail_msg(cli, what, rc, errstr, NULL) : 0;
}

/* Throttle the moves of @p at @rate bytes per second: the topics' lists, then the rates of
 * every broker that holds or gets a replica of a moving partition. */
static int throttle_set(const sf_cli_t *cli, sf_admin_t *a, const sf_cluster_info_t *info,
                        const plan_t *p, long long rate) {
    char text[24];
    size_t i, b;
    int code;
    for (i = 0; i < p->n; i++)
        if ((i == 0 || strcmp(p->v[i].topic, p->v[i - 1].topic)) &&
            (code = throttle_topic(cli, a, info, p, p->v[i].topic)) != 0)
            return code;
    snprintf(text, sizeof(text), "%lld", rate);
    for (b = 0; b < info->broker_count; b++) {
        int32_t id = info->brokers[b].id;
        int involved = 0;
        for (i = 0; i < p->n && !involved; i++) {
            const sf_partition_info_t *pi =
                find_partition(info, p->v[i].topic, p->v[i].partition);
            involved = has_id(p->v[i].replicas, p->v[i].replica_count, id) ||
                       (pi && has_id(pi->replicas, pi->replica_count, id));
        }
        if (involved && (code = throttle_broker(cli, a, id, text)) != 0)
            return code;
    }
    if (!cli->json)
        printf("Throttled the moves at %lld bytes per second; 'streamflow topic reassign "
               "--verify' removes the throttle once they are done.\n", rate);
    return 0;
}

/* Remove the throttles: the lists of @p's topics, the rates of every live broker. */
static int throttle_clear(const sf_cli_t *cli, sf_admin_t *a, const sf_cluster_info_t *info,
                          const plan_t *p) {
    sf_config_kv_t kvs[2] = {{LEADER_REPLICAS, NULL}, {FOLLOWER_REPLICAS, NULL}};
    char errstr[512];
    size_t i;
    int rc, code;
    for (i = 0; i < p->n; i++)
        if ((i == 0 || strcmp(p->v[i].topic, p->v[i - 1].topic)) &&
            (rc = sf_admin_alter_configs(a, p->v[i].topic, kvs, 2, cli->timeout_ms, errstr,
                                         sizeof(errstr))) != 0)
            return sf_cli_fail_msg(cli, "removing the throttled replica lists", rc, errstr,
                                   NULL);
    for (i = 0; i < info->broker_count; i++)
        if ((code = throttle_broker(cli, a, info->brokers[i].id, NULL)) != 0)
            return code;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * topic reassign --execute | --cancel | --verify | --list
 * ------------------------------------------------------------------------------------------ */

static void print_compact(json_t *j) {
    char *text = json_dumps(j, JSON_COMPACT);
    printf("%s\n", text ? text : "");
    free(text);
    json_decref(j);
}

/* The current replicas of the partitions of @p that exist, as a plan. */
static int current_of(const sf_cluster_info_t *info, const plan_t *p, plan_t *cur) {
    size_t i;
    for (i = 0; i < p->n; i++) {
        const sf_partition_info_t *pi = find_partition(info, p->v[i].topic, p->v[i].partition);
        if (pi && plan_add(cur, p->v[i].topic, pi->id, pi->replicas, pi->replica_count))
            return -1;
    }
    return 0;
}

static int reassign_execute(const sf_cli_t *cli, sf_admin_t *a, plan_t *p, long long throttle) {
    sf_cluster_info_t *info = NULL;
    plan_t cur = {0};
    json_t *jout = NULL;
    int code;
    if ((code = describe(cli, a, &info)) != 0)
        return code;
    if (current_of(info, p, &cur)) {
        sf_cluster_info_destroy(info);
        sf_cli_error(cli, "out of memory");
        return SF_CLI_EXIT_FAIL;
    }
    if (cli->json) {
        jout = json_pack("{s:o}", "current", plan_json(&cur));
    } else {
        printf("Current partition replica assignment (give it to --execute to roll back):\n\n");
        print_compact(plan_json(&cur));
        printf("\n");
    }
    if (throttle >= 0 && (code = throttle_set(cli, a, info, p, throttle)) != 0) {
        json_decref(jout);
        plan_free(&cur);
        sf_cluster_info_destroy(info);
        return code;
    }
    code = plan_apply(cli, a, p, "starting the reassignment", "Started the reassignment of",
                      jout);
    if (jout)
        sf_cli_json_print(jout);
    plan_free(&cur);
    sf_cluster_info_destroy(info);
    return code;
}

/* Cancel the moves of @p and, as Kafka's tool, remove the throttles. */
static int reassign_cancel(const sf_cli_t *cli, sf_admin_t *a, plan_t *p) {
    json_t *jout = cli->json ? json_object() : NULL;
    sf_cluster_info_t *info = NULL;
    size_t i;
    int code, clear;
    for (i = 0; i < p->n; i++) {
        free((int32_t *)p->v[i].replicas);
        p->v[i].replicas = NULL;
        p->v[i].replica_count = 0;
    }
    code = plan_apply(cli, a, p, "cancelling the reassignment", "Cancelled the reassignment of",
                      jout);
    if ((clear = describe(cli, a, &info)) == 0)
        clear = throttle_clear(cli, a, info, p);
    sf_cluster_info_destroy(info);
    if (jout)
        sf_cli_json_print(jout);
    return code ? code : clear;
}

static const sf_reassignment_t *find_moving(const sf_reassignment_t *r, size_t n,
                                            const sf_reassignment_target_t *t) {
    size_t i;
    for (i = 0; i < n; i++)
        if (r[i].partition == t->partition && !strcmp(r[i].topic, t->topic))
            return &r[i];
    return NULL;
}

/* "completed", "in progress", or NULL when the partition has other replicas than planned. */
static const char *verify_status(const sf_cluster_info_t *info, const sf_reassignment_t *r,
                                 size_t nr, const sf_reassignment_target_t *t) {
    const sf_partition_info_t *pi = find_partition(info, t->topic, t->partition);
    if (find_moving(r, nr, t))
        return "in progress";
    if (pi && pi->replica_count == t->replica_count &&
        !memcmp(pi->replicas, t->replicas, t->replica_count * sizeof(int32_t)))
        return "completed";
    return NULL;
}

static int reassign_verify(const sf_cli_t *cli, sf_admin_t *a, const plan_t *p) {
    static const char *const headers[] = {"TOPIC", "PARTITION", "STATUS"};
    sf_topic_partition_t *tps = calloc(p->n, sizeof(*tps));
    sf_reassignment_t *r = NULL;
    sf_cluster_info_t *info = NULL;
    json_t *jarr = json_array();
    sf_cli_table_t *tab = sf_cli_table_new(3, headers);
    size_t i, nr = 0, pending = 0;
    int rc, code = SF_CLI_EXIT_FAIL;
    for (i = 0; tps && i < p->n; i++) {
        tps[i].topic = p->v[i].topic;
        tps[i].partition = p->v[i].partition;
    }
    if (!tps)
        sf_cli_error(cli, "out of memory");
    else if ((rc = sf_admin_list_reassignments(a, tps, p->n, cli->timeout_ms, &r, &nr)) != 0)
        code = sf_cli_fail(cli, "listing the reassignments under way", rc);
    else if ((code = describe(cli, a, &info)) == 0) {
        for (i = 0; i < p->n; i++) {
            const char *st = verify_status(info, r, nr, &p->v[i]);
            char part[16], ids[128], other[160];
            const char *cells[3];
            if (!st) {
                const sf_partition_info_t *pi =
                    find_partition(info, p->v[i].topic, p->v[i].partition);
                snprintf(other, sizeof(other), "not moving; replicas %s",
                         pi ? sf_cli_join_ids(pi->replicas, pi->replica_count, ids, sizeof(ids))
                            : "unknown");
                st = other;
            }
            /* Stricter than Kafka's tool, which calls a partition with other replicas done:
             * the exit status says whether the plan holds (--cancel lifts the throttles). */
            pending += strcmp(st, "completed") != 0;
            snprintf(part, sizeof(part), "%d", (int)p->v[i].partition);
            cells[0] = p->v[i].topic;
            cells[1] = part;
            cells[2] = st;
            sf_cli_table_add(tab, cells);
            json_array_append_new(jarr, json_pack("{s:s, s:i, s:s}", "topic", p->v[i].topic,
                                                  "partition", (int)p->v[i].partition,
                                                  "status", st));
        }
        if (cli->json)
            sf_cli_json_print(json_incref(jarr));
        else
            sf_cli_table_print(tab, stdout);
        code = pending ? SF_CLI_EXIT_FAIL : throttle_clear(cli, a, info, p);
        if (!pending && !code && !cli->json)
            printf("Every move has finished; the replication throttle is removed.\n");
    }
    sf_cli_table_free(tab);
    json_decref(jarr);
    sf_cluster_info_destroy(info);
    sf_reassignments_destroy(r, nr);
    free(tps);
    return code;
}

static int reassign_list(const sf_cli_t *cli, sf_admin_t *a) {
    static const char *const headers[] = {"TOPIC", "PARTITION", "REPLICAS", "ADDING",
                                          "REMOVING"};
    sf_reassignment_t *r = NULL;
    sf_cli_table_t *tab;
    json_t *jarr;
    size_t i, n = 0;
    int rc = sf_admin_list_reassignments(a, NULL, 0, cli->timeout_ms, &r, &n);
    if (rc)
        return sf_cli_fail(cli, "listing the reassignments under way", rc);
    tab = sf_cli_table_new(5, headers);
    jarr = json_array();
    for (i = 0; i < n; i++) {
        char part[16], reps[256], add[256], rem[256];
        const char *cells[5] = {r[i].topic, part, reps, add, rem};
        snprintf(part, sizeof(part), "%d", (int)r[i].partition);
        sf_cli_join_ids(r[i].replicas, r[i].replica_count, reps, sizeof(reps));
        sf_cli_join_ids(r[i].adding, r[i].adding_count, add, sizeof(add));
        sf_cli_join_ids(r[i].removing, r[i].removing_count, rem, sizeof(rem));
        sf_cli_table_add(tab, cells);
        json_array_append_new(
            jarr, json_pack("{s:s, s:i, s:o, s:o, s:o}", "topic", r[i].topic, "partition",
                            (int)r[i].partition, "replicas",
                            sf_cli_json_ids(r[i].replicas, r[i].replica_count), "adding",
                            sf_cli_json_ids(r[i].adding, r[i].adding_count), "removing",
                            sf_cli_json_ids(r[i].removing, r[i].removing_count)));
    }
    if (cli->json)
        sf_cli_json_print(json_incref(jarr));
    else
        sf_cli_table_print(tab, stdout);
    sf_cli_table_free(tab);
    json_decref(jarr);
    sf_reassignments_destroy(r, n);
    return SF_CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * Proposals: topic reassign --generate and cluster rebalance
 * ------------------------------------------------------------------------------------------ */

/* What to plan: topics (all but the internal ones when none named) and brokers (the live
 * ones when none named). */
typedef struct scope {
    char *topics[256];
    size_t ntopics;
    int32_t brokers[256];
    size_t nbrokers;
} scope_t;

/* Append the comma-separated items of @list to the scope (@brokers: as ids). */
static int scope_parse(const sf_cli_t *cli, scope_t *sc, char *list, int brokers) {
    char *save = NULL, *item;
    long long v;
    for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if ((brokers ? sc->nbrokers : sc->ntopics) >= 256) {
            sf_cli_error(cli, "at most 256 %s", brokers ? "brokers" : "topics");
            return -1;
        }
        if (!brokers) {
            sc->topics[sc->ntopics++] = item;
            continue;
        }
        if (sf_cli_parse_int(cli, "--brokers", item, 0, INT32_MAX, &v) < 0)
            return -1;
        if (has_id(sc->brokers, sc->nbrokers, (int32_t)v)) {
            sf_cli_error(cli, "--brokers names broker %lld twice", v);
            return -1;
        }
        sc->brokers[sc->nbrokers++] = (int32_t)v;
    }
    return 0;
}

static int scope_has_topic(const scope_t *sc, const sf_topic_info_t *t) {
    size_t i;
    if (!sc->ntopics)
        return !t->internal && !t->err;
    for (i = 0; i < sc->ntopics; i++)
        if (!strcmp(sc->topics[i], t->name))
            return 1;
    return 0;
}

/* The live brokers (at most 256) with their racks, into @out. */
static size_t live_brokers(const sf_cluster_info_t *info, sf_rebalance_broker_t *out) {
    size_t i;
    for (i = 0; i < info->broker_count && i < 256; i++) {
        out[i].id = info->brokers[i].id;
        out[i].rack = info->brokers[i].rack;
    }
    return i;
}

/* The brokers to plan on, with their racks. Returns the count, or 0 after printing. */
static size_t scope_brokers(const sf_cli_t *cli, const scope_t *sc,
                            const sf_cluster_info_t *info, sf_rebalance_broker_t *out) {
    size_t i, j;
    if (!sc->nbrokers)
        return live_brokers(info, out);
    for (i = 0; i < sc->nbrokers; i++) {
        for (j = 0; j < info->broker_count && info->brokers[j].id != sc->brokers[i]; j++)
            ;
        if (j == info->broker_count) {
            sf_cli_error(cli, "broker %d is not live; see 'streamflow broker list'",
                         (int)sc->brokers[i]);
            return 0;
        }
        out[i].id = sc->brokers[i];
        out[i].rack = info->brokers[j].rack;
    }
    return sc->nbrokers;
}

/* Check the named topics exist and collect every partition in scope into @parts. */
static int scope_partitions(const sf_cli_t *cli, const scope_t *sc,
                            const sf_cluster_info_t *info, sf_rebalance_partition_t **parts,
                            size_t *n) {
    size_t i, j, total = 0;
    for (i = 0; i < sc->ntopics; i++) {
        for (j = 0; j < info->topic_count && strcmp(info->topics[j].name, sc->topics[i]); j++)
            ;
        if (j == info->topic_count || info->topics[j].err)
            return sf_cli_topic_missing(cli, sc->topics[i], "see 'streamflow topic list'");
    }
    for (i = 0; i < info->topic_count; i++)
        if (scope_has_topic(sc, &info->topics[i]))
            total += info->topics[i].partition_count;
    *n = 0;
    if (!(*parts = calloc(total ? total : 1, sizeof(**parts)))) {
        sf_cli_error(cli, "out of memory");
        return SF_CLI_EXIT_FAIL;
    }
    for (i = 0; i < info->topic_count; i++)
        for (j = 0; scope_has_topic(sc, &info->topics[i]) &&
                    j < info->topics[i].partition_count; j++) {
            const sf_partition_info_t *pi = &info->topics[i].partitions[j];
            sf_rebalance_partition_t *rp = &(*parts)[(*n)++];
            rp->topic = info->topics[i].name;
            rp->partition = pi->id;
            rp->replicas = pi->replicas;
            rp->replica_count = pi->replica_count;
        }
    return 0;
}

/* Plan @sc over @info: every partition in scope into @cur and its proposal into @prop. */
static int propose(const sf_cli_t *cli, const scope_t *sc, const sf_cluster_info_t *info,
                   plan_t *cur, plan_t *prop) {
    sf_rebalance_broker_t brokers[256];
    sf_rebalance_partition_t *parts = NULL;
    size_t nb, np = 0, i, total = 0;
    int32_t *out = NULL;
    int code;
    if (!(nb = scope_brokers(cli, sc, info, brokers)))
        return SF_CLI_EXIT_USAGE;
    if ((code = scope_partitions(cli, sc, info, &parts, &np)) != 0)
        return code;
    for (i = 0; i < np; i++)
        total += parts[i].replica_count;
    code = SF_CLI_EXIT_FAIL;
    if (!(out = malloc((total ? total : 1) * sizeof(*out))))
        sf_cli_error(cli, "out of memory");
    else if (sf_rebalance_plan(brokers, nb, parts, np, out) != 0)
        sf_cli_error(cli, "a partition has more replicas than the %zu broker(s) to place them "
                          "on", nb);
    else {
        for (i = 0, total = 0; i < np; total += parts[i++].replica_count)
            if (plan_add(cur, parts[i].topic, parts[i].partition, parts[i].replicas,
                         parts[i].replica_count) ||
                plan_add(prop, parts[i].topic, parts[i].partition, out + total,
                         parts[i].replica_count))
                break;
        code = i == np ? SF_CLI_EXIT_OK : SF_CLI_EXIT_FAIL;
    }
    free(out);
    free(parts);
    return code;
}

/* Refuse while reassignments are under way: a plan made now would fight them. */
static int none_moving(const sf_cli_t *cli, sf_admin_t *a) {
    sf_reassignment_t *r = NULL;
    size_t n = 0;
    int rc = sf_admin_list_reassignments(a, NULL, 0, cli->timeout_ms, &r, &n);
    sf_reassignments_destroy(r, n);
    if (rc)
        return sf_cli_fail(cli, "listing the reassignments under way", rc);
    if (n) {
        sf_cli_error(cli, "%zu partition(s) are being reassigned; wait for them or cancel them "
                          "(see 'streamflow topic reassign --list')", n);
        return SF_CLI_EXIT_FAIL;
    }
    return 0;
}

static int same_replicas(const sf_reassignment_target_t *x, const sf_reassignment_target_t *y) {
    return x->replica_count == y->replica_count &&
           !memcmp(x->replicas, y->replicas, x->replica_count * sizeof(int32_t));
}

static int reassign_generate(const sf_cli_t *cli, sf_admin_t *a, const scope_t *sc) {
    sf_cluster_info_t *info = NULL;
    plan_t cur = {0}, prop = {0};
    int code;
    if (!sc->ntopics || !sc->nbrokers) {
        sf_cli_error(cli, "--generate needs --topics LIST and --brokers LIST");
        return SF_CLI_EXIT_USAGE;
    }
    if ((code = none_moving(cli, a)) != 0 || (code = describe(cli, a, &info)) != 0)
        return code;
    if ((code = propose(cli, sc, info, &cur, &prop)) == 0) {
        if (cli->json) {
            sf_cli_json_print(json_pack("{s:o, s:o}", "current", plan_json(&cur), "proposed",
                                        plan_json(&prop)));
        } else {
            printf("Current partition replica assignment\n");
            print_compact(plan_json(&cur));
            printf("\nProposed partition reassignment configuration\n");
            print_compact(plan_json(&prop));
        }
    }
    plan_free(&cur);
    plan_free(&prop);
    sf_cluster_info_destroy(info);
    return code;
}

/* Per broker of @brokers: replicas and preferred leaders in @cur and in @prop. */
static void print_brokers(const sf_cli_t *cli, const sf_rebalance_broker_t *brokers, size_t nb,
                          const plan_t *cur, const plan_t *prop, json_t *jout) {
    static const char *const headers[] = {"BROKER", "RACK", "REPLICAS", "PREFERRED-LEADERS"};
    sf_cli_table_t *tab = sf_cli_table_new(4, headers);
    json_t *jarr = json_array();
    size_t b, i, j;
    for (b = 0; b < nb; b++) {
        int n[2][2] = {{0, 0}, {0, 0}}, k;
        char id[16], reps[32], leads[32];
        const char *cells[4] = {id, brokers[b].rack, reps, leads};
        for (k = 0; k < 2; k++) {
            const plan_t *p = k ? prop : cur;
            for (i = 0; i < p->n; i++)
                for (j = 0; j < p->v[i].replica_count; j++)
                    if (p->v[i].replicas[j] == brokers[b].id) {
                        n[k][0]++;
                        n[k][1] += j == 0;
                    }
        }
        snprintf(id, sizeof(id), "%d", (int)brokers[b].id);
        snprintf(reps, sizeof(reps), "%d -> %d", n[0][0], n[1][0]);
        snprintf(leads, sizeof(leads), "%d -> %d", n[0][1], n[1][1]);
        sf_cli_table_add(tab, cells);
        json_array_append_new(jarr, json_pack("{s:i, s:i, s:i, s:i, s:i}", "id",
                                              (int)brokers[b].id, "replicas_before", n[0][0],
                                              "replicas_after", n[1][0], "leaders_before",
                                              n[0][1], "leaders_after", n[1][1]));
    }
    if (jout)
        json_object_set(jout, "brokers", jarr);
    else
        sf_cli_table_print(tab, stdout);
    json_decref(jarr);
    sf_cli_table_free(tab);
}

/* The partitions of @prop placed otherwise than in @cur, into @moves, and printed. */
static int print_moves(const plan_t *cur, const plan_t *prop, plan_t *moves, json_t *jout) {
    static const char *const headers[] = {"TOPIC", "PARTITION", "CURRENT", "PROPOSED"};
    sf_cli_table_t *tab = sf_cli_table_new(4, headers);
    size_t i;
    for (i = 0; i < prop->n; i++) {
        char part[16], from[256], to[256];
        const char *cells[4] = {prop->v[i].topic, part, from, to};
        if (same_replicas(&cur->v[i], &prop->v[i]))
            continue;
        if (plan_add(moves, prop->v[i].topic, prop->v[i].partition, prop->v[i].replicas,
                     prop->v[i].replica_count)) {
            sf_cli_table_free(tab);
            return -1;
        }
        snprintf(part, sizeof(part), "%d", (int)prop->v[i].partition);
        sf_cli_join_ids(cur->v[i].replicas, cur->v[i].replica_count, from, sizeof(from));
        sf_cli_join_ids(prop->v[i].replicas, prop->v[i].replica_count, to, sizeof(to));
        sf_cli_table_add(tab, cells);
    }
    if (jout)
        json_object_set_new(jout, "moves", plan_json(moves));
    else if (moves->n)
        sf_cli_table_print(tab, stdout);
    sf_cli_table_free(tab);
    return 0;
}


static int rebalance_run(const sf_cli_t *cli, sf_admin_t *a, const scope_t *sc, int execute) {
    sf_rebalance_broker_t brokers[256];
    sf_cluster_info_t *info = NULL;
    plan_t cur = {0}, prop = {0}, moves = {0};
    json_t *jout = cli->json ? json_object() : NULL;
    size_t nb;
    int code;
    if ((code = none_moving(cli, a)) != 0 || (code = describe(cli, a, &info)) != 0 ||
        (code = propose(cli, sc, info, &cur, &prop)) != 0)
        goto out;
    nb = live_brokers(info, brokers); /* the table shows every one */
    if (print_moves(&cur, &prop, &moves, jout)) {
        sf_cli_error(cli, "out of memory");
        code = SF_CLI_EXIT_FAIL;
        goto out;
    }
    if (!jout && moves.n)
        printf("\n");
    print_brokers(cli, brokers, nb, &cur, &prop, jout);
    if (!jout)
        printf("\n%zu of %zu partition(s) move.\n", moves.n, prop.n);
    if (execute && moves.n)
        code = plan_apply(cli, a, &moves, "starting the reassignment",
                          "Started the reassignment of", jout);
    if (jout) {
        json_object_set_new(jout, "executed", json_boolean(execute && moves.n));
        sf_cli_json_print(json_incref(jout));
    } else if (!execute && moves.n) {
        fprintf(stderr, "Dry run: nothing was changed; add --execute to start the "
                        "reassignment.\n");
    }
out:
    json_decref(jout);
    plan_free(&cur);
    plan_free(&prop);
    plan_free(&moves);
    sf_cluster_info_destroy(info);
    return code;
}

/* ------------------------------------------------------------------------------------------
 * Options and help
 * ------------------------------------------------------------------------------------------ */

static void reassign_help(void) {
    fputs("Usage: streamflow topic reassign (--execute | --verify | --cancel) FILE\n"
          "       streamflow topic reassign --list\n"
          "       streamflow topic reassign --generate --topics LIST --brokers LIST\n"
          "\n"
          "Move partitions to other brokers. FILE (- for standard input) is a plan in the\n"
          "format of kafka-reassign-partitions.sh:\n"
          "  {\"version\":1,\"partitions\":[\n"
          "    {\"topic\":\"t\",\"partition\":0,\"replicas\":[2,3,4]}]}\n"
          "The first replica of each partition is its preferred leader.\n"
          "\n"
          "Options:\n"
          "      --execute         start the moves of FILE; prints the current assignment\n"
          "                        first, to roll back with\n"
          "      --verify          show whether each move of FILE has finished; exits 1 until\n"
          "                        all have\n"
          "      --cancel          cancel the moves of FILE under way: the partitions keep\n"
          "                        their replicas from before\n"
          "      --reassignment-json-file FILE   FILE, as kafka-reassign-partitions.sh takes it\n"
          "      --list            the moves under way: replicas, being added, being removed\n"
          "      --generate        propose a plan that spreads the replicas and preferred\n"
          "                        leaders of --topics evenly over --brokers (racks respected)\n"
          "      --topics LIST     comma-separated topic names (--generate)\n"
          "      --brokers LIST    comma-separated broker ids (--generate)\n"
          "      --throttle BYTES  with --execute: copy at most BYTES per second per broker\n"
          "                        for the moves (Kafka's replication throttles); --verify\n"
          "                        removes the throttle once every move is done\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static void rebalance_help(void) {
    fputs("Usage: streamflow cluster rebalance [--topics LIST] [--brokers LIST] [--execute]\n"
          "\n"
          "Spread the replicas and preferred leaders of every topic evenly over the live\n"
          "brokers, moving as few as it can and keeping each partition's replicas on\n"
          "different racks when every broker has broker.rack. Shows the moves and the\n"
          "replicas and preferred leaders per broker before and after. Without --execute\n"
          "this is a dry run; with it the moves start as a partition reassignment (follow\n"
          "them with 'streamflow topic reassign --list').\n"
          "\n"
          "Options:\n"
          "      --topics LIST     only these topics (default: all but the internal ones)\n"
          "      --brokers LIST    place on these broker ids only (default: every live "
          "broker)\n"
          "      --execute         start the moves\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

typedef struct reassign_opts {
    int mode; /* OPT_EXECUTE ... OPT_GENERATE, or 0 */
    int modes;
    const char *file;
    long long throttle; /* bytes per second, -1 for none */
    scope_t scope;
} reassign_opts_t;

/* Parse the options of both commands; a FILE operand is left in o->file. Returns -1 to go
 * on, else the exit code. */
static int parse_options(sf_cli_t *cli, int argc, char **argv, reassign_opts_t *o,
                         void (*help)(void)) {
    static const struct option longopts[] = SF_CLI_OPTS(
        {"execute", no_argument, NULL, OPT_EXECUTE}, {"verify", no_argument, NULL, OPT_VERIFY},
        {"cancel", no_argument, NULL, OPT_CANCEL}, {"list", no_argument, NULL, OPT_LIST},
        {"generate", no_argument, NULL, OPT_GENERATE},
        {"reassignment-json-file", required_argument, NULL, OPT_FILE},
        {"topics", required_argument, NULL, OPT_TOPICS},
        {"brokers", required_argument, NULL, OPT_BROKERS},
        {"throttle", required_argument, NULL, OPT_THROTTLE});
    int opt;
    memset(o, 0, sizeof(*o));
    o->throttle = -1;
    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h': help(); return SF_CLI_EXIT_OK;
        case OPT_EXECUTE:
        case OPT_VERIFY:
        case OPT_CANCEL:
        case OPT_LIST:
        case OPT_GENERATE:
            o->mode = opt;
            o->modes++;
            break;
        case OPT_FILE: o->file = optarg; break;
        case OPT_THROTTLE:
            if (sf_cli_parse_int(cli, "--throttle", optarg, 1, INT64_MAX, &o->throttle) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        case OPT_TOPICS:
        case OPT_BROKERS:
            if (scope_parse(cli, &o->scope, optarg, opt == OPT_BROKERS) < 0)
                return SF_CLI_EXIT_USAGE;
            break;
        default: return SF_CLI_EXIT_USAGE;
        }
    }
    if (optind < argc && !o->file)
        o->file = argv[optind++];
    if (optind < argc) {
        sf_cli_error(cli, "unexpected argument '%s'; see '%s --help'", argv[optind], cli->prog);
        return SF_CLI_EXIT_USAGE;
    }
    return -1;
}

int sf_cmd_topic_reassign(sf_cli_t *cli, int argc, char **argv) {
    reassign_opts_t o;
    plan_t p = {0};
    sf_admin_t *a;
    int code = parse_options(cli, argc, argv, &o, reassign_help);
    if (code >= 0)
        return code;
    if (o.modes != 1 || (o.mode <= OPT_CANCEL) != (o.file != NULL)) {
        sf_cli_error(cli, "give one of --execute FILE, --verify FILE, --cancel FILE, --list "
                          "and --generate; see '%s --help'", cli->prog);
        return SF_CLI_EXIT_USAGE;
    }
    if (o.throttle >= 0 && o.mode != OPT_EXECUTE) {
        sf_cli_error(cli, "--throttle goes with --execute");
        return SF_CLI_EXIT_USAGE;
    }
    if (o.file && (code = plan_read(cli, o.file, &p)) != 0) {
        plan_free(&p);
        return code;
    }
    if ((a = sf_cli_admin(cli)) == NULL) {
        plan_free(&p);
        return SF_CLI_EXIT_USAGE;
    }
    switch (o.mode) {
    case OPT_EXECUTE: code = reassign_execute(cli, a, &p, o.throttle); break;
    case OPT_VERIFY: code = reassign_verify(cli, a, &p); break;
    case OPT_CANCEL: code = reassign_cancel(cli, a, &p); break;
    case OPT_LIST: code = reassign_list(cli, a); break;
    default: code = reassign_generate(cli, a, &o.scope); break;
    }
    sf_admin_destroy(a);
    plan_free(&p);
    return code;
}

int sf_cmd_cluster_rebalance(sf_cli_t *cli, int argc, char **argv) {
    reassign_opts_t o;
    sf_admin_t *a;
    int code = parse_options(cli, argc, argv, &o, rebalance_help);
    if (code >= 0)
        return code;
    if (o.modes > 1 || (o.modes && o.mode != OPT_EXECUTE) || o.file || o.throttle >= 0) {
        sf_cli_error(cli, "only --execute, --topics and --brokers apply; see '%s --help'",
                     cli->prog);
        return SF_CLI_EXIT_USAGE;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    code = rebalance_run(cli, a, &o.scope, o.modes == 1);
    sf_admin_destroy(a);
    return code;
}

/* ------------------------------------------------------------------------------------------
 * topic elect-leaders
 * ------------------------------------------------------------------------------------------ */

static void elect_help(void) {
    fputs("Usage: streamflow topic elect-leaders (--topic NAME [--partition N]... | --all-topics)\n"
          "       [--election-type preferred|unclean]\n"
          "\n"
          "Move leadership to each partition's preferred replica (the first of its replicas)\n"
          "when it is in sync, or, with --election-type unclean, to an out-of-sync replica\n"
          "where no in-sync one can lead (records only the old leader had are lost).\n"
          "\n"
          "Options:\n"
          "      --topic NAME          the topic (every partition of it unless --partition)\n"
          "      --partition N         one partition of it (repeatable)\n"
          "      --all-topics          every partition that needs an election\n"
          "      --election-type TYPE  preferred (default) or unclean\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

/* The partitions to elect: @parts of @topic, or all of it from Metadata. */
static int elect_targets(const sf_cli_t *cli, sf_admin_t *a, const char *topic,
                         const int32_t *parts, size_t nparts, sf_topic_partition_t **out,
                         size_t *n) {
    sf_cluster_info_t *info = NULL;
    size_t i;
    int rc;
    *n = nparts;
    if (!nparts) {
        if ((rc = sf_admin_describe_cluster(a, &topic, 1, cli->timeout_ms, &info)) != 0)
            return sf_cli_fail(cli, "reading the topic's partitions", rc);
        if (!info->topic_count || info->topics[0].err) {
            sf_cluster_info_destroy(info);
            return sf_cli_topic_missing(cli, topic, "see 'streamflow topic list'");
        }
        *n = info->topics[0].partition_count;
    }
    if (!(*out = calloc(*n ? *n : 1, sizeof(**out)))) {
        sf_cluster_info_destroy(info);
        sf_cli_error(cli, "out of memory");
        return SF_CLI_EXIT_FAIL;
    }
    for (i = 0; i < *n; i++) {
        (*out)[i].topic = topic;
        (*out)[i].partition = info ? info->topics[0].partitions[i].id : parts[i];
    }
    sf_cluster_info_destroy(info);
    return 0;
}

/* Print the outcome per partition (as kafka-leader-election.sh sorts it). */
static int elect_report(const sf_cli_t *cli, const char *type, const sf_topic_partition_t *tp,
                        size_t n) {
    json_t *jarr = json_array();
    size_t i, failed = 0, done = 0, not_needed = 0;
    for (i = 0; i < n; i++) {
        int err = tp[i].err;
        json_array_append_new(jarr, json_pack("{s:s, s:i, s:s}", "topic", tp[i].topic,
                                              "partition", (int)tp[i].partition, "result",
                                              !err ? "elected" : sf_error_name(err)));
        if (!err)
            done++;
        else if (err == KERR_ELECTION_NOT_NEEDED)
            not_needed++;
        else if (failed++, !cli->json)
            sf_cli_error(cli, "%s-%d: %s (%s)", tp[i].topic, (int)tp[i].partition,
                         sf_error_str(err), sf_error_name(err));
    }
    if (cli->json)
        sf_cli_json_print(json_incref(jarr));
    else
        printf("%s leader election: %zu partition(s) elected, %zu already led by the replica "
               "it would elect, %zu failed.\n", type, done, not_needed, failed);
    json_decref(jarr);
    return failed ? SF_CLI_EXIT_FAIL : SF_CLI_EXIT_OK;
}

int sf_cmd_topic_elect(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = SF_CLI_OPTS(
        {"topic", required_argument, NULL, OPT_TOPIC},
        {"partition", required_argument, NULL, OPT_PARTITION},
        {"all-topics", no_argument, NULL, OPT_ALL_TOPICS},
        {"election-type", required_argument, NULL, OPT_ELECTION_TYPE});
    const char *topic = NULL, *type = "preferred";
    int32_t parts[256];
    size_t nparts = 0, n = 0;
    sf_topic_partition_t *tp = NULL;
    int opt, all = 0, unclean, rc, code;
    long long v;
    sf_admin_t *a;
    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h': elect_help(); return SF_CLI_EXIT_OK;
        case OPT_TOPIC: topic = optarg; break;
        case OPT_PARTITION:
            if (nparts == 256 ||
                sf_cli_parse_int(cli, "--partition", optarg, 0, INT32_MAX, &v) < 0)
                return SF_CLI_EXIT_USAGE;
            parts[nparts++] = (int32_t)v;
            break;
        case OPT_ALL_TOPICS: all = 1; break;
        case OPT_ELECTION_TYPE: type = optarg; break;
        default: return SF_CLI_EXIT_USAGE;
        }
    }
    if (optind < argc || !topic == !all || (all && nparts) ||
        (strcasecmp(type, "preferred") && strcasecmp(type, "unclean"))) {
        sf_cli_error(cli, "give --topic NAME [--partition N]... or --all-topics, and an "
                          "--election-type of preferred or unclean; see '%s --help'", cli->prog);
        return SF_CLI_EXIT_USAGE;
    }
    unclean = !strcasecmp(type, "unclean");
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    code = all ? 0 : elect_targets(cli, a, topic, parts, nparts, &tp, &n);
    if (code == 0 && (rc = sf_admin_elect_leaders(a, unclean, tp, n, cli->timeout_ms)) != 0)
        code = sf_cli_fail(cli, "electing leaders", rc);
    else if (code == 0 && !all)
        code = elect_report(cli, unclean ? "Unclean" : "Preferred", tp, n);
    else if (code == 0 && !cli->json)
        printf("%s leader election done wherever one was needed.\n",
               unclean ? "Unclean" : "Preferred");
    free(tp);
    sf_admin_destroy(a);
    return code;
}
