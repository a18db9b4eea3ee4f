/* OpenSSL context helpers for the broker (server side) and the client library.
 *
 * Contexts require TLS 1.2 or later, use forward-secret AEAD cipher suites for TLS 1.2 (TLS 1.3
 * suites are OpenSSL's defaults), disable compression and renegotiation, and set the modes
 * libevent's OpenSSL bufferevents need (partial writes, moving write buffers). Errors are one
 * sentence naming the file and the OpenSSL reason. */
#ifndef SF_TLS_H
#define SF_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

/* Client-certificate policy of a server context (Kafka's ssl.client.auth). */
#define SF_TLS_CLIENT_AUTH_NONE 0
#define SF_TLS_CLIENT_AUTH_REQUESTED 1
#define SF_TLS_CLIENT_AUTH_REQUIRED 2

/* A server context.
 * @keystore_pem    PEM file: the server certificate, then its chain (intermediates), and the
 *                  private key (any order of the key relative to the certificates). Required.
 * @key_password    passphrase of an encrypted private key, or NULL.
 * @truststore_pem  PEM CA bundle used to verify client certificates, or NULL (then
 *                  @client_auth must be NONE).
 * @client_auth     SF_TLS_CLIENT_AUTH_*.
 * Returns a new context (the caller owns it: SSL_CTX_free), or NULL with a message in @errstr. */
SSL_CTX *sf_tls_server_ctx_new(const char *keystore_pem, const char *key_password,
                               const char *truststore_pem, int client_auth, char *errstr,
                               size_t errstr_size);

/* A client context.
 * @ca_pem        PEM CA bundle to verify the server, or NULL for the system's default CAs.
 * @cert_pem      PEM client certificate (+ chain), or NULL for none.
 * @key_pem       PEM private key of @cert_pem, or NULL to read it from @cert_pem.
 * @key_password  passphrase of an encrypted key, or NULL.
 * The context verifies the server certificate (SSL_VERIFY_PEER); call sf_tls_client_set_host on
 * each connection to check the name too. Returns a new context (caller owns) or NULL + @errstr. */
SSL_CTX *sf_tls_client_ctx_new(const char *ca_pem, const char *cert_pem, const char *key_pem,
                               const char *key_password, char *errstr, size_t errstr_size);

/* Set SNI (for host names) and the expected peer name or IP address (@host, borrowed) on a client
 * connection. Returns SF_OK or SF_ERR_NOMEM / SF_ERR_INVALID. */
int sf_tls_client_set_host(SSL *ssl, const char *host);

/* Drain OpenSSL's error queue of this thread into @buf as "reason; reason" (at most @size bytes,
 * always NUL-terminated); "no OpenSSL error reported" when the queue is empty. Returns @buf. */
char *sf_tls_errors(char *buf, size_t size);

/* Describe one OpenSSL error code @e (as returned by ERR_get_error or
 * bufferevent_get_openssl_error) into @buf. Returns @buf. */
char *sf_tls_error_string(unsigned long e, char *buf, size_t size);

#endif
