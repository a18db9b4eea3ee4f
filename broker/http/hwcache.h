/* The high watermarks of partitions held on other brokers that the consumer groups
 * coordinated here have committed offsets on, so that /metrics and /health/ready give the lag
 * of every partition of those groups, not only of the partitions held here. Refreshed with
 * ListOffsets to the leaders through the gateway's admin client; everything here runs on the
 * metadata thread. */
#ifndef SF_HWCACHE_H
#define SF_HWCACHE_H

#include <stdint.h>

struct sf_broker;
struct sf_gw;
struct sf_view;

typedef struct sf_hwcache sf_hwcache_t;

/* An empty cache that refreshes through @gw (borrowed; freed after the cache). NULL on no
 * memory. */
sf_hwcache_t *sf_hwcache_new(struct sf_gw *gw);
void sf_hwcache_free(sf_hwcache_t *c);

/* The high watermark of @topic / @partition as last read, or -1. */
int64_t sf_hwcache_get(const sf_hwcache_t *c, const char *topic, int32_t partition);

/* Read again the high watermarks of the partitions that @b's groups have offsets on and @v
 * does not hold (nothing when none, or while the last read is in flight). */
void sf_hwcache_refresh(sf_hwcache_t *c, struct sf_broker *b, const struct sf_view *v);

#endif
