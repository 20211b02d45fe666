/* The type table, generated from types.inc; what each type can do, from kernels.inc; and the
 * block layouts, from fields.inc and the block structs. */
#include "internal.h"

struct bq_type_row {
  const char *name;
  short block_size, type_size, vec_dot, dot_step, sub_block, requires_imatrix;
};

#define BQ_TYPE(E, name, id, bs, ts, vd, step, sub, scale, imat) \
  [id] = {#name, bs, ts, vd, step, sub, imat},
static const struct bq_type_row bq_types[] = {
#include "types.inc"
};
#undef BQ_TYPE

#define BQ_NTYPES ((int)(sizeof(bq_types) / sizeof(bq_types[0])))

static const struct bq_type_row *row(int type) {
  if (type < 0 || type >= BQ_NTYPES || bq_types[type].name == NULL) return NULL;
  return &bq_types[type];
}

/* The operations of a type: one flag per kernel of kernels.inc that works on it. */
static int kernel_flags(int type) {
  int f = 0;
  const int vd = bq_types[type].vec_dot;
#define BQ_QUANTIZE(t, isa) f |= type == BQ_ID_##t ? BQ_F_QUANTIZE : 0;
#define BQ_QUANTIZE_ROWS(t, isa) f |= type == BQ_ID_##t ? BQ_F_QUANTIZE_ROWS : 0;
#define BQ_DEQUANTIZE(t, isa) f |= type == BQ_ID_##t ? BQ_F_DEQUANTIZE : 0;
#define BQ_DOT(t, t2, isa)                                                                    \
  f |= type == BQ_ID_##t                                                                      \
           ? (BQ_ID_##t2 == vd ? BQ_F_DOT : 0) | (BQ_ID_##t2 == BQ_ID_f32 ? BQ_F_DOT_F32 : 0) \
           : 0;
#define BQ_MATVEC(t, t2, isa) f |= type == BQ_ID_##t ? BQ_F_MATVEC : 0;
#define BQ_STATS(t, isa) f |= type == BQ_ID_##t ? BQ_F_STATS : 0;
#include "kernels.inc"
#undef BQ_QUANTIZE
#undef BQ_QUANTIZE_ROWS
#undef BQ_DEQUANTIZE
#undef BQ_DOT
#undef BQ_MATVEC
#undef BQ_STATS
  return f | (bq_types[type].requires_imatrix ? BQ_F_REQUIRES_IMATRIX : 0);
}

int bq_type_block_size(int type) { return row(type) ? row(type)->block_size : 0; }
int bq_type_size(int type) { return row(type) ? row(type)->type_size : 0; }
int bq_type_vec_dot(int type) { return row(type) ? row(type)->vec_dot : -1; }
int bq_type_dot_step(int type) { return row(type) ? row(type)->dot_step : 0; }
int bq_type_sub_block(int type) { return row(type) ? row(type)->sub_block : 0; }
int bq_type_flags(int type) { return row(type) ? kernel_flags(type) : 0; }
const char *bq_type_name(int type) { return row(type) ? row(type)->name : NULL; }
int bq_type_max_id(void) { return BQ_NTYPES - 1; }
int bq_acc_lanes(void) { return BQ_ACC_LANES; }

struct bq_field_row {
  short type;
  const char *name, *kind;
  short offset, size, unit;
};

/* Bytes of one scalar of each field kind (fields.inc). */
#define BQ_UNIT_F16 2
#define BQ_UNIT_F32 4
#define BQ_UNIT_U8 1
#define BQ_UNIT_I8 1
#define BQ_UNIT_U16 2
#define BQ_UNIT_I16 2
#define BQ_UNIT_U32 4

#define BQ_MEMBER_SIZE(t, f) sizeof(((block_##t *)0)->f)
#define BQ_FIELD(t, f, kind) \
  {BQ_ID_##t, #f, #kind, BQ_OFF(t, f), BQ_MEMBER_SIZE(t, f), BQ_UNIT_##kind},
#define BQ_PART(t, f, off, name, size, kind) \
  {BQ_ID_##t, #name, #kind, BQ_OFF(t, f) + (off), size, BQ_UNIT_##kind},
static const struct bq_field_row bq_fields[] = {
#include "fields.inc"
};
#undef BQ_FIELD
#undef BQ_PART

/* A unit divides its field: a swap never straddles two fields; a part lies inside its member. */
#define BQ_FIELD(t, f, kind) \
  static_assert(BQ_MEMBER_SIZE(t, f) % BQ_UNIT_##kind == 0, #t "." #f ": whole scalars");
#define BQ_PART(t, f, off, name, size, kind)                                 \
  static_assert((size) % BQ_UNIT_##kind == 0 && (off) % BQ_UNIT_##kind == 0, \
                #t "." #name ": whole scalars");                             \
  static_assert((off) + (size) <= BQ_MEMBER_SIZE(t, f), #t "." #name ": inside " #f);
#include "fields.inc"
#undef BQ_FIELD
#undef BQ_PART

const char *bq_type_field(int type, int i, int *out) {
  for (size_t k = 0; k < sizeof bq_fields / sizeof bq_fields[0]; k++) {
    if (bq_fields[k].type != type || i-- != 0) continue;
    out[0] = bq_fields[k].offset;
    out[1] = bq_fields[k].size;
    out[2] = bq_fields[k].unit;
    return bq_fields[k].name;
  }
  return NULL;
}

const char *bq_type_field_kind(int type, int i) {
  for (size_t k = 0; k < sizeof bq_fields / sizeof bq_fields[0]; k++)
    if (bq_fields[k].type == type && i-- == 0) return bq_fields[k].kind;
  return NULL;
}
