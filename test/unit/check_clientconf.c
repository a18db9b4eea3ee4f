/* Unit tests for client/clientconf: the client configuration keys, values and files. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "clientconf.h"

START_TEST(test_defaults) {
    sf_conf_t *conf = sf_conf_new();
    sf_clientconf_t *cc;
    char err[256];
    ck_assert_ptr_nonnull(conf);
    ck_assert_str_eq(sf_conf_get(conf, "acks"), "all");
    ck_assert_str_eq(sf_conf_get(conf, "linger.ms"), "5");
    ck_assert_ptr_null(sf_conf_get(conf, "no.such.key"));
    /* bootstrap.servers is required */
    ck_assert_ptr_null(sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "bootstrap.servers"));
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", "127.0.0.1:9092", err, sizeof(err)),
                     SF_OK);
    cc = sf_clientconf_parse(conf, err, sizeof(err));
    ck_assert_ptr_nonnull(cc);
    ck_assert_int_eq(cc->acks, -1);
    ck_assert_int_eq(cc->linger_ms, 5);
    ck_assert_int_eq(cc->batch_size, 16384);
    ck_assert_int_eq((int)cc->compression, (int)SF_COMPRESS_NONE);
    ck_assert_int_eq(cc->check_crcs, 1);
    ck_assert_int_eq(cc->auto_offset_reset, SF_OFFSET_END);
    ck_assert(cc->buffer_memory == 33554432);
    ck_assert(cc->queued_max_bytes == 65536LL * 1024);
    ck_assert_int_eq(cc->security_ssl, 0);
    ck_assert_int_eq(cc->ssl_verify_hostname, 1);
    ck_assert_str_eq(cc->client_id, "streamflow");
    ck_assert_ptr_null(cc->ssl_ca_location);
    ck_assert_int_eq(cc->enable_idempotence, 1);
    sf_clientconf_free(cc);
    sf_conf_destroy(conf);
}
END_TEST

/* enable.idempotence as the Java client has it: on by default, off when acks or retries
 * conflict, an error when set explicitly with them. */
START_TEST(test_idempotence_conflicts) {
    sf_conf_t *conf = sf_conf_new();
    sf_clientconf_t *cc;
    char err[256];
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", "x:1", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "acks", "1", err, sizeof(err)), SF_OK);
    ck_assert_ptr_nonnull(cc = sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_int_eq(cc->enable_idempotence, 0);
    sf_clientconf_free(cc);
    ck_assert_int_eq(sf_conf_set(conf, "enable.idempotence", "true", err, sizeof(err)), SF_OK);
    ck_assert_ptr_null(sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "enable.idempotence"));
    ck_assert_int_eq(sf_conf_set(conf, "acks", "all", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "retries", "0", err, sizeof(err)), SF_OK);
    ck_assert_ptr_null(sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_int_eq(sf_conf_set(conf, "enable.idempotence", "false", err, sizeof(err)), SF_OK);
    ck_assert_ptr_nonnull(cc = sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_int_eq(cc->enable_idempotence, 0);
    sf_clientconf_free(cc);
    sf_conf_destroy(conf);
}
END_TEST

/* A transactional producer is idempotent: transactional.id fails with acks other than all,
 * no retries or enable.idempotence=false, instead of turning idempotence off. */
START_TEST(test_transactional_conflicts) {
    sf_conf_t *conf = sf_conf_new();
    sf_clientconf_t *cc;
    char err[256];
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", "x:1", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "transactional.id", "t-1", err, sizeof(err)), SF_OK);
    ck_assert_ptr_nonnull(cc = sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_str_eq(cc->transactional_id, "t-1");
    ck_assert_int_eq(cc->transaction_timeout_ms, 60000);
    ck_assert_int_eq(cc->enable_idempotence, 1);
    sf_clientconf_free(cc);
    ck_assert_int_eq(sf_conf_set(conf, "acks", "1", err, sizeof(err)), SF_OK);
    ck_assert_ptr_null(sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "transactional.id"));
    ck_assert_int_eq(sf_conf_set(conf, "acks", "all", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "enable.idempotence", "false", err, sizeof(err)), SF_OK);
    ck_assert_ptr_null(sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "transactional.id"));
    sf_conf_destroy(conf);
}
END_TEST

START_TEST(test_values) {
    sf_conf_t *conf = sf_conf_new(), *dup;
    sf_clientconf_t *cc;
    char err[256];
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", "a:1,b:2", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "acks", "1", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "compression.type", "zstd", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "security.protocol", "ssl", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "ssl.ca.location", "/ca.pem", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "auto.offset.reset", "earliest", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "check.crcs", "false", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "group.id", "ignored", err, sizeof(err)), SF_OK);
    /* the alias and the Kafka name are one key */
    ck_assert_str_eq(sf_conf_get(conf, "ssl.truststore.location"), "/ca.pem");
    dup = sf_conf_dup(conf);
    sf_conf_destroy(conf);
    cc = sf_clientconf_parse(dup, err, sizeof(err));
    ck_assert_ptr_nonnull(cc);
    ck_assert_int_eq(cc->acks, 1);
    ck_assert_int_eq((int)cc->compression, (int)SF_COMPRESS_ZSTD);
    ck_assert_int_eq(cc->security_ssl, 1);
    ck_assert_str_eq(cc->ssl_ca_location, "/ca.pem");
    ck_assert_int_eq(cc->auto_offset_reset, SF_OFFSET_BEGINNING);
    ck_assert_int_eq(cc->check_crcs, 0);
    sf_clientconf_free(cc);
    sf_conf_destroy(dup);
}
END_TEST

START_TEST(test_errors) {
    static const struct {
        const char *key, *value, *want;
        int rc;
    } bad[] = {
        {"no.such.key", "1", "no.such.key: unknown", SF_ERROR_NOTFOUND},
        {"acks", "2", "acks: invalid value '2'", SF_ERROR_INVALID},
        {"linger.ms", "-1", "linger.ms: invalid value", SF_ERROR_INVALID},
        {"linger.ms", "5ms", "linger.ms: invalid value", SF_ERROR_INVALID},
        {"batch.size", "", "batch.size: invalid value", SF_ERROR_INVALID},
        {"compression.type", "brotli", "compression.type: invalid value 'brotli'",
         SF_ERROR_INVALID},
        {"check.crcs", "yes", "check.crcs: invalid value 'yes'", SF_ERROR_INVALID},
        {"buffer.memory", "99999999999999999999", "buffer.memory: invalid", SF_ERROR_INVALID},
    };
    sf_conf_t *conf = sf_conf_new();
    char err[256];
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_int_eq(sf_conf_set(conf, bad[i].key, bad[i].value, err, sizeof(err)), bad[i].rc);
        ck_assert_msg(strstr(err, bad[i].want) != NULL, "%s=%s: '%s'", bad[i].key, bad[i].value,
                      err);
    }
    /* a rejected value leaves the previous one */
    ck_assert_str_eq(sf_conf_get(conf, "acks"), "all");
    ck_assert_int_eq(sf_conf_set(conf, "bootstrap.servers", "x:1", err, sizeof(err)), SF_OK);
    ck_assert_int_eq(sf_conf_set(conf, "ssl.key.location", "/k.pem", err, sizeof(err)), SF_OK);
    ck_assert_ptr_null(sf_clientconf_parse(conf, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "ssl.key.location"));
    sf_conf_destroy(conf);
}
END_TEST

START_TEST(test_file) {
    char path[] = "/tmp/check_clientconf.XXXXXX", err[512];
    sf_conf_t *conf = sf_conf_new();
    FILE *f;
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fputs("# TLS settings\nsecurity.protocol=SSL\nssl.truststore.location = /etc/ca.pem\n"
          "request.timeout.ms=abc\n",
          f);
    fclose(f);
    ck_assert_int_eq(sf_conf_load_file(conf, path, err, sizeof(err)), SF_ERROR_INVALID);
    ck_assert_ptr_nonnull(strstr(err, ":4: request.timeout.ms"));
    ck_assert_str_eq(sf_conf_get(conf, "security.protocol"), "SSL");
    ck_assert_str_eq(sf_conf_get(conf, "ssl.truststore.location"), "/etc/ca.pem");
    unlink(path);
    ck_assert_int_eq(sf_conf_load_file(conf, path, err, sizeof(err)), SF_ERROR_IO);
    ck_assert_ptr_nonnull(strstr(err, path));
    sf_conf_destroy(conf);
}
END_TEST

START_TEST(test_error_names) {
    ck_assert_str_eq(sf_error_name(3), "UNKNOWN_TOPIC_OR_PARTITION");
    ck_assert_str_eq(sf_error_name(SF_ERROR_TIMED_OUT), "TIMED_OUT");
    ck_assert_str_eq(sf_error_name(12345), "UNKNOWN");
    ck_assert_int_eq(sf_error_retriable(6), 1);
    ck_assert_int_eq(sf_error_retriable(36), 0);
    ck_assert_int_eq(sf_error_retriable(SF_ERROR_TRANSPORT), 1);
    ck_assert_int_eq(sf_error_retriable(SF_ERROR_DESTROYED), 0);
    ck_assert_ptr_nonnull(sf_error_str(-999));
    /* broker codes: only positive ones pass through, negative ones are never ours */
    ck_assert_int_eq(sf_client_kerr(0), 0);
    ck_assert_int_eq(sf_client_kerr(36), 36);
    ck_assert_int_eq(sf_client_kerr(-1), SF_ERROR_UNKNOWN_SERVER);
    ck_assert_int_eq(sf_client_kerr(-6), SF_ERROR_UNKNOWN_SERVER);
    ck_assert_ptr_nonnull(sf_version());
}
END_TEST

static Suite *clientconf_suite(void) {
    Suite *s = suite_create("clientconf");
    TCase *core = tcase_create("core");
    TCase *limits = tcase_create("limits");
    tcase_add_test(core, test_defaults);
    tcase_add_test(core, test_idempotence_conflicts);
    tcase_add_test(core, test_transactional_conflicts);
    tcase_add_test(core, test_values);
    tcase_add_test(core, test_file);
    tcase_add_test(core, test_error_names);
    tcase_add_test(limits, test_errors);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(clientconf_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
