/* OpenSSL context helpers. */
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "err.h"

/* TLS 1.2 suites: forward secrecy and AEAD only (Mozilla "intermediate"). TLS 1.3 uses
 * OpenSSL's default suites, which are all of that kind. */
#define SF_TLS12_CIPHERS                                                                           \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                                   \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                                   \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"                                   \
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384"

char *sf_tls_error_string(unsigned long e, char *buf, size_t size) {
    const char *reason = ERR_reason_error_string(e);
    if (reason)
        snprintf(buf, size, "%s", reason);
    else
        ERR_error_string_n(e, buf, size);
    return buf;
}

char *sf_tls_errors(char *buf, size_t size) {
    unsigned long e;
    size_t n = 0;
    if (!size)
        return buf;
    buf[0] = '\0';
    while ((e = ERR_get_error()) != 0) {
        char one[256];
        sf_tls_error_string(e, one, sizeof(one));
        /* OpenSSL repeats reasons as an error climbs its layers; keep each once. */
        if (n + 3 < size && !strstr(buf, one)) {
            int w = snprintf(buf + n, size - n, "%s%s", n ? "; " : "", one);
            if (w > 0)
                n += (size_t)w < size - n ? (size_t)w : size - n - 1;
        }
    }
    if (!n)
        snprintf(buf, size, "no OpenSSL error reported");
    return buf;
}

static int password_cb(char *buf, int size, int rwflag, void *userdata) {
    const char *pw = userdata;
    size_t len;
    (void)rwflag;
    if (!pw || size <= 0)
        return 0;
    len = strlen(pw);
    if (len > (size_t)size)
        len = (size_t)size;
    memcpy(buf, pw, len);
    return (int)len;
}

/* A clear message for a missing or unreadable file (OpenSSL's is vague). */
static int readable(const char *path, char *errstr, size_t errstr_size) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        sf_errf(errstr, errstr_size, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    fclose(fp);
    return 0;
}

/* Whether @path holds a PEM private key block (any type: PKCS#8, RSA, EC, encrypted). */
static int has_private_key(const char *path) {
    FILE *fp = fopen(path, "r");
    char line[256];
    int found = 0;
    if (!fp)
        return 0;
    while (!found && fgets(line, sizeof(line), fp))
        found = !strncmp(line, "-----BEGIN ", 11) && strstr(line, "PRIVATE KEY-----") != NULL;
    fclose(fp);
    return found;
}

/* Settings common to both sides. */
static int ctx_common(SSL_CTX *ctx) {
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION))
        return -1;
    if (!SSL_CTX_set_cipher_list(ctx, SF_TLS12_CIPHERS))
        return -1;
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    /* libevent hands OpenSSL the evbuffer's memory, which may move between retries, and writes
     * partial chunks; idle connections give their buffers back. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    return 0;
}

/* Load a certificate chain (and the private key from @key_pem, or the same file) into @ctx. */
static int load_identity(SSL_CTX *ctx, const char *cert_pem, const char *key_pem,
                         const char *key_password, char *errstr, size_t errstr_size) {
    char reasons[512];
    if (readable(cert_pem, errstr, errstr_size) < 0 ||
        (key_pem && readable(key_pem, errstr, errstr_size) < 0))
        return -1;
    /* Always install the callback: without one OpenSSL would prompt on the terminal for the
     * passphrase of an encrypted key. */
    SSL_CTX_set_default_passwd_cb(ctx, password_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)key_password);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_pem) != 1) {
        sf_tls_errors(reasons, sizeof(reasons));
        sf_errf(errstr, errstr_size, "cannot load the certificate chain from %s: %s%s", cert_pem,
                reasons,
                strstr(reasons, "no start line") ? " (no PEM \"CERTIFICATE\" block found)" : "");
        return -1;
    }
    if (!has_private_key(key_pem ? key_pem : cert_pem)) {
        sf_errf(errstr, errstr_size, "no private key (a PEM \"PRIVATE KEY\" block) in %s%s",
                key_pem ? key_pem : cert_pem,
                key_pem ? "" : " (it must hold the certificate chain and then the key)");
        return -1;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key_pem ? key_pem : cert_pem, SSL_FILETYPE_PEM) != 1) {
        const char *hint = "";
        sf_tls_errors(reasons, sizeof(reasons));
        if (strstr(reasons, "bad decrypt") || strstr(reasons, "bad password read"))
            hint = key_password ? " (wrong password?)"
                                : " (the key is encrypted and no password was given)";
        else if (strstr(reasons, "key values mismatch"))
            hint = " (the private key does not belong to the first certificate)";
        sf_errf(errstr, errstr_size, "cannot load the private key from %s: %s%s",
                key_pem ? key_pem : cert_pem, reasons, hint);
        return -1;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        sf_errf(errstr, errstr_size, "the private key in %s does not match the certificate in %s: %s",
                key_pem ? key_pem : cert_pem, cert_pem, sf_tls_errors(reasons, sizeof(reasons)));
        return -1;
    }
    /* The password is only needed while loading; do not keep a pointer to the caller's string. */
    SSL_CTX_set_default_passwd_cb(ctx, NULL);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    return 0;
}

SSL_CTX *sf_tls_server_ctx_new(const char *keystore_pem, const char *key_password,
                               const char *truststore_pem, int client_auth, char *errstr,
                               size_t errstr_size) {
    static const unsigned char sid_ctx[] = "streamflowd";
    char reasons[512];
    SSL_CTX *ctx;

    ERR_clear_error();
    if (!keystore_pem) {
        sf_errf(errstr, errstr_size, "a TLS server needs a keystore (certificate chain and key)");
        return NULL;
    }
    if (client_auth < SF_TLS_CLIENT_AUTH_NONE || client_auth > SF_TLS_CLIENT_AUTH_REQUIRED) {
        sf_errf(errstr, errstr_size, "invalid client authentication mode %d", client_auth);
        return NULL;
    }
    if (client_auth != SF_TLS_CLIENT_AUTH_NONE && !truststore_pem) {
        sf_errf(errstr, errstr_size,
                "verifying client certificates needs a truststore (CA bundle)");
        return NULL;
    }
    ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || ctx_common(ctx) < 0) {
        sf_errf(errstr, errstr_size, "cannot create a TLS context: %s",
                sf_tls_errors(reasons, sizeof(reasons)));
        goto err;
    }
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
    /* Clients usually close without close_notify; Kafka frames carry their own lengths, so a
     * truncated stream is detected anyway. Treat it as a plain EOF, not a TLS error. */
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
    /* Session resumption with client certificates requires a session id context. */
    SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1);
    if (load_identity(ctx, keystore_pem, NULL, key_password, errstr, errstr_size) < 0)
        goto err;
    if (truststore_pem) {
        STACK_OF(X509_NAME) *names;
        if (readable(truststore_pem, errstr, errstr_size) < 0)
            goto err;
        if (SSL_CTX_load_verify_locations(ctx, truststore_pem, NULL) != 1) {
            sf_errf(errstr, errstr_size, "cannot load the CA certificates from %s: %s",
                    truststore_pem, sf_tls_errors(reasons, sizeof(reasons)));
            goto err;
        }
        /* Tell clients which CAs we accept (helps clients holding several certificates). */
        names = SSL_load_client_CA_file(truststore_pem);
        if (names)
            SSL_CTX_set_client_CA_list(ctx, names);
        ERR_clear_error();
    }
    switch (client_auth) {
    case SF_TLS_CLIENT_AUTH_REQUIRED:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        break;
    case SF_TLS_CLIENT_AUTH_REQUESTED:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        break;
    default:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
        break;
    }
    return ctx;

err:
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return NULL;
}

SSL_CTX *sf_tls_client_ctx_new(const char *ca_pem, const char *cert_pem, const char *key_pem,
                               const char *key_password, char *errstr, size_t errstr_size) {
    char reasons[512];
    SSL_CTX *ctx;

    ERR_clear_error();
    ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx || ctx_common(ctx) < 0) {
        sf_errf(errstr, errstr_size, "cannot create a TLS context: %s",
                sf_tls_errors(reasons, sizeof(reasons)));
        goto err;
    }
    if (ca_pem) {
        if (readable(ca_pem, errstr, errstr_size) < 0)
            goto err;
        if (SSL_CTX_load_verify_locations(ctx, ca_pem, NULL) != 1) {
            sf_errf(errstr, errstr_size, "cannot load the CA certificates from %s: %s", ca_pem,
                    sf_tls_errors(reasons, sizeof(reasons)));
            goto err;
        }
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        sf_errf(errstr, errstr_size, "cannot load the system CA certificates: %s",
                sf_tls_errors(reasons, sizeof(reasons)));
        goto err;
    }
    if (cert_pem && load_identity(ctx, cert_pem, key_pem, key_password, errstr, errstr_size) < 0)
        goto err;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;

err:
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return NULL;
}

int sf_tls_client_set_host(SSL *ssl, const char *host) {
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    unsigned char addr[16];
    char bare[INET6_ADDRSTRLEN];
    size_t len = strlen(host);

    /* "[::1]" -> "::1" */
    if (len > 2 && host[0] == '[' && host[len - 1] == ']' && len - 2 < sizeof(bare)) {
        memcpy(bare, host + 1, len - 2);
        bare[len - 2] = '\0';
        host = bare;
    }
    if (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1) {
        /* No SNI for IP addresses (RFC 6066); check the certificate's IP SAN. */
        return X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1 ? SF_OK : SF_ERR_INVALID;
    }
    if (SSL_set_tlsext_host_name(ssl, host) != 1)
        return SF_ERR_INVALID;
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return X509_VERIFY_PARAM_set1_host(param, host, 0) == 1 ? SF_OK : SF_ERR_NOMEM;
}
