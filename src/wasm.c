/* wasm-only: where the memory the JS wrapper manages begins. */
#include <stdint.h>

extern unsigned char __heap_base;

/* First byte past the module's static data and stack, rounded up to 64 bytes. The JS side owns
 * everything from here to the end of memory and grows memory itself; no kernel allocates. */
uint32_t bq_scratch_base(void) { return ((uint32_t)(uintptr_t)&__heap_base + 63u) & ~63u; }
