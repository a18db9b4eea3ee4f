/* Unit tests for common/props (Java-properties files). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "props.h"

static char errbuf[512];

static sf_props_t *parse_ok(const char *text) {
    sf_props_t *props = NULL;
    int rc = sf_props_parse(text, strlen(text), "t.conf", &props, errbuf, sizeof(errbuf));
    ck_assert_msg(rc == SF_OK, "parse failed: %s", errbuf);
    ck_assert_ptr_nonnull(props);
    return props;
}

static int parse_err(const char *text, size_t len) {
    sf_props_t *props = (sf_props_t *)1;
    int rc;
    errbuf[0] = '\0';
    rc = sf_props_parse(text, len, "t.conf", &props, errbuf, sizeof(errbuf));
    ck_assert_int_ne(rc, SF_OK);
    ck_assert_ptr_null(props);
    ck_assert_msg(!strncmp(errbuf, "t.conf:", 7), "error does not name the file: %s", errbuf);
    return rc;
}

START_TEST(test_separators_and_comments) {
    sf_props_t *p = parse_ok("# comment\n"
                             "! also a comment\n"
                             "\n"
                             "   \t  \n"
                             "a=1\n"
                             "b : 2\n"
                             "c 3\n"
                             "  d\t=\t four  words  \n"
                             "e=x=y:z\n"
                             "f:=g\n");
    const sf_prop_t *pr;
    ck_assert_uint_eq(sf_props_count(p), 6);
    ck_assert_str_eq(sf_props_get(p, "a"), "1");
    ck_assert_str_eq(sf_props_get(p, "b"), "2");
    ck_assert_str_eq(sf_props_get(p, "c"), "3");
    ck_assert_str_eq(sf_props_get(p, "d"), "four  words");
    ck_assert_str_eq(sf_props_get(p, "e"), "x=y:z");
    /* Only one separator is consumed: the second belongs to the value (as in Java). */
    ck_assert_str_eq(sf_props_get(p, "f"), "=g");
    ck_assert_ptr_null(sf_props_get(p, "# comment"));
    ck_assert_ptr_null(sf_props_get(p, "zzz"));
    pr = sf_props_find(p, "d");
    ck_assert_int_eq(pr->line, 8);
    ck_assert_str_eq(sf_props_name(p), "t.conf");
    sf_props_free(p);
}
END_TEST

START_TEST(test_file_order_and_duplicates) {
    sf_props_t *p = parse_ok("x=1\ny=2\nz=3\ny=20\n");
    ck_assert_uint_eq(sf_props_count(p), 3);
    ck_assert_str_eq(sf_props_at(p, 0)->key, "x");
    ck_assert_str_eq(sf_props_at(p, 1)->key, "z");
    ck_assert_str_eq(sf_props_at(p, 2)->key, "y");
    ck_assert_str_eq(sf_props_at(p, 2)->value, "20");
    ck_assert_int_eq(sf_props_at(p, 2)->line, 4);
    ck_assert_ptr_null(sf_props_at(p, 3));
    /* The hash still finds every key after the removal. */
    ck_assert_str_eq(sf_props_get(p, "x"), "1");
    ck_assert_str_eq(sf_props_get(p, "z"), "3");
    ck_assert_str_eq(sf_props_get(p, "y"), "20");
    sf_props_free(p);
}
END_TEST

START_TEST(test_continuation_and_escapes) {
    sf_props_t *p = parse_ok("list=a,\\\n"
                             "     b,\\\n"
                             "\tc\n"
                             "after=1\n"
                             "esc=tab\\there\\nnl\\\\bs\n"
                             "key\\ with\\=sep=v\n"
                             "uni=\\u00e9\\u20AC\n"
                             "pair=\\uD83D\\uDE00\n"
                             "other=\\q\\#\n"
                             "trail=x\\ \n"
                             "evenbs=x\\\\\n"
                             "next=y\n");
    ck_assert_str_eq(sf_props_get(p, "list"), "a,b,c");
    ck_assert_int_eq(sf_props_find(p, "list")->line, 1);
    ck_assert_int_eq(sf_props_find(p, "after")->line, 4);
    ck_assert_str_eq(sf_props_get(p, "esc"), "tab\there\nnl\\bs");
    ck_assert_str_eq(sf_props_get(p, "key with=sep"), "v");
    ck_assert_str_eq(sf_props_get(p, "uni"), "\xc3\xa9\xe2\x82\xac");
    ck_assert_str_eq(sf_props_get(p, "pair"), "\xf0\x9f\x98\x80");
    ck_assert_str_eq(sf_props_get(p, "other"), "q#");
    ck_assert_str_eq(sf_props_get(p, "trail"), "x ");
    /* An even number of backslashes does not continue the line. */
    ck_assert_str_eq(sf_props_get(p, "evenbs"), "x\\");
    ck_assert_str_eq(sf_props_get(p, "next"), "y");
    sf_props_free(p);
}
END_TEST

START_TEST(test_line_endings) {
    sf_props_t *p = parse_ok("a=1\r\nb=2\rc=3\nd=4\\\r\n  5");
    ck_assert_str_eq(sf_props_get(p, "a"), "1");
    ck_assert_str_eq(sf_props_get(p, "b"), "2");
    ck_assert_str_eq(sf_props_get(p, "c"), "3");
    ck_assert_str_eq(sf_props_get(p, "d"), "45");
    ck_assert_int_eq(sf_props_find(p, "c")->line, 3);
    ck_assert_int_eq(sf_props_find(p, "d")->line, 4);
    sf_props_free(p);
}
END_TEST

START_TEST(test_comment_does_not_continue) {
    /* A backslash at the end of a comment does not join the next line, and '#' inside a
     * continuation is data. */
    sf_props_t *p = parse_ok("# note \\\na=1\nb=x\\\n#y\n");
    ck_assert_str_eq(sf_props_get(p, "a"), "1");
    ck_assert_str_eq(sf_props_get(p, "b"), "x#y");
    ck_assert_uint_eq(sf_props_count(p), 2);
    sf_props_free(p);
}
END_TEST

START_TEST(test_load_file) {
    char path[] = "/tmp/check_props_XXXXXX";
    int fd = mkstemp(path);
    sf_props_t *p = NULL;
    const char *text = "broker.id=3\nlog.dirs = /var/lib/x\n";
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    ck_assert_int_eq(sf_props_load(path, &p, errbuf, sizeof(errbuf)), SF_OK);
    ck_assert_str_eq(sf_props_get(p, "broker.id"), "3");
    ck_assert_str_eq(sf_props_get(p, "log.dirs"), "/var/lib/x");
    ck_assert_str_eq(sf_props_name(p), path);
    sf_props_free(p);
    unlink(path);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_empty) {
    sf_props_t *p = parse_ok("");
    ck_assert_uint_eq(sf_props_count(p), 0);
    ck_assert_ptr_null(sf_props_get(p, "a"));
    ck_assert_ptr_null(sf_props_at(p, 0));
    sf_props_free(p);
    p = parse_ok("\n\n# only comments\n   \n");
    ck_assert_uint_eq(sf_props_count(p), 0);
    sf_props_free(p);
    sf_props_free(NULL);
}
END_TEST

START_TEST(test_no_value) {
    sf_props_t *p = parse_ok("a\nb=\nc:   \nd = \\\n\n");
    ck_assert_uint_eq(sf_props_count(p), 4);
    ck_assert_str_eq(sf_props_get(p, "a"), "");
    ck_assert_str_eq(sf_props_get(p, "b"), "");
    ck_assert_str_eq(sf_props_get(p, "c"), "");
    ck_assert_str_eq(sf_props_get(p, "d"), "");
    sf_props_free(p);
    /* No newline at the end of the file, and a trailing backslash at EOF. */
    p = parse_ok("x=1");
    ck_assert_str_eq(sf_props_get(p, "x"), "1");
    sf_props_free(p);
    p = parse_ok("x=1\\");
    ck_assert_str_eq(sf_props_get(p, "x"), "1");
    sf_props_free(p);
}
END_TEST

START_TEST(test_long_lines) {
    size_t n = 1 << 20, i;
    char *text = malloc(n + 64), *o = text;
    sf_props_t *p;
    const char *v;
    o += sprintf(o, "big=");
    for (i = 0; i < n; i++)
        *o++ = (char)('a' + i % 26);
    o += sprintf(o, "\nsmall=1\n");
    *o = '\0';
    p = parse_ok(text);
    v = sf_props_get(p, "big");
    ck_assert_uint_eq(strlen(v), n);
    ck_assert_int_eq(v[n - 1], 'a' + (int)((n - 1) % 26));
    ck_assert_str_eq(sf_props_get(p, "small"), "1");
    sf_props_free(p);
    /* Many keys (hash growth) and an expansion-heavy escape line. */
    o = text;
    for (i = 0; i < 5000; i++)
        o += sprintf(o, "k%zu=%zu\n", i, i);
    *o = '\0';
    p = parse_ok(text);
    ck_assert_uint_eq(sf_props_count(p), 5000);
    ck_assert_str_eq(sf_props_get(p, "k4321"), "4321");
    sf_props_free(p);
    p = parse_ok("u=\\u00e9\\u00e9\\u00e9\\u00e9\\uD83D\\uDE00");
    ck_assert_str_eq(sf_props_get(p, "u"), "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80");
    sf_props_free(p);
    free(text);
}
END_TEST

START_TEST(test_bad_escapes) {
    ck_assert_int_eq(parse_err("a=\\u12\n", 7), SF_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(errbuf, "t.conf:1:"));
    ck_assert_ptr_nonnull(strstr(errbuf, "\\uXXXX"));
    parse_err("ok=1\nb=\\uZZZZ\n", 14);
    ck_assert_ptr_nonnull(strstr(errbuf, "t.conf:2:"));
    parse_err("a=\\u", 4);
    parse_err("a=\\u0000", 8);
    parse_err("a=\\uD83D", 8);         /* lone high surrogate */
    parse_err("a=\\uDE00x", 9);        /* lone low surrogate */
    parse_err("a=\\uD83D\\u0041", 14); /* high surrogate + non-surrogate */
}
END_TEST

START_TEST(test_bad_syntax) {
    ck_assert_int_eq(parse_err("=value\n", 7), SF_ERR_MALFORMED);
    ck_assert_ptr_nonnull(strstr(errbuf, "empty key"));
    parse_err("a=1\n: x\n", 8);
    ck_assert_ptr_nonnull(strstr(errbuf, "t.conf:2:"));
    parse_err("a=1\nb=x\0y\n", 10);
    ck_assert_ptr_nonnull(strstr(errbuf, "t.conf:2:"));
    ck_assert_ptr_nonnull(strstr(errbuf, "NUL"));
}
END_TEST

START_TEST(test_missing_file) {
    sf_props_t *p = (sf_props_t *)1;
    ck_assert_int_eq(sf_props_load("/nonexistent/dir/x.conf", &p, errbuf, sizeof(errbuf)),
                     SF_ERR_IO);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(errbuf, "/nonexistent/dir/x.conf"));
    ck_assert_ptr_nonnull(strstr(errbuf, "No such file"));
    ck_assert_int_eq(sf_props_load("/tmp", &p, errbuf, sizeof(errbuf)), SF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(errbuf, "directory"));
    /* A NULL errstr is allowed. */
    ck_assert_int_eq(sf_props_load("/nonexistent/x", &p, NULL, 0), SF_ERR_IO);
}
END_TEST

static Suite *props_suite(void) {
    Suite *s = suite_create("props");
    TCase *core = tcase_create("core"), *limits = tcase_create("limits");
    tcase_add_test(core, test_separators_and_comments);
    tcase_add_test(core, test_file_order_and_duplicates);
    tcase_add_test(core, test_continuation_and_escapes);
    tcase_add_test(core, test_line_endings);
    tcase_add_test(core, test_comment_does_not_continue);
    tcase_add_test(core, test_load_file);
    tcase_add_test(limits, test_empty);
    tcase_add_test(limits, test_no_value);
    tcase_add_test(limits, test_long_lines);
    tcase_add_test(limits, test_bad_escapes);
    tcase_add_test(limits, test_bad_syntax);
    tcase_add_test(limits, test_missing_file);
    suite_add_tcase(s, core);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(props_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
