/* Memory-bandwidth ceilings for the benchmark: the fastest a kernel that writes (dequantize) or
 * reads (dot, matvec) the same number of bytes could go. Built as its own SIMD128 module. */
#include <stddef.h>
#include <stdint.h>
#include <wasm_simd128.h>

extern unsigned char __heap_base;

uint32_t ceiling_base(void) { return ((uint32_t)(uintptr_t)&__heap_base + 63u) & ~63u; }

/* Plain v128 stores over [p, p + bytes), bytes a multiple of 64. */
void ceiling_store(uint8_t *p, size_t bytes) {
  const v128_t v = wasm_i32x4_splat(0x3F800000);
  for (size_t i = 0; i < bytes; i += 64) {
    wasm_v128_store(p + i, v);
    wasm_v128_store(p + i + 16, v);
    wasm_v128_store(p + i + 32, v);
    wasm_v128_store(p + i + 48, v);
  }
}

/* Plain v128 loads over [p, p + bytes), folded with xor so they are not optimised away. */
uint32_t ceiling_load(const uint8_t *p, size_t bytes) {
  v128_t a = wasm_i32x4_splat(0), b = a, c = a, d = a;
  for (size_t i = 0; i < bytes; i += 64) {
    a = wasm_v128_xor(a, wasm_v128_load(p + i));
    b = wasm_v128_xor(b, wasm_v128_load(p + i + 16));
    c = wasm_v128_xor(c, wasm_v128_load(p + i + 32));
    d = wasm_v128_xor(d, wasm_v128_load(p + i + 48));
  }
  const v128_t r = wasm_v128_xor(wasm_v128_xor(a, b), wasm_v128_xor(c, d));
  return (uint32_t)wasm_i32x4_extract_lane(r, 0) ^ (uint32_t)wasm_i32x4_extract_lane(r, 3);
}
