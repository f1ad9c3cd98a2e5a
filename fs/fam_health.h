/*
 * fam_health.h - the root's health and metrics files: counts of the
 * whole instance, for a probe or a scraper.
 */
#ifndef SFS_FAM_HEALTH_H
#define SFS_FAM_HEALTH_H

#include "tree.h"

/* Their types (their numbers never move: fs/tree.h). */
#define FT_BLOCK_HEALTH 34
enum {
	FT_HEALTH = FT_BLOCK_HEALTH,
	FT_METRICS,
};

/* health: "ok" and key value lines; metrics: the Prometheus text
 * exposition format. Both are generated text with no side effects. */
extern const struct fops fam_health_ops;
extern const struct fops fam_metrics_ops;

#endif
