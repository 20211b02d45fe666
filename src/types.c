/* The type table, generated from types.inc. */
#include <stddef.h>

#include "bq.h"

struct bq_type_row {
  const char *name;
  short block_size, type_size, vec_dot, flags;
};

#define BQ_TYPE(E, name, id, bs, ts, vd, flags) [id] = {#name, bs, ts, vd, flags},
static const struct bq_type_row bq_types[] = {
#include "types.inc"
};
#undef BQ_TYPE

#define BQ_NTYPES ((int)(sizeof(bq_types) / sizeof(bq_types[0])))

static const struct bq_type_row *row(int type) {
  if (type < 0 || type >= BQ_NTYPES || bq_types[type].name == NULL) return NULL;
  return &bq_types[type];
}

int bq_type_block_size(int type) { return row(type) ? row(type)->block_size : 0; }
int bq_type_size(int type) { return row(type) ? row(type)->type_size : 0; }
int bq_type_vec_dot(int type) { return row(type) ? row(type)->vec_dot : -1; }
int bq_type_flags(int type) { return row(type) ? row(type)->flags : 0; }
const char *bq_type_name(int type) { return row(type) ? row(type)->name : NULL; }
int bq_type_max_id(void) { return BQ_NTYPES - 1; }
