/* streamflow transactions list|describe (after kafka-transactions.sh list|describe). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmdutil.h"

static void list_help(void) {
    fputs("Usage: streamflow transactions list [OPTIONS]\n"
          "\n"
          "List the transactional ids of the cluster (ListTransactions to every broker): id,\n"
          "producer id, state and the broker coordinating it.\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static int txn_list(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {SF_CLI_LONGOPTS, {NULL, 0, NULL, 0}};
    static const char *const headers[] = {"TRANSACTIONAL-ID", "PRODUCER-ID", "STATE",
                                          "COORDINATOR"};
    sf_txn_listing_t *v = NULL;
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
        sf_cli_error(cli, "unexpected argument '%s'; to show one use 'streamflow transactions "
                          "describe ID'", argv[optind]);
        return SF_CLI_EXIT_USAGE;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = sf_admin_list_transactions(a, cli->timeout_ms, &v, &n);
    sf_admin_destroy(a);
    if (rc != 0 && n == 0) {
        sf_txn_listings_destroy(v, n);
        return sf_cli_fail(cli, "listing transactions", rc);
    }
    if (rc != 0)
        sf_cli_fail(cli, "listing transactions (some brokers did not answer)", rc);
    if (cli->json) {
        json_t *arr = json_array();
        for (i = 0; i < n; i++)
            json_array_append_new(arr, json_pack("{s:s, s:I, s:s, s:i}", "transactional_id",
                                                 v[i].transactional_id, "producer_id",
                                                 (json_int_t)v[i].producer_id, "state",
                                                 v[i].state, "coordinator",
                                                 (int)v[i].coordinator));
        sf_cli_json_print(json_pack("{s:o}", "transactions", arr));
    } else {
        sf_cli_table_t *tab = sf_cli_table_new(4, headers);
        for (i = 0; i < n; i++) {
            char pid[24], coord[16];
            const char *cells[4] = {v[i].transactional_id, pid, v[i].state, coord};
            snprintf(pid, sizeof pid, "%lld", (long long)v[i].producer_id);
            snprintf(coord, sizeof coord, "%d", (int)v[i].coordinator);
            sf_cli_table_add(tab, cells);
        }
        sf_cli_table_print(tab, stdout);
        sf_cli_table_free(tab);
    }
    sf_txn_listings_destroy(v, n);
    return rc != 0 ? sf_cli_exit_code(rc) : SF_CLI_EXIT_OK;
}

static void describe_help(void) {
    fputs("Usage: streamflow transactions describe ID [OPTIONS]\n"
          "\n"
          "Show a transactional id as its transaction coordinator keeps it: producer id and\n"
          "epoch, state, timeout, when the open transaction started and its partitions.\n",
          stdout);
    sf_cli_print_common_options(stdout);
}

static void describe_print(const sf_txn_info_t *t) {
    size_t i;
    printf("TRANSACTIONAL-ID  %s\n", t->transactional_id);
    printf("COORDINATOR       %d\n", (int)t->coordinator);
    printf("PRODUCER-ID       %lld\n", (long long)t->producer_id);
    printf("PRODUCER-EPOCH    %d\n", (int)t->producer_epoch);
    printf("STATE             %s\n", t->state);
    printf("TIMEOUT-MS        %d\n", (int)t->timeout_ms);
    printf("START-TIME-MS     %lld\n", (long long)t->start_ms);
    printf("PARTITIONS        ");
    for (i = 0; i < t->partition_count; i++)
        printf("%s%s-%d", i ? "," : "", t->partitions[i].topic, (int)t->partitions[i].partition);
    printf("%s\n", t->partition_count ? "" : "-");
}

static json_t *describe_json(const sf_txn_info_t *t) {
    json_t *parts = json_array();
    size_t i;
    for (i = 0; i < t->partition_count; i++)
        json_array_append_new(parts, json_pack("{s:s, s:i}", "topic", t->partitions[i].topic,
                                               "partition", (int)t->partitions[i].partition));
    return json_pack("{s:s, s:i, s:I, s:i, s:s, s:i, s:I, s:o}", "transactional_id",
                     t->transactional_id, "coordinator", (int)t->coordinator, "producer_id",
                     (json_int_t)t->producer_id, "producer_epoch", (int)t->producer_epoch,
                     "state", t->state, "timeout_ms", (int)t->timeout_ms, "start_time_ms",
                     (json_int_t)t->start_ms, "partitions", parts);
}

static int txn_describe(sf_cli_t *cli, int argc, char **argv) {
    static const struct option longopts[] = {SF_CLI_LONGOPTS, {NULL, 0, NULL, 0}};
    sf_txn_info_t *t = NULL;
    sf_admin_t *a;
    char what[320];
    int opt, rc;

    optind = 0;
    while ((opt = sf_cli_getopt(cli, argc, argv, SF_CLI_SHORTOPTS, longopts)) != -1) {
        if (opt == 'h') {
            describe_help();
            return SF_CLI_EXIT_OK;
        }
        return SF_CLI_EXIT_USAGE;
    }
    if (optind + 1 != argc) {
        sf_cli_error(cli, optind < argc ? "give one transactional id"
                                        : "missing the transactional id; usage: streamflow "
                                          "transactions describe ID");
        return SF_CLI_EXIT_USAGE;
    }
    if ((a = sf_cli_admin(cli)) == NULL)
        return SF_CLI_EXIT_USAGE;
    rc = sf_admin_describe_transaction(a, argv[optind], cli->timeout_ms, &t);
    sf_admin_destroy(a);
    if (rc != 0) {
        snprintf(what, sizeof what, "describing transactional id '%s'", argv[optind]);
        return sf_cli_fail(cli, what, rc);
    }
    if (cli->json)
        sf_cli_json_print(describe_json(t));
    else
        describe_print(t);
    sf_txn_info_destroy(t);
    return SF_CLI_EXIT_OK;
}

int sf_cmd_transactions(sf_cli_t *cli, int argc, char **argv) {
    if (argc < 1) {
        sf_cli_error(cli, "missing the sub-command (list, describe)");
        return SF_CLI_EXIT_USAGE;
    }
    if (strcmp(argv[0], "list") == 0)
        return txn_list(cli, argc, argv);
    if (strcmp(argv[0], "describe") == 0)
        return txn_describe(cli, argc, argv);
    sf_cli_error(cli, "unknown sub-command 'transactions %s'; see 'streamflow help transactions'",
                 argv[0]);
    return SF_CLI_EXIT_USAGE;
}
