/* Replication quotas (see throttle.h). */
#include "throttle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sf_throttle_init(sf_throttle_t *t) {
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    t->rate = INT64_MAX;
}

void sf_throttle_destroy(sf_throttle_t *t) {
    pthread_mutex_destroy(&t->lock);
}

void sf_throttle_set_rate(sf_throttle_t *t, int64_t rate) {
    pthread_mutex_lock(&t->lock);
    if (rate != t->rate) {
        t->rate = rate < 0 ? INT64_MAX : rate;
        t->tokens = (double)t->rate;
        t->last_ms = 0;
    }
    pthread_mutex_unlock(&t->lock);
}

/* Add what the rate gave since the last look, up to one second's worth (lock held). */
static void refill(sf_throttle_t *t, int64_t now_ms) {
    if (t->last_ms && now_ms > t->last_ms) {
        t->tokens += (double)t->rate * (double)(now_ms - t->last_ms) / 1000.0;
        if (t->tokens > (double)t->rate)
            t->tokens = (double)t->rate;
    }
    if (now_ms > t->last_ms)
        t->last_ms = now_ms;
}

int sf_throttle_exceeded(sf_throttle_t *t, int64_t now_ms) {
    int out;
    pthread_mutex_lock(&t->lock);
    if (t->rate == INT64_MAX) {
        out = 0;
    } else {
        refill(t, now_ms);
        out = t->tokens < 0;
    }
    pthread_mutex_unlock(&t->lock);
    return out;
}

void sf_throttle_record(sf_throttle_t *t, int64_t bytes, int64_t now_ms) {
    pthread_mutex_lock(&t->lock);
    if (t->rate != INT64_MAX) {
        refill(t, now_ms);
        t->tokens -= (double)bytes;
    }
    pthread_mutex_unlock(&t->lock);
}

int64_t sf_throttle_rate(const sf_topiccfg_ctx_t *ctx, const char *key) {
    int syn;
    const sf_topiccfg_def_t *def = sf_topiccfg_find_synonym(key, &syn);
    sf_topiccfg_value_t v;
    char *end;
    long long rate;
    if (!def || sf_topiccfg_resolve(ctx, NULL, def, &v, 1) < 1)
        return INT64_MAX;
    rate = strtoll(v.value, &end, 10);
    return end == v.value || *end || rate < 0 ? INT64_MAX : (int64_t)rate;
}

/* 1 if the item of @list from @p to the next comma, spaces around it left out, is @item. */
static int item_is(const char *p, const char *end, const char *item) {
    size_t n = strlen(item);
    while (p < end && *p == ' ')
        p++;
    while (end > p && end[-1] == ' ')
        end--;
    return (size_t)(end - p) == n && !memcmp(p, item, n);
}

int sf_throttle_listed(const sf_topiccfg_ctx_t *ctx, const sf_cluster_topic_t *t,
                       const char *key, int32_t partition, int32_t broker) {
    const sf_topiccfg_def_t *def = sf_topiccfg_find(key);
    sf_topiccfg_value_t v;
    const char *p, *end;
    char item[32];
    if (!def || sf_topiccfg_resolve(ctx, t, def, &v, 1) < 1 || !*v.value)
        return 0;
    snprintf(item, sizeof(item), "%" PRId32 ":%" PRId32, partition, broker);
    for (p = v.value;; p = end + 1) {
        end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if (item_is(p, end, "*") || item_is(p, end, item))
            return 1;
        if (!*end)
            return 0;
    }
}
