/* streamflow group list|describe|delete|reset-offsets (after kafka-consumer-groups.sh). */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clidata.h"

/* Kafka error codes the group commands treat specially. */
#define KERR_NON_EMPTY_GROUP 68
#define KERR_GROUP_ID_NOT_FOUND 69

enum {
    OPT_MEMBERS = 0x200,
    OPT_STATE,
    OPT_VERBOSE,
    OPT_TOPIC,
    OPT_ALL_TOPICS,
    OPT_TO_EARLIEST,
    OPT_TO_LATEST,
    OPT_TO_OFFSET,
    OPT_TO_DATETIME,
    OPT_SHIFT_BY,
    OPT_EXECUTE,
    OPT_DRY_RUN
};

/* "-" for a negative number, else its decimal digits in @buf. */
static const char *num_or_dash(int64_t v, char *buf, size_t size) {
    if (v < 0)
        return "-";
    snprintf(buf, size, "%" PRId64, v);
    return buf;
}

static json_t *json_num_or_null(int64_t v) {
    return v < 0 ? json_null() : json_integer(v);
}

/* The GROUP operands (at least one) left after the options, or print what is missing. */
static int group_args(const sf_cli_t *cli, int argc, char **argv, const char *verb) {
    if (optind >= argc) {
        sf_cli_error(cli, "missing the group id; usage: streamflow group %s GROUP...", verb);
        return -1;
    }
    return argc - optind;
}

/* ------------------------------------------------------------------------------------------
 * list
 * ------------------------------------------------------------------------------------------ */

static void list_help(void) {
    fputs("Usage: streamflow group list [OPTIONS]\n"
          "\n"
          "List the groups of the cluster (ListGroups to every broker): group id, protocol type\n"
          "(\"consumer\" for consumer groups) and state.\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int group_list(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {SF_CLI_LONGOPTS, {NULL, 0, NULL, 0}};
    static const char *const headers[] = {"GROUP", "PROTOCOL-TYPE", "STATE"};
    sf_group_listing_t *groups = NULL;
    size_t n = 0, i;
    sf_admin_t *a;
    int opt, rc;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        if (opt == 'h') {
            list_help();
            return SF_CLI_EXIT_OK;
        }
        return SF_CLI_EXIT_USAGE;
    }
    if (optind < argc) {
        sf_cli_error(cli, "unexpected argument '%s'; to show a group use 'streamflow group "
                          "describe GROUP'", argv[optind]);
        return SF_CLI_EXIT_USAGE;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = sf_admin_list_groups(a, cli->timeout_ms, &groups, &n);
    sf_admin_destroy(a);
    if (rc != 0 && n == 0) {
        sf_group_listings_destroy(groups, n);
        return sf_cli_fail(cli, "listing groups", rc);
    }
    if (rc != 0)
        sf_cli_fail(cli, "listing groups (some brokers did not answer)", rc);
    if (cli->json) {
        json_t *arr = json_array();

        for (i = 0; i < n; i++)
            json_array_append_new(
                arr, json_pack("{s:s, s:s, s:o, s:i}", "group", groups[i].group_id,
                               "protocol_type", groups[i].protocol_type, "state",
                               groups[i].state ? json_string(groups[i].state) : json_null(),
                               "coordinator", (int)groups[i].coordinator));
        sf_cli_json_print(json_pack("{s:o}", "groups", arr));
    } else {
        sf_cli_table_t *tab = sf_cli_table_new(3, headers);

        for (i = 0; i < n; i++) {
            const char *cells[3] = {groups[i].group_id, groups[i].protocol_type,
                                    groups[i].state};
            sf_cli_table_add(tab, cells);
        }
        sf_cli_table_print(tab, stdout);
        sf_cli_table_free(tab);
    }
    sf_group_listings_destroy(groups, n);
    return rc != 0 ? sf_cli_exit_code(rc) : SF_CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * describe
 * ------------------------------------------------------------------------------------------ */

static void describe_help(void) {
    fputs("Usage: streamflow group describe GROUP... [OPTIONS]\n"
          "\n"
          "Show each group's partitions: the committed offset (CURRENT-OFFSET), the log end\n"
          "offset (the high watermark), the lag between them, and the member the partition is\n"
          "assigned to (CONSUMER-ID, HOST, CLIENT-ID; \"-\" when none). Partitions assigned but\n"
          "without a committed offset show \"-\" as CURRENT-OFFSET and LAG.\n"
          "\n"
          "Options:\n"
          "      --members                the members instead: consumer id, host, client id and\n"
          "                               the number of partitions assigned\n"
          "      --verbose                with --members: the partitions too\n"
          "      --state                  the group's coordinator, assignment strategy, state and\n"
          "                               number of members\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

/* One partition of the offsets view. */
typedef struct drow {
    const char *group;
    const char *topic;
    int32_t partition;
    int64_t current; /* -1: no committed offset */
    int64_t end;     /* -1: unknown */
    const sf_group_member_t *member;
} drow_t;

typedef struct drows {
    drow_t *v;
    size_t n, cap;
} drows_t;

static drow_t *drows_add(drows_t *r, const char *group, const char *topic, int32_t partition) {
    drow_t *row;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        drow_t *v = realloc(r->v, cap * sizeof(*v));
        if (!v)
            return NULL;
        r->v = v;
        r->cap = cap;
    }
    row = &r->v[r->n++];
    row->group = group;
    row->topic = topic;
    row->partition = partition;
    row->current = -1;
    row->end = -1;
    row->member = NULL;
    return row;
}

static drow_t *drows_find(drows_t *r, size_t from, const char *topic, int32_t partition) {
    size_t i;
    for (i = from; i < r->n; i++)
        if (r->v[i].partition == partition && strcmp(r->v[i].topic, topic) == 0)
            return &r->v[i];
    return NULL;
}

static int drow_cmp(const void *x, const void *y) {
    const drow_t *a = x, *b = y;
    int c = strcmp(a->group, b->group);
    if (c == 0)
        c = strcmp(a->topic, b->topic);
    return c ? c : a->partition < b->partition ? -1 : a->partition > b->partition;
}

/* What describe learned of one group. */
typedef struct dgroup {
    const char *id;
    const sf_group_info_t *info; /* NULL when DescribeGroups failed */
    sf_topic_partition_t *offsets;
    size_t noffsets;
} dgroup_t;

/* The rows of @g: assigned partitions, then committed ones no member has. */
static int drows_group(drows_t *r, const dgroup_t *g) {
    size_t i, j, first = r->n;
    for (i = 0; g->info && i < g->info->member_count; i++) {
        const sf_group_member_t *m = &g->info->members[i];
        for (j = 0; j < m->assignment_count; j++) {
            drow_t *row = drows_add(r, g->id, m->assignment[j].topic, m->assignment[j].partition);
            if (!row)
                return -1;
            row->member = m;
        }
    }
    for (i = 0; i < g->noffsets; i++) {
        drow_t *row = drows_find(r, first, g->offsets[i].topic, g->offsets[i].partition);
        if (!row && !(row = drows_add(r, g->id, g->offsets[i].topic, g->offsets[i].partition)))
            return -1;
        row->current = g->offsets[i].offset;
    }
    return 0;
}

/* The log end offsets of the rows (errors leave "-"). */
static void drows_ends(sf_admin_t *a, drows_t *r, int timeout_ms) {
    sf_topic_partition_t *tps = calloc(r->n + 1, sizeof(*tps));
    size_t i;
    if (!tps)
        return;
    for (i = 0; i < r->n; i++) {
        tps[i].topic = r->v[i].topic;
        tps[i].partition = r->v[i].partition;
    }
    sf_admin_list_offsets(a, tps, r->n, SF_OFFSET_END, timeout_ms);
    for (i = 0; i < r->n; i++)
        r->v[i].end = tps[i].err ? -1 : tps[i].offset;
    free(tps);
}

static void drows_print(const sf_cli_t *cli, const drows_t *r) {
    static const char *const headers[] = {"GROUP",      "TOPIC",     "PARTITION",
                                          "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                                          "CONSUMER-ID", "HOST",      "CLIENT-ID"};
    sf_cli_table_t *tab;
    size_t i;
    if (cli->json) {
        json_t *arr = json_array();
        for (i = 0; i < r->n; i++) {
            const drow_t *w = &r->v[i];
            int64_t lag = w->current >= 0 && w->end >= 0
                              ? (w->end > w->current ? w->end - w->current : 0)
                              : -1;
            json_array_append_new(
                arr, json_pack("{s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "group",
                               w->group, "topic", w->topic, "partition", (int)w->partition,
                               "current_offset", json_num_or_null(w->current), "log_end_offset",
                               json_num_or_null(w->end), "lag", json_num_or_null(lag),
                               "consumer_id",
                               w->member ? json_string(w->member->member_id) : json_null(),
                               "host", w->member ? json_string(w->member->host) : json_null(),
                               "client_id",
                               w->member ? json_string(w->member->client_id) : json_null()));
        }
        sf_cli_json_print(json_pack("{s:o}", "offsets", arr));
        return;
    }
    tab = sf_cli_table_new(9, headers);
    for (i = 0; i < r->n; i++) {
        const drow_t *w = &r->v[i];
        char part[16], cur[24], end[24], lag[24];
        const char *cells[9];
        snprintf(part, sizeof part, "%d", (int)w->partition);
        cells[0] = w->group;
        cells[1] = w->topic;
        cells[2] = part;
        cells[3] = num_or_dash(w->current, cur, sizeof cur);
        cells[4] = num_or_dash(w->end, end, sizeof end);
        cells[5] = w->current >= 0 && w->end >= 0
                       ? num_or_dash(w->end > w->current ? w->end - w->current : 0, lag,
                                     sizeof lag)
                       : "-";
        cells[6] = w->member ? w->member->member_id : NULL;
        cells[7] = w->member ? w->member->host : NULL;
        cells[8] = w->member ? w->member->client_id : NULL;
        sf_cli_table_add(tab, cells);
    }
    sf_cli_table_print(tab, stdout);
    sf_cli_table_free(tab);
}

/* "topic:0,1 other:2" (the assignment is sorted), truncated to @size. */
static void assignment_text(const sf_group_member_t *m, char *buf, size_t size) {
    size_t i, off = 0;
    buf[0] = '\0';
    for (i = 0; i < m->assignment_count; i++) {
        const sf_topic_partition_t *tp = &m->assignment[i];
        int w = i > 0 && strcmp(tp->topic, m->assignment[i - 1].topic) == 0
                    ? snprintf(buf + off, size - off, ",%d", (int)tp->partition)
                    : snprintf(buf + off, size - off, "%s%s:%d", i ? " " : "", tp->topic,
                               (int)tp->partition);
        if (w < 0 || (size_t)w >= size - off)
            break;
        off += (size_t)w;
    }
}

static void members_print(const sf_cli_t *cli, const dgroup_t *gs, size_t n, int verbose) {
    static const char *const headers[] = {"GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID",
                                          "#PARTITIONS", "ASSIGNMENT"};
    sf_cli_table_t *tab = NULL;
    json_t *arr = NULL;
    size_t g, i, j;
    if (cli->json)
        arr = json_array();
    else
        tab = sf_cli_table_new(verbose ? 6 : 5, headers);
    for (g = 0; g < n; g++) {
        for (i = 0; gs[g].info && i < gs[g].info->member_count; i++) {
            const sf_group_member_t *m = &gs[g].info->members[i];
            char count[16], asg[4096];
            if (arr) {
                json_t *parts = json_array();
                for (j = 0; j < m->assignment_count; j++)
                    json_array_append_new(parts, json_pack("{s:s, s:i}", "topic",
                                                           m->assignment[j].topic, "partition",
                                                           (int)m->assignment[j].partition));
                json_array_append_new(
                    arr, json_pack("{s:s, s:s, s:o, s:s, s:s, s:o}", "group", gs[g].id,
                                   "consumer_id", m->member_id, "instance_id",
                                   m->instance_id ? json_string(m->instance_id) : json_null(),
                                   "host", m->host, "client_id", m->client_id, "assignment",
                                   parts));
                continue;
            }
            snprintf(count, sizeof count, "%zu", m->assignment_count);
            assignment_text(m, asg, sizeof asg);
            {
                const char *cells[6] = {gs[g].id, m->member_id, m->host, m->client_id, count,
                                        asg};
                sf_cli_table_add(tab, cells);
            }
        }
    }
    if (arr) {
        sf_cli_json_print(json_pack("{s:o}", "members", arr));
    } else {
        sf_cli_table_print(tab, stdout);
        sf_cli_table_free(tab);
    }
}

/* "host:port (id)" of broker @id. */
static const char *coordinator_text(const sf_cluster_info_t *cinfo, int32_t id, char *buf,
                                    size_t size) {
    size_t i;
    for (i = 0; cinfo && i < cinfo->broker_count; i++)
        if (cinfo->brokers[i].id == id) {
            snprintf(buf, size, "%s:%d (%d)", cinfo->brokers[i].host, cinfo->brokers[i].port,
                     (int)id);
            return buf;
        }
    snprintf(buf, size, "(%d)", (int)id);
    return buf;
}

static void state_print(const sf_cli_t *cli, sf_admin_t *a, const dgroup_t *gs, size_t n) {
    static const char *const headers[] = {"GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY",
                                          "STATE", "#MEMBERS"};
    sf_cluster_info_t *cinfo = NULL;
    sf_cli_table_t *tab = NULL;
    json_t *arr = NULL;
    size_t g;
    if (!cli->json)
        sf_admin_describe_cluster(a, NULL, 0, cli->timeout_ms, &cinfo);
    if (cli->json)
        arr = json_array();
    else
        tab = sf_cli_table_new(5, headers);
    for (g = 0; g < n; g++) {
        const sf_group_info_t *info = gs[g].info;
        char coord[300], members[16];
        if (!info)
            continue;
        if (arr) {
            json_array_append_new(arr, json_pack("{s:s, s:i, s:s, s:s, s:i}", "group", gs[g].id,
                                                 "coordinator", (int)info->coordinator,
                                                 "assignment_strategy", info->protocol, "state",
                                                 info->state, "members",
                                                 (int)info->member_count));
            continue;
        }
        snprintf(members, sizeof members, "%zu", info->member_count);
        {
            const char *cells[5] = {gs[g].id,
                                    coordinator_text(cinfo, info->coordinator, coord,
                                                     sizeof coord),
                                    info->protocol[0] ? info->protocol : NULL, info->state,
                                    members};
            sf_cli_table_add(tab, cells);
        }
    }
    if (arr) {
        sf_cli_json_print(json_pack("{s:o}", "groups", arr));
    } else {
        sf_cli_table_print(tab, stdout);
        sf_cli_table_free(tab);
    }
    sf_cluster_info_destroy(cinfo);
}

/* Read what describe shows of @n groups into @gs (infos from one DescribeGroups round).
 * Returns the exit code so far. */
static int describe_fetch(sf_cli_t *cli, sf_admin_t *a, char **ids, dgroup_t *gs, size_t n,
                          sf_group_info_t **infos, int offsets) {
    int rc, code = SF_CLI_EXIT_OK;
    size_t i;
    rc = sf_admin_describe_groups(a, (const char *const *)ids, n, cli->timeout_ms, infos);
    if (rc == SF_ERROR_UNSUPPORTED)
        fprintf(stderr, "%s: the coordinator does not serve DescribeGroups: members are not "
                        "shown\n", cli->prog);
    for (i = 0; i < n; i++) {
        char what[300];
        gs[i].id = ids[i];
        gs[i].info = *infos && !(*infos)[i].err && (*infos)[i].state ? &(*infos)[i] : NULL;
        if (*infos && (*infos)[i].err && (*infos)[i].err != SF_ERROR_UNSUPPORTED) {
            snprintf(what, sizeof what, "describing group '%s'", ids[i]);
            code = sf_cli_fail(cli, what, (*infos)[i].err);
        }
        if (!offsets)
            continue;
        rc = sf_admin_list_group_offsets(a, ids[i], cli->timeout_ms, &gs[i].offsets,
                                         &gs[i].noffsets);
        if (rc != 0) {
            snprintf(what, sizeof what, "reading the offsets of group '%s'", ids[i]);
            code = sf_cli_fail(cli, what, rc);
        }
    }
    return code;
}

/* The offsets view of @gs. */
static int describe_offsets(sf_cli_t *cli, sf_admin_t *a, dgroup_t *gs, size_t n) {
    drows_t rows = {NULL, 0, 0};
    int code = SF_CLI_EXIT_OK;
    size_t i;
    for (i = 0; i < n; i++) {
        const sf_group_info_t *info = gs[i].info;
        if (info && strcmp(info->state, "Dead") == 0 && gs[i].noffsets == 0) {
            sf_cli_error(cli, "consumer group '%s' does not exist", gs[i].id);
            code = SF_CLI_EXIT_FAIL;
            continue;
        }
        if (info && info->member_count == 0 && !cli->json)
            fprintf(stderr, "Consumer group '%s' has no active members.\n", gs[i].id);
        if (drows_group(&rows, &gs[i]) < 0) {
            sf_cli_error(cli, "out of memory");
            free(rows.v);
            return SF_CLI_EXIT_FAIL;
        }
    }
    if (rows.n > 1)
        qsort(rows.v, rows.n, sizeof(*rows.v), drow_cmp);
    drows_ends(a, &rows, cli->timeout_ms);
    if (rows.n > 0 || code == SF_CLI_EXIT_OK)
        drows_print(cli, &rows);
    free(rows.v);
    return code;
}

static int group_describe(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] =
        SF_CLI_OPTS({"members", no_argument, NULL, OPT_MEMBERS},
                   {"state", no_argument, NULL, OPT_STATE},
                   {"verbose", no_argument, NULL, OPT_VERBOSE});
    sf_group_info_t *infos = NULL;
    dgroup_t *gs = NULL;
    int opt, members = 0, state = 0, verbose = 0, code, n;
    sf_admin_t *a;
    size_t i;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h': describe_help(); return SF_CLI_EXIT_OK;
        case OPT_MEMBERS: members = 1; break;
        case OPT_STATE: state = 1; break;
        case OPT_VERBOSE: verbose = 1; break;
        default: return SF_CLI_EXIT_USAGE;
        }
    }
    if ((n = group_args(cli, argc, argv, "describe")) < 0)
        return SF_CLI_EXIT_USAGE;
    if (members && state) {
        sf_cli_error(cli, "give only one of --members and --state");
        return SF_CLI_EXIT_USAGE;
    }
    if (verbose && !members) {
        sf_cli_error(cli, "--verbose goes with --members");
        return SF_CLI_EXIT_USAGE;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    if (!(gs = calloc((size_t)n, sizeof(*gs)))) {
        sf_admin_destroy(a);
        sf_cli_error(cli, "out of memory");
        return SF_CLI_EXIT_FAIL;
    }
    code = describe_fetch(cli, a, argv + optind, gs, (size_t)n, &infos, !members && !state);
    if (members)
        members_print(cli, gs, (size_t)n, verbose);
    else if (state)
        state_print(cli, a, gs, (size_t)n);
    else if (describe_offsets(cli, a, gs, (size_t)n) != SF_CLI_EXIT_OK)
        code = SF_CLI_EXIT_FAIL;
    for (i = 0; i < (size_t)n; i++)
        sf_topic_partitions_destroy(gs[i].offsets);
    free(gs);
    sf_group_info_destroy(infos, infos ? (size_t)n : 0);
    sf_admin_destroy(a);
    return code;
}

/* ------------------------------------------------------------------------------------------
 * delete
 * ------------------------------------------------------------------------------------------ */

static void delete_help(void) {
    fputs("Usage: streamflow group delete GROUP... [OPTIONS]\n"
          "\n"
          "Delete groups and their committed offsets (DeleteGroups). A group with members is\n"
          "not deleted (NON_EMPTY_GROUP): stop its consumers first.\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int group_delete(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {SF_CLI_LONGOPTS, {NULL, 0, NULL, 0}};
    json_t *deleted = NULL, *failed = NULL;
    int opt, n, i, code = SF_CLI_EXIT_OK, *errs;
    sf_admin_t *a;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        if (opt == 'h') {
            delete_help();
            return SF_CLI_EXIT_OK;
        }
        return SF_CLI_EXIT_USAGE;
    }
    if ((n = group_args(cli, argc, argv, "delete")) < 0)
        return SF_CLI_EXIT_USAGE;
    if (!(errs = calloc((size_t)n, sizeof(*errs)))) {
        sf_cli_error(cli, "out of memory");
        return SF_CLI_EXIT_FAIL;
    }
    if ((a = sf_cli_admin(cli)) == NULL) {
        free(errs);
        return SF_CLI_EXIT_USAGE;
    }
    sf_admin_delete_groups(a, (const char *const *)(argv + optind), (size_t)n, errs,
                           cli->timeout_ms);
    sf_admin_destroy(a);
    if (cli->json) {
        deleted = json_array();
        failed = json_object();
    }
    for (i = 0; i < n; i++) {
        const char *id = argv[optind + i];
        char what[300];
        if (errs[i] == 0) {
            if (deleted)
                json_array_append_new(deleted, json_string(id));
            else
                printf("Deleted consumer group '%s'.\n", id);
            continue;
        }
        if (failed)
            json_object_set_new(failed, id, json_string(sf_error_name(errs[i])));
        snprintf(what, sizeof what, "deleting group '%s'", id);
        code = sf_cli_fail_hint(
            cli, what, errs[i],
            errs[i] == KERR_NON_EMPTY_GROUP
                ? "the group has members: stop its consumers first"
                : errs[i] == KERR_GROUP_ID_NOT_FOUND ? "see 'streamflow group list'"
                : errs[i] == SF_ERROR_UNSUPPORTED    ? "the coordinator does not serve "
                                                       "DeleteGroups (see 'streamflow broker "
                                                       "api-versions')"
                                                     : NULL);
    }
    if (cli->json)
        sf_cli_json_print(json_pack("{s:o, s:o}", "deleted", deleted, "errors", failed));
    free(errs);
    return code;
}

/* ------------------------------------------------------------------------------------------
 * reset-offsets
 * ------------------------------------------------------------------------------------------ */

static void reset_help(void) {
    fputs("Usage: streamflow group reset-offsets GROUP (--topic TOPIC[:P,...]... | --all-topics)\n"
          "           (--to-earliest | --to-latest | --to-offset N | --to-datetime T |\n"
          "            --shift-by N) [--execute] [OPTIONS]\n"
          "\n"
          "Change the committed offsets of GROUP, which must have no members (stop its\n"
          "consumers first). Without --execute this is a dry run: the new offsets are shown\n"
          "and nothing changes.\n"
          "\n"
          "Partitions:\n"
          "      --topic TOPIC[:P,...]    every partition of TOPIC, or those listed (repeatable)\n"
          "      --all-topics             every partition the group has an offset for\n"
          "New offsets (each within the partition's log start and end offsets):\n"
          "      --to-earliest            the log start offset\n"
          "      --to-latest              the log end offset\n"
          "      --to-offset N            N\n"
          "      --to-datetime T          the first offset whose timestamp is at or after T\n"
          "                               (milliseconds since the epoch or ISO 8601, e.g.\n"
          "                               2024-05-01T12:00:00Z; the end when there is none)\n"
          "      --shift-by N             the committed offset plus N (N may be negative)\n"
          "Action:\n"
          "      --dry-run                show the plan (the default)\n"
          "      --execute                commit the new offsets\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

enum { TO_NONE, TO_EARLIEST, TO_LATEST, TO_OFFSET, TO_DATETIME, TO_SHIFT };

typedef struct reset_opts {
    const char *group;
    char **topics; /* --topic values */
    size_t ntopics;
    int all_topics, to, execute;
    int64_t value; /* --to-offset, --shift-by, --to-datetime (ms) */
} reset_opts_t;

typedef struct tplist {
    sf_topic_partition_t *v;
    size_t n, cap;
} tplist_t;

static int tp_cmp(const void *x, const void *y) {
    const sf_topic_partition_t *a = x, *b = y;
    int c = strcmp(a->topic, b->topic);
    return c ? c : a->partition < b->partition ? -1 : a->partition > b->partition;
}

static int tplist_add(tplist_t *l, const char *topic, int32_t partition) {
    size_t i;
    for (i = 0; i < l->n; i++)
        if (l->v[i].partition == partition && strcmp(l->v[i].topic, topic) == 0)
            return 0; /* given twice */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        sf_topic_partition_t *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].topic = topic;
    l->v[l->n].partition = partition;
    l->v[l->n].offset = -1;
    l->v[l->n].err = 0;
    l->n++;
    return 0;
}

/* The partitions of --topic TOPIC[:P,...] (topic strings point into @spec, which is modified,
 * or into @info). Returns 0, or -1 after printing why. */
static int reset_topic(const sf_cli_t *cli, sf_admin_t *a, char *spec, tplist_t *out,
                       sf_cluster_info_t **info) {
    char *colon = strchr(spec, ':'), *p;
    const sf_topic_info_t *t;
    size_t i;
    int rc;
    if (colon)
        *colon = '\0';
    if (!*spec) {
        sf_cli_error(cli, "--topic: missing the topic name");
        return -1;
    }
    rc = sf_admin_describe_cluster(a, (const char *const *)&spec, 1, cli->timeout_ms, info);
    if (rc != 0 || (*info)->topic_count != 1 || (*info)->topics[0].err) {
        char what[300];
        snprintf(what, sizeof what, "topic '%s'", spec);
        sf_cli_fail(cli, what,
                    rc ? rc : (*info)->topic_count ? (*info)->topics[0].err : SF_ERROR_NOTFOUND);
        return -1;
    }
    t = &(*info)->topics[0];
    if (!colon) {
        for (i = 0; i < t->partition_count; i++)
            if (tplist_add(out, t->name, t->partitions[i].id) < 0)
                return -1;
        return 0;
    }
    for (p = colon + 1; *p;) {
        long long v;
        char *end = p + strcspn(p, ","), save = *end;
        int found = 0;
        *end = '\0';
        if (sf_cli_parse_int(cli, "--topic partition", p, 0, INT32_MAX, &v) < 0)
            return -1;
        for (i = 0; i < t->partition_count; i++)
            found |= t->partitions[i].id == (int32_t)v;
        if (!found) {
            sf_cli_error(cli, "topic '%s' has no partition %lld", t->name, v);
            return -1;
        }
        if (tplist_add(out, t->name, (int32_t)v) < 0)
            return -1;
        p = save ? end + 1 : end;
    }
    return 0;
}

/* A group with members refuses outside commits: say so before trying. */
static int reset_check_state(const sf_cli_t *cli, sf_admin_t *a, const char *group) {
    sf_group_info_t *info = NULL;
    int rc = sf_admin_describe_groups(a, &group, 1, cli->timeout_ms, &info), code = 0;
    if (rc == 0 && info && !info[0].err && strcmp(info[0].state, "Empty") != 0 &&
        strcmp(info[0].state, "Dead") != 0) {
        sf_cli_error(cli, "offsets can only be reset while group '%s' has no members, but its "
                          "state is %s; stop its consumers first", group, info[0].state);
        code = SF_CLI_EXIT_FAIL;
    }
    sf_group_info_destroy(info, info ? 1 : 0);
    return code;
}

/* @cur moved by @by, saturating at the int64 limits (the caller clamps it to the log), so
 * that a huge --shift-by cannot overflow. */
static int64_t shift_offset(int64_t cur, int64_t by) {
    if (by > 0 && cur > INT64_MAX - by)
        return INT64_MAX;
    if (by < 0 && cur < INT64_MIN - by)
        return INT64_MIN;
    return cur + by;
}

/* Compute the new offset of each target into its offset field. */
static int reset_plan(sf_cli_t *cli, sf_admin_t *a, const reset_opts_t *o, tplist_t *tg,
                      const sf_topic_partition_t *committed, size_t ncommitted) {
    sf_topic_partition_t *lo = malloc((tg->n + 1) * sizeof(*lo));
    sf_topic_partition_t *hi = malloc((tg->n + 1) * sizeof(*hi));
    sf_topic_partition_t *ts = malloc((tg->n + 1) * sizeof(*ts));
    size_t i, j;
    int rc, code = 0;
    if (!lo || !hi || !ts) {
        sf_cli_error(cli, "out of memory");
        code = SF_CLI_EXIT_FAIL;
        goto out;
    }
    memcpy(lo, tg->v, tg->n * sizeof(*lo));
    memcpy(hi, tg->v, tg->n * sizeof(*hi));
    memcpy(ts, tg->v, tg->n * sizeof(*ts));
    if ((rc = sf_admin_list_offsets(a, lo, tg->n, SF_OFFSET_BEGINNING, cli->timeout_ms)) ||
        (rc = sf_admin_list_offsets(a, hi, tg->n, SF_OFFSET_END, cli->timeout_ms)) ||
        (o->to == TO_DATETIME &&
         (rc = sf_admin_list_offsets(a, ts, tg->n, o->value, cli->timeout_ms)))) {
        code = sf_cli_fail(cli, "reading the partitions' offsets", rc);
        goto out;
    }
    for (i = 0; i < tg->n; i++) {
        int64_t v = 0, cur = -1;
        for (j = 0; j < ncommitted; j++)
            if (committed[j].partition == tg->v[i].partition &&
                strcmp(committed[j].topic, tg->v[i].topic) == 0)
                cur = committed[j].offset;
        switch (o->to) {
        case TO_EARLIEST: v = lo[i].offset; break;
        case TO_LATEST: v = hi[i].offset; break;
        case TO_OFFSET: v = o->value; break;
        case TO_DATETIME: v = ts[i].offset < 0 ? hi[i].offset : ts[i].offset; break;
        case TO_SHIFT:
            if (cur < 0) {
                sf_cli_error(cli, "cannot shift %s [%d]: group '%s' has no committed offset "
                                  "for it", tg->v[i].topic, (int)tg->v[i].partition, o->group);
                code = SF_CLI_EXIT_FAIL;
                goto out;
            }
            v = shift_offset(cur, o->value);
            break;
        }
        tg->v[i].offset = v < lo[i].offset ? lo[i].offset : v > hi[i].offset ? hi[i].offset : v;
    }
out:
    free(lo);
    free(hi);
    free(ts);
    return code;
}

static void reset_print(const sf_cli_t *cli, const reset_opts_t *o, const tplist_t *tg) {
    static const char *const headers[] = {"GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"};
    sf_cli_table_t *tab;
    size_t i;
    if (cli->json) {
        json_t *arr = json_array();
        for (i = 0; i < tg->n; i++)
            json_array_append_new(arr, json_pack("{s:s, s:i, s:I}", "topic", tg->v[i].topic,
                                                 "partition", (int)tg->v[i].partition,
                                                 "new_offset", (json_int_t)tg->v[i].offset));
        sf_cli_json_print(json_pack("{s:s, s:b, s:o}", "group", o->group, "executed",
                                    o->execute, "offsets", arr));
        return;
    }
    tab = sf_cli_table_new(4, headers);
    for (i = 0; i < tg->n; i++) {
        char part[16], off[24];
        const char *cells[4] = {o->group, tg->v[i].topic, part, off};
        snprintf(part, sizeof part, "%d", (int)tg->v[i].partition);
        snprintf(off, sizeof off, "%" PRId64, tg->v[i].offset);
        sf_cli_table_add(tab, cells);
    }
    sf_cli_table_print(tab, stdout);
    sf_cli_table_free(tab);
}

static int reset_run(sf_cli_t *cli, sf_admin_t *a, const reset_opts_t *o) {
    sf_cluster_info_t **infos = calloc(o->ntopics + 1, sizeof(*infos));
    sf_topic_partition_t *committed = NULL;
    tplist_t tg = {NULL, 0, 0};
    size_t ncommitted = 0, i;
    int code = 0, rc;
    if (!infos)
        return SF_CLI_EXIT_FAIL;
    if ((code = reset_check_state(cli, a, o->group)) != 0)
        goto out;
    rc = sf_admin_list_group_offsets(a, o->group, cli->timeout_ms, &committed, &ncommitted);
    if (rc) {
        code = sf_cli_fail(cli, "reading the group's offsets", rc);
        goto out;
    }
    for (i = 0; o->all_topics && i < ncommitted; i++)
        tplist_add(&tg, committed[i].topic, committed[i].partition);
    for (i = 0; i < o->ntopics; i++)
        if (reset_topic(cli, a, o->topics[i], &tg, &infos[i]) < 0) {
            code = SF_CLI_EXIT_FAIL;
            goto out;
        }
    if (tg.n == 0) {
        sf_cli_error(cli, "no partitions to reset (group '%s' has no committed offsets)",
                     o->group);
        code = SF_CLI_EXIT_FAIL;
        goto out;
    }
    qsort(tg.v, tg.n, sizeof(*tg.v), tp_cmp);
    if ((code = reset_plan(cli, a, o, &tg, committed, ncommitted)) != 0)
        goto out;
    if (o->execute &&
        (rc = sf_admin_alter_group_offsets(a, o->group, tg.v, tg.n, cli->timeout_ms)) != 0) {
        code = sf_cli_fail_hint(cli, "committing the new offsets", rc,
                                "the group must have no members: stop its consumers first");
        goto out;
    }
    reset_print(cli, o, &tg);
    if (!o->execute && !cli->json)
        fprintf(stderr, "Dry run: nothing was changed; add --execute to commit these offsets.\n");
out:
    for (i = 0; i < o->ntopics; i++)
        sf_cluster_info_destroy(infos[i]);
    free(infos);
    free(tg.v);
    sf_topic_partitions_destroy(committed);
    return code;
}

static int group_reset(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] =
        SF_CLI_OPTS({"topic", required_argument, NULL, OPT_TOPIC},
                   {"all-topics", no_argument, NULL, OPT_ALL_TOPICS},
                   {"to-earliest", no_argument, NULL, OPT_TO_EARLIEST},
                   {"to-latest", no_argument, NULL, OPT_TO_LATEST},
                   {"to-offset", required_argument, NULL, OPT_TO_OFFSET},
                   {"to-datetime", required_argument, NULL, OPT_TO_DATETIME},
                   {"shift-by", required_argument, NULL, OPT_SHIFT_BY},
                   {"execute", no_argument, NULL, OPT_EXECUTE},
                   {"dry-run", no_argument, NULL, OPT_DRY_RUN});
    reset_opts_t o;
    int opt, code, ntos = 0, dry = 0;
    long long v;
    sf_admin_t *a;

    memset(&o, 0, sizeof o);
    if (!(o.topics = calloc((size_t)argc + 1, sizeof(*o.topics))))
        return SF_CLI_EXIT_FAIL;
    code = SF_CLI_EXIT_USAGE;
    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        switch (opt) {
        case 'h': reset_help(); code = SF_CLI_EXIT_OK; goto out;
        case OPT_TOPIC: o.topics[o.ntopics++] = optarg; break;
        case OPT_ALL_TOPICS: o.all_topics = 1; break;
        case OPT_TO_EARLIEST: o.to = TO_EARLIEST; ntos++; break;
        case OPT_TO_LATEST: o.to = TO_LATEST; ntos++; break;
        case OPT_TO_OFFSET:
        case OPT_SHIFT_BY:
            if (sf_cli_parse_int(cli, opt == OPT_TO_OFFSET ? "--to-offset" : "--shift-by",
                                 optarg, opt == OPT_TO_OFFSET ? 0 : -INT64_MAX, INT64_MAX,
                                 &v) < 0)
                goto out;
            o.to = opt == OPT_TO_OFFSET ? TO_OFFSET : TO_SHIFT;
            o.value = v;
            ntos++;
            break;
        case OPT_TO_DATETIME:
            if (sf_clidata_parse_timestamp(optarg, &o.value) < 0) {
                sf_cli_error(cli, "invalid --to-datetime '%s': expected milliseconds since the "
                                  "epoch or ISO 8601 (e.g. 2024-05-01T12:00:00Z)", optarg);
                goto out;
            }
            o.to = TO_DATETIME;
            ntos++;
            break;
        case OPT_EXECUTE: o.execute = 1; break;
        case OPT_DRY_RUN: dry = 1; break;
        default: goto out;
        }
    }
    if (argc - optind != 1) {
        sf_cli_error(cli, argc - optind < 1 ? "missing the group id; see '%s --help'"
                                            : "one group at a time; see '%s --help'",
                     cli->prog);
        goto out;
    }
    o.group = argv[optind];
    if (ntos != 1 || (o.ntopics == 0) == !o.all_topics || (dry && o.execute)) {
        sf_cli_error(cli, ntos != 1 ? "give one of --to-earliest, --to-latest, --to-offset, "
                                      "--to-datetime and --shift-by"
                     : dry && o.execute ? "give --dry-run or --execute, not both"
                                        : "give --topic TOPIC (repeatable) or --all-topics");
        goto out;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        goto out;
    code = reset_run(cli, a, &o);
    sf_admin_destroy(a);
out:
    free(o.topics);
    return code;
}

/* ------------------------------------------------------------------------------------------ */

int sf_cmd_group(sf_cli_t *cli, int argc, char **argv) {
    if (argc < 1) {
        sf_cli_error(cli, "missing the sub-command (list, describe, delete, reset-offsets)");
        return SF_CLI_EXIT_USAGE;
    }
    if (strcmp(argv[0], "list") == 0)
        return group_list(cli, argc, argv);
    if (strcmp(argv[0], "describe") == 0)
        return group_describe(cli, argc, argv);
    if (strcmp(argv[0], "delete") == 0)
        return group_delete(cli, argc, argv);
    if (strcmp(argv[0], "reset-offsets") == 0)
        return group_reset(cli, argc, argv);
    sf_cli_error(cli, "unknown sub-command 'group %s'; see 'streamflow help group'", argv[0]);
    return SF_CLI_EXIT_USAGE;
}
