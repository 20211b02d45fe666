/* The grid types' quantizer search tables (bq.h: bq_quant_tables_*): which tables a type's
 * quantizer uses, built into memory the caller owns. Each family of tables (src/imat/<family>.c)
 * describes itself with a bq_tables_family (imat.h); this file only finds a type's family. */
#include "iq2.h"
#include "iq3.h"

static const bq_tables_family *family(int type) {
  switch (type) {
    case BQ_TYPE_IQ2_XXS:
      return &bq_iq2xxs_family;
    case BQ_TYPE_IQ2_XS:
      return &bq_iq2xs_family;
    case BQ_TYPE_IQ2_S:
      return &bq_iq2s_family;
    case BQ_TYPE_IQ1_S:
    case BQ_TYPE_IQ1_M:
      return &bq_iq1s_family; /* ggml's one set of tables for both */
    case BQ_TYPE_IQ3_XXS:
      return &bq_iq3xxs_family;
    case BQ_TYPE_IQ3_S:
      return &bq_iq3s_family;
    default:
      return NULL;
  }
}

size_t bq_quant_tables_bytes(int type) {
  const bq_tables_family *f = family(type);
  return f ? f->bytes : 0;
}

int bq_quant_tables_init(int type, void *mem) {
  const bq_tables_family *f = family(type);
  if (!f) return BQ_OK;
  if (!mem || (uintptr_t)mem % 64) return BQ_EINVAL;
  const int status = f->build(mem);
  if (status == BQ_OK) *f->tables = mem;
  return status;
}

int bq_quant_tables_ready(int type) {
  const bq_tables_family *f = family(type);
  return !f || *f->tables != NULL;
}

void bq_quant_tables_drop(int type) {
  const bq_tables_family *f = family(type);
  if (f) *f->tables = NULL;
}
