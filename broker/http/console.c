/* The web console at / (console/index.html, app.js, style.css): the files are built into the
 * binary with the assembler's .incbin, so the broker serves them with nothing installed beside
 * it and nothing fetched from the internet. */
#include "config.h"

#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "broker/http/console-files.h" /* their checksums: rebuilt when they change */
#include "httpd.h"

#ifndef SF_CONSOLE_DIR
#error "SF_CONSOLE_DIR names the directory of the console's files"
#endif

#define ASSET(sym, file)                                                                      \
    __asm__(".section .rodata\n"                                                              \
            ".balign 16\n"                                                                    \
            "sf_console_" #sym ":\n"                                                          \
            ".incbin \"" SF_CONSOLE_DIR "/" file "\"\n"                                       \
            "sf_console_" #sym "_end:\n"                                                      \
            ".byte 0\n"                                                                       \
            ".previous\n");                                                                   \
    extern const char sf_console_##sym[], sf_console_##sym##_end[]

ASSET(index, "index.html");
ASSET(app, "app.js");
ASSET(style, "style.css");

static const struct {
    const char *path, *type;
    const char *start, *end;
} assets[] = {
    {"/", "text/html; charset=utf-8", sf_console_index, sf_console_index_end},
    {"/console/app.js", "text/javascript; charset=utf-8", sf_console_app, sf_console_app_end},
    {"/console/style.css", "text/css; charset=utf-8", sf_console_style, sf_console_style_end},
};

int sf_httpd_console(struct evhttp_request *req, const char *path) {
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    struct evbuffer *out;
    size_t i;
    for (i = 0; i < sizeof(assets) / sizeof(*assets) && strcmp(assets[i].path, path); i++)
        ;
    if (i == sizeof(assets) / sizeof(*assets))
        return 0;
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
        evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
        sf_httpd_error(req, 405, NULL, "the console is read with GET");
        return 1;
    }
    if (!(out = evbuffer_new())) {
        sf_httpd_error(req, 503, NULL, "out of memory");
        return 1;
    }
    evbuffer_add_reference(out, assets[i].start, (size_t)(assets[i].end - assets[i].start), NULL,
                           NULL);
    evhttp_add_header(h, "Content-Type", assets[i].type);
    evhttp_add_header(h, "Cache-Control", "no-cache");
    evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
    evhttp_send_reply(req, 200, "OK", out);
    evbuffer_free(out);
    return 1;
}
