# blockquant: `make help` lists the targets.
#
# Everything a target needs is installed on first use: the build needs only Debian's emscripten and
# wabt (`deps`); checks, formatting and the benchmark add the npm dev dependencies (`dev-deps`:
# `npm ci` from package-lock.json, which pins typescript, vite, esbuild, deno, bun and workerd);
# the tests add the browsers (`test-deps`: Debian's chromium and firefox-esr).

SHELL := /bin/bash
.DEFAULT_GOAL := all

EMCC ?= emcc
CC ?= cc
NODE ?= node

SRC_COMMON := src/half.c src/types.c src/dispatch.c
# src/imat/: the quantizers with importance weights (reference C, in every build), and their SIMD128
# versions in src/imat/simd128/.
SRC_REF := $(wildcard src/ref/*.c src/imat/*.c)
SRC_SIMD := $(wildcard src/simd128/*.c src/imat/simd128/*.c)
HEADERS := $(filter-out src/modules.inc,$(wildcard src/*.h src/*.inc src/simd128/*.h src/imat/*.h src/imat/simd128/*.h))

# -ffp-contract=off: no fused multiply-add anywhere, or Q4_0/Q5_0 codes drift from ggml's.
CFLAGS_COMMON := -std=c11 -Wall -Wextra -Werror -ffp-contract=off
# Standalone modules (no Emscripten JS glue) with an explicit export list; memory starts small and
# only ever grows when the JS wrapper asks for it.
WASM_FLAGS := -O3 $(CFLAGS_COMMON) -sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH=1 \
  -sINITIAL_MEMORY=1MB -sTOTAL_STACK=256KB -sMAXIMUM_MEMORY=4GB -sERROR_ON_UNDEFINED_SYMBOLS=1

WASM_SIMD := wasm/blockquant-simd128.wasm
WASM_SCALAR := wasm/blockquant-scalar.wasm
JS_EMBED := js/wasm/simd128.js js/wasm/scalar.js
# The JS type table, generated from the C tables by a native program (tools/gen-types.c).
JS_TYPES := js/gen/types-table.js
# The split layout's module list for the JS (tools/modules.mjs from src/modules.inc).
JS_MODULES := js/gen/modules.js

STAMP := build/.stamp
DEV_STAMP := build/.dev-stamp
TEST_STAMP := build/.test-stamp

# Two variants of every build, linked from the same kernel objects: the packaged module
# (wasm/blockquant-<build>.wasm) exports only the public kernels and the type table, so the linker
# drops every reference kernel that has a SIMD twin; the test variant
# (build/test/blockquant-<build>.wasm, never packed) also exports each kernel's __ref, __simd128 and
# __relaxed names, which the kernel tests call directly. They differ only in the export list and in
# src/build_info.c (bq_build_info, compiled per variant, says which build and variant it is).
BUILDS := simd128 scalar relaxed threads relaxed-threads
WASM_TEST := $(BUILDS:%=build/test/blockquant-%.wasm)
# export-list flags: public or test, and the build's ISA
exports_defs = $(if $(filter test,$(1)),-DBQ_TEST_EXPORTS) $(if $(filter scalar,$(2)),,-DBQ_SIMD128) \
  $(if $(filter relaxed,$(2)),-DBQ_RELAXED)
build/exports/%.names: wasm/exports.c src/kernels.inc
	@mkdir -p build/exports
	$(CC) -E -P $(call exports_defs,$(firstword $(subst -, ,$*)),$(wordlist 2,9,$(subst -, ,$*))) $< \
	  | grep -o 'BQ_EXPORT [A-Za-z0-9_]*' | sed 's/BQ_EXPORT //' > $@
# Emscripten's EXPORTED_FUNCTIONS (a JSON list of _names); wasm-ld's --export flags
build/exports/%.json: build/exports/%.names
	sed 's/^/"_/; s/$$/"/' $< | paste -sd, | sed 's/^/[/; s/$$/]/' > $@
build/exports/%.txt: build/exports/%.names
	sed 's/^/--export=/' $< > $@

##@ Building
all: $(JS_TYPES) $(WASM_SIMD) $(WASM_SCALAR) $(JS_EMBED) relaxed threads relaxed-threads test-wasm ## Build the wasm modules, the JS modules that embed them and the test variants (default)

test-wasm: $(WASM_TEST) ## The test variants of the builds (build/test/: every kernel exported, for the kernel tests)

# The emcc builds: each source compiled once per build (-O3), then linked per variant.
OBJ_SIMD := $(patsubst src/%.c,build/simd128/%.o,$(SRC_COMMON) $(SRC_REF) $(SRC_SIMD) src/wasm.c)
OBJ_SCALAR := $(patsubst src/%.c,build/scalar/%.o,$(SRC_COMMON) $(SRC_REF) src/wasm.c)

build/simd128/%.o: src/%.c $(HEADERS) | deps
	@mkdir -p $(dir $@)
	$(EMCC) -O3 $(CFLAGS_COMMON) -msimd128 -c $< -o $@

build/scalar/%.o: src/%.c $(HEADERS) | deps
	@mkdir -p $(dir $@)
	$(EMCC) -O3 $(CFLAGS_COMMON) -c $< -o $@

build/simd128/build_info-test.o build/scalar/build_info-test.o: build/%/build_info-test.o: src/build_info.c | deps
	@mkdir -p $(dir $@)
	$(EMCC) -O3 $(CFLAGS_COMMON) $(if $(filter simd128,$*),-msimd128) -DBQ_TEST_EXPORTS -c $< -o $@

$(WASM_SIMD): $(OBJ_SIMD) build/simd128/build_info.o build/exports/public-simd128.json
	$(EMCC) $(WASM_FLAGS) -msimd128 -sEXPORTED_FUNCTIONS=@build/exports/public-simd128.json \
	  $(OBJ_SIMD) build/simd128/build_info.o -o $@

build/test/blockquant-simd128.wasm: $(OBJ_SIMD) build/simd128/build_info-test.o build/exports/test-simd128.json
	@mkdir -p build/test
	$(EMCC) $(WASM_FLAGS) -msimd128 -sEXPORTED_FUNCTIONS=@build/exports/test-simd128.json \
	  $(OBJ_SIMD) build/simd128/build_info-test.o -o $@

$(WASM_SCALAR): $(OBJ_SCALAR) build/scalar/build_info.o build/exports/public-scalar.json
	$(EMCC) $(WASM_FLAGS) -sEXPORTED_FUNCTIONS=@build/exports/public-scalar.json \
	  $(OBJ_SCALAR) build/scalar/build_info.o -o $@

build/test/blockquant-scalar.wasm: $(OBJ_SCALAR) build/scalar/build_info-test.o build/exports/test-scalar.json
	@mkdir -p build/test
	$(EMCC) $(WASM_FLAGS) -sEXPORTED_FUNCTIONS=@build/exports/test-scalar.json \
	  $(OBJ_SCALAR) build/scalar/build_info-test.o -o $@

# The relaxed-SIMD build: SIMD128 plus i32x4.relaxed_dot_i8x16_i7x16_add_s. emcc 3.1.6 cannot emit
# that opcode, so Debian's clang-19 compiles and wasm-ld-19 links directly (the clang driver would
# run a wasm-opt from PATH, and wasm-opt 108 mangles relaxed opcodes). libc: wasi-libc's headers, and
# only the objects of the functions the kernels call (all of libc.a adds start/exit wrappers to
# every export); memcpy and memset are bulk-memory instructions. Each src/relaxed/<f>.c includes and
# replaces src/simd128/<f>.c. Same JS ABI as the other builds: memory export, growable to 4 GB, no imports.
CLANG_WASM ?= clang-19
WASM_LD ?= wasm-ld-19
WASM_RELAXED := wasm/blockquant-relaxed.wasm
SRC_RELAXED_OWN := $(wildcard src/relaxed/*.c)
SRC_RELAXED := $(SRC_COMMON) $(SRC_REF) $(SRC_RELAXED_OWN) src/wasm.c \
  $(filter-out $(patsubst src/relaxed/%,src/simd128/%,$(SRC_RELAXED_OWN)),$(SRC_SIMD))
OBJ_RELAXED := $(patsubst src/%.c,build/relaxed/%.o,$(SRC_RELAXED))
LIBC_RELAXED := $(addprefix build/relaxed/libc/,roundf.o log2.o log2_data.o __math_divzero.o __math_invalid.o)
relaxed: $(WASM_RELAXED) js/wasm/relaxed.js ## Build the relaxed-SIMD module (clang-19, wasm-ld-19)

CLANG_RELAXED = $(CLANG_WASM) --target=wasm32 -O3 $(CFLAGS_COMMON) -msimd128 -mrelaxed-simd -mbulk-memory \
  -isystem /usr/include/wasm32-wasi
build/relaxed/%.o: src/%.c $(HEADERS) $(wildcard src/relaxed/*.h) | deps-relaxed
	@mkdir -p $(dir $@)
	$(CLANG_RELAXED) -c $< -o $@

build/relaxed/build_info-test.o: src/build_info.c | deps-relaxed
	@mkdir -p $(dir $@)
	$(CLANG_RELAXED) -DBQ_TEST_EXPORTS -c $< -o $@

# (each relaxed file includes its SIMD128 namesake)
$(patsubst src/%.c,build/relaxed/%.o,$(SRC_RELAXED_OWN)): build/relaxed/relaxed/%.o: src/simd128/%.c

$(LIBC_RELAXED): | deps-relaxed
	@mkdir -p build/relaxed/libc
	cd build/relaxed/libc && ar x /usr/lib/wasm32-wasi/libc.a $(notdir $@)

LINK_RELAXED = $(WASM_LD) --no-entry --stack-first -z stack-size=262144 --max-memory=4294967296 --strip-all
$(WASM_RELAXED): $(OBJ_RELAXED) build/relaxed/build_info.o $(LIBC_RELAXED) build/exports/public-relaxed.txt
	$(LINK_RELAXED) $$(cat build/exports/public-relaxed.txt) $(OBJ_RELAXED) build/relaxed/build_info.o \
	  $(LIBC_RELAXED) -o $@

build/test/blockquant-relaxed.wasm: $(OBJ_RELAXED) build/relaxed/build_info-test.o $(LIBC_RELAXED) build/exports/test-relaxed.txt
	@mkdir -p build/test
	$(LINK_RELAXED) $$(cat build/exports/test-relaxed.txt) $(OBJ_RELAXED) build/relaxed/build_info-test.o \
	  $(LIBC_RELAXED) -o $@

# The threads build (init({ threads }), js/threads.js): the SIMD128 kernels on a shared memory
# that every worker's instance imports (atomics and bulk memory; passive data segments, written
# once by the first instance). Scratch that kernels write is reached through _Thread_local
# pointers (src/simd128/threads.c), so each instance gets a TLS block, a stack and a scratch block
# from the JS pool: __wasm_init_tls, __stack_pointer and bq_thread_scratch_init are exported for it.
# Compiled with clang-19 and linked by wasm-ld-19 as the relaxed build is (emcc 3.1.6 has no
# standalone shared memory); libc is the same few objects.
WASM_THREADS := wasm/blockquant-threads.wasm
OBJ_THREADS := $(patsubst src/%.c,build/threads/%.o,$(SRC_COMMON) $(SRC_REF) $(SRC_SIMD) src/wasm.c)
threads: $(WASM_THREADS) js/wasm/threads.js js/wasm/worker-src.js ## Build the shared-memory module for worker threads (clang-19, wasm-ld-19)

CLANG_THREADS = $(CLANG_WASM) --target=wasm32 -O3 $(CFLAGS_COMMON) -msimd128 -matomics -mbulk-memory \
  -isystem /usr/include/wasm32-wasi
build/threads/%.o: src/%.c $(HEADERS) | deps-relaxed
	@mkdir -p $(dir $@)
	$(CLANG_THREADS) -c $< -o $@

build/threads/build_info-test.o: src/build_info.c | deps-relaxed
	@mkdir -p $(dir $@)
	$(CLANG_THREADS) -DBQ_TEST_EXPORTS -c $< -o $@

# the threads build's export list adds what the JS pool needs to start an instance
build/exports/%-threads.txt: build/exports/%-threads.names
	sed 's/^/--export=/' $< > $@
	printf -- '--export=%s\n' bq_thread_scratch_bytes bq_thread_scratch_init __wasm_init_tls \
	  __tls_size __tls_align __stack_pointer >> $@

LINK_THREADS = $(WASM_LD) --no-entry --stack-first -z stack-size=262144 --shared-memory --import-memory \
  --export-memory --max-memory=4294967296 --strip-all
$(WASM_THREADS): $(OBJ_THREADS) build/threads/build_info.o $(LIBC_RELAXED) build/exports/public-threads.txt
	$(LINK_THREADS) $$(cat build/exports/public-threads.txt) $(OBJ_THREADS) build/threads/build_info.o \
	  $(LIBC_RELAXED) -o $@

build/test/blockquant-threads.wasm: $(OBJ_THREADS) build/threads/build_info-test.o $(LIBC_RELAXED) build/exports/test-threads.txt
	@mkdir -p build/test
	$(LINK_THREADS) $$(cat build/exports/test-threads.txt) $(OBJ_THREADS) build/threads/build_info-test.o \
	  $(LIBC_RELAXED) -o $@

# The relaxed threads build (init({ threads }) where the relaxed probe passes and the page is
# cross-origin isolated): the relaxed build's sources compiled as the threads build is (clang-19,
# -mrelaxed-simd -matomics -mbulk-memory, shared imported memory, the same JS ABI and export list as
# the threads build); src/relaxed/threads.c adds the relaxed matvec's scratch to each thread's block.
WASM_RTHREADS := wasm/blockquant-relaxed-threads.wasm
OBJ_RTHREADS := $(patsubst src/%.c,build/relaxed-threads/%.o,$(SRC_RELAXED))
relaxed-threads: $(WASM_RTHREADS) js/wasm/relaxed-threads.js ## Build the relaxed-SIMD shared-memory module for worker threads (clang-19, wasm-ld-19)

CLANG_RTHREADS = $(CLANG_THREADS) -mrelaxed-simd
build/relaxed-threads/%.o: src/%.c $(HEADERS) $(wildcard src/relaxed/*.h) | deps-relaxed
	@mkdir -p $(dir $@)
	$(CLANG_RTHREADS) -c $< -o $@

build/relaxed-threads/build_info-test.o: src/build_info.c | deps-relaxed
	@mkdir -p $(dir $@)
	$(CLANG_RTHREADS) -DBQ_TEST_EXPORTS -c $< -o $@

$(patsubst src/%.c,build/relaxed-threads/%.o,$(SRC_RELAXED_OWN)): build/relaxed-threads/relaxed/%.o: src/simd128/%.c

$(WASM_RTHREADS): $(OBJ_RTHREADS) build/relaxed-threads/build_info.o $(LIBC_RELAXED) build/exports/public-relaxed-threads.txt
	$(LINK_THREADS) $$(cat build/exports/public-relaxed-threads.txt) $(OBJ_RTHREADS) \
	  build/relaxed-threads/build_info.o $(LIBC_RELAXED) -o $@

build/test/blockquant-relaxed-threads.wasm: $(OBJ_RTHREADS) build/relaxed-threads/build_info-test.o $(LIBC_RELAXED) build/exports/test-relaxed-threads.txt
	@mkdir -p build/test
	$(LINK_THREADS) $$(cat build/exports/test-relaxed-threads.txt) $(OBJ_RTHREADS) \
	  build/relaxed-threads/build_info-test.o $(LIBC_RELAXED) -o $@

build/native/gen-types: tools/gen-types.c src/types.c src/half.c $(HEADERS)
	@mkdir -p build/native
	$(CC) $(CFLAGS_COMMON) -O1 tools/gen-types.c src/types.c src/half.c -lm -o $@

$(JS_TYPES): build/native/gen-types
	@mkdir -p js/gen
	./build/native/gen-types $@

js/wasm/worker-src.js: js/worker-core.js js/worker.js tools/embed-worker.mjs
	@mkdir -p js/wasm
	$(NODE) tools/embed-worker.mjs js/worker-core.js js/worker.js $@

js/wasm/%.js: wasm/blockquant-%.wasm tools/embed-wasm.mjs
	@mkdir -p js/wasm
	$(NODE) tools/embed-wasm.mjs $< $@

build/native/libblockquant.a: $(SRC_COMMON) $(SRC_REF) $(HEADERS) ## Native static library (reference kernels)
	@mkdir -p build/native/obj
	for f in $(SRC_COMMON) $(SRC_REF); do \
	  $(CC) $(CFLAGS_COMMON) -O2 -c $$f -o build/native/obj/$$(echo $$f | tr / _).o || exit 1; done
	ar rcs $@ build/native/obj/*.o

native: build/native/libblockquant.a ## Build the native static library

types: types/index.d.ts ## TypeScript declarations generated from the JSDoc (types/, packed, not committed)

types/index.d.ts: $(wildcard js/*.js js/*.d.ts js/model/*.js js/gguf/*.js) $(JS_TYPES) $(JS_MODULES) tools/tsconfig.types.json tools/wasm.d.ts tsconfig.json | dev-deps
	rm -rf types
	./node_modules/.bin/tsc -p tools/tsconfig.types.json
	rm -rf types/wasm
	cp tools/wasm.d.ts types/wasm.d.ts

pack: all types ## The npm package tarball (npm pack; its prepack step runs make all types)
	npm pack --silent

##@ Checking
JS_TESTS := $(filter-out tests/package.test.js,$(wildcard tests/*.test.js))

test: all native types oracle test-native test-native-golden test-js test-package typecheck ## Build everything and run every test
	@echo "make test: all tests passed"

test-native: deps ## Native reference tests under ASan+UBSan, and the exhaustive fp16/bf16 test
	@mkdir -p build/native
	$(CC) $(CFLAGS_COMMON) -O1 -g -fsanitize=address,undefined,float-cast-overflow \
	  -fno-sanitize-recover=all $(SRC_COMMON) $(SRC_REF) tests/native/test_golden.c -lm \
	  -o build/native/test_golden
	./build/native/test_golden tests/fixtures/golden
	$(CC) $(CFLAGS_COMMON) -O1 -g -fsanitize=address,undefined,float-cast-overflow \
	  -fno-sanitize-recover=all $(SRC_COMMON) $(SRC_REF) tests/native/test_imat_iq43.c -lm \
	  -o build/native/test_imat_iq43
	./build/native/test_imat_iq43
	$(CC) $(CFLAGS_COMMON) -O1 -g -fsanitize=address,undefined,float-cast-overflow \
	  -fno-sanitize-recover=all $(SRC_COMMON) $(SRC_REF) tests/native/test_imat_iq2.c -lm \
	  -o build/native/test_imat_iq2
	./build/native/test_imat_iq2
	$(CC) $(CFLAGS_COMMON) -O1 -g -fsanitize=address,undefined,float-cast-overflow \
	  -fno-sanitize-recover=all $(SRC_COMMON) $(SRC_REF) tests/native/test_imat_iq1.c -lm \
	  -o build/native/test_imat_iq1
	./build/native/test_imat_iq1
	$(CC) $(CFLAGS_COMMON) -O2 $(SRC_COMMON) $(SRC_REF) tests/native/test_half.c -lm \
	  -o build/native/test_half
	./build/native/test_half

test-js: all types oracle demo/sample.gguf | test-deps ## The JS suite (node --test), once per build: simd128, then scalar
	BQ_BACKEND=simd128 $(NODE) --test $(JS_TESTS)
	BQ_BACKEND=scalar $(NODE) --test $(JS_TESTS)

test-package: all types | test-deps ## The packed tarball installed and smoke-tested in Node, Deno, Bun, workerd, Chromium, Firefox, TypeScript
	$(NODE) --test tests/package.test.js

# The test oracle: llama.cpp's prebuilt ggml (the devDependency @node-llama-cpp/linux-x64), driven
# through a small native program (tests/lib/ggml.js runs it).
ORACLE := build/oracle/ggml-oracle build/oracle/llama-oracle
oracle: $(ORACLE) ## The oracles the tests and the benchmark compare against (llama.cpp's own libggml and libllama)

build/oracle/%: tests/oracle/%.c | dev-deps
	@mkdir -p build/oracle
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror $< -ldl -o $@

typecheck: $(JS_TYPES) $(JS_MODULES) dev-deps ## tsc --checkJs over js/ and demo/
	./node_modules/.bin/tsc -p tsconfig.json
	./node_modules/.bin/tsc -p tsconfig.demo.json

fmt: dev-deps ## Format the sources: clang-format (C), prettier (JS, HTML, CSS)
	clang-format -i src/*.c src/*.h src/ref/*.c src/simd128/*.c src/simd128/*.h src/relaxed/*.c src/relaxed/*.h \
	  src/imat/*.c src/imat/*.h src/imat/simd128/*.c src/imat/simd128/*.h tests/native/*.c tests/native/*.h tests/oracle/*.c tools/*.c
	./node_modules/.bin/prettier --log-level warn --write "js/**/*.js" "tests/**/*.{js,mjs}" "bench/**/*.js" \
	  "demo/**/*.{js,html,css}" "tools/**/*.mjs"

##@ Running
demo: all demo/sample.gguf ## Serve the demo page at http://127.0.0.1:8080/ (PORT overrides)
	$(NODE) demo/cli.js
	$(NODE) demo/server.js

demo/sample.gguf: demo/make-sample.js demo/sample.js $(JS_EMBED) $(JS_TYPES)
	$(NODE) demo/make-sample.js

bench: all oracle bench/out/ceiling.wasm | dev-deps test-deps ## Benchmark: writes bench/out/latest.json, prints ratios, the quantizers against native ggml, the relaxed build in Chromium, 2 threads against 1, whole models against llama_model_quantize (BENCH_MODEL_MB, default 1024), and the download size
	$(NODE) bench/bench.js
	$(NODE) bench/quantize.js
	$(NODE) bench/relaxed.js
	$(NODE) bench/threads.js 2
	$(NODE) bench/model.js --size $(or $(BENCH_MODEL_MB),1024)
	$(NODE) bench/size.js

bench/out/ceiling.wasm: bench/ceiling.c | deps
	@mkdir -p bench/out
	$(EMCC) -O3 -msimd128 -sSTANDALONE_WASM --no-entry -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=1MB \
	  -sTOTAL_STACK=64KB -sMAXIMUM_MEMORY=4GB -sEXPORTED_FUNCTIONS=_ceiling_base,_ceiling_store,_ceiling_load $< -o $@

disasm: $(WASM_SIMD) ## Disassemble the SIMD128 build into build/simd128.dis
	@mkdir -p build
	wasm-objdump -d $(WASM_SIMD) > build/simd128.dis

##@ Housekeeping
deps: $(STAMP) ## Install what building needs (apt-get: emscripten wabt)

deps-relaxed: build/.relaxed-stamp ## Install what the relaxed build needs (apt-get: clang-19 lld-19 wasi-libc)

dev-deps: $(DEV_STAMP) ## Install the npm dev dependencies (npm ci)

test-deps: $(TEST_STAMP) dev-deps ## Install what the tests add (apt-get: chromium firefox-esr)

# $(call apt-install,command package ...): apt-get install each package whose command is missing.
apt-install = missing=""; \
	for pair in $(1); do cmd=$${pair%%=*}; pkg=$${pair\#*=}; \
	  command -v $$cmd >/dev/null || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(STAMP):
	@$(call apt-install,emcc=emscripten wasm-objdump=wabt)
	@mkdir -p build && touch $@

build/.relaxed-stamp:
	@$(call apt-install,clang-19=clang-19 wasm-ld-19=lld-19)
	@test -f /usr/include/wasm32-wasi/math.h || { echo "installing: wasi-libc"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq wasi-libc; }
	@mkdir -p build && touch $@

$(DEV_STAMP): package-lock.json
	npm ci --no-audit --no-fund
	@mkdir -p build && touch $@

$(TEST_STAMP):
	@$(call apt-install,chromium=chromium firefox-esr=firefox-esr)
	@mkdir -p build && touch $@

clean: ## Remove build outputs
	rm -rf build wasm/*.wasm js/wasm js/gen types demo/sample.gguf bench/out tests/artifacts blockquant-*.tgz

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^##@/ {printf "\n%s\n", substr($$0, 5)} \
	  /^[a-z][a-z0-9-]*:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: test-wasm oracle relaxed threads relaxed-threads deps-relaxed all native types pack test test-native test-native-golden test-js test-package typecheck fmt demo bench disasm deps dev-deps test-deps clean help

# The golden tests of the formats added after the simple blocks: one test program and one fixture
# folder per set (tests/native/test_golden_<set>.c, tests/fixtures/golden-<set>/), under ASan+UBSan.
GOLDEN_SETS := k iq4 iqgrid

test-native-golden: $(GOLDEN_SETS:%=test-golden-%) ## K-quant, IQ4/MXFP4/TQ and IQ-grid reference kernels against ggml's golden vectors (ASan+UBSan)

test-golden-%: deps
	@mkdir -p build/native
	$(CC) $(CFLAGS_COMMON) -O1 -g -fsanitize=address,undefined,float-cast-overflow \
	  -fno-sanitize-recover=all $(SRC_COMMON) $(SRC_REF) tests/native/test_golden_$*.c -lm \
	  -o build/native/test_golden_$*
	./build/native/test_golden_$* tests/fixtures/golden-$*
.SECONDARY: $(BUILDS:%=build/exports/public-%.names) $(BUILDS:%=build/exports/test-%.names)

# The split layout (src/modules.inc): per build (scalar, simd128, relaxed) a core module,
# wasm/blockquant-<build>-core.wasm, linked as the whole build is but exporting only the core's
# names (plus the libc functions side modules import from it), and side modules
# wasm/blockquant-<build>-<module>.wasm, position-independent (clang-19 -fPIC, wasm-ld-19 -shared)
# so that js/side.js places them in the core's memory: each imports the core's memory, its own
# __memory_base, __stack_pointer and function table, and what it does not define itself from the
# core's exports. The kernels a side module exports come from an archive of the build's objects,
# so each module holds only the objects its kernels reach. The threads build stays whole.
SPLIT_BUILDS := scalar simd128 relaxed
SIDE_MODULES := $(filter-out core,$(shell $(NODE) tools/modules.mjs list))
WASM_SPLIT := $(foreach b,$(SPLIT_BUILDS),wasm/blockquant-$(b)-core.wasm $(SIDE_MODULES:%=wasm/blockquant-$(b)-%.wasm))
split: $(WASM_SPLIT) $(JS_MODULES) ## The split layout: a core and side modules per build (src/modules.inc)
all: split

$(JS_MODULES): src/modules.inc tools/modules.mjs
	@mkdir -p js/gen
	$(NODE) tools/modules.mjs js $@

# Every module's list of a build is written by one run (a grouped target: were the side modules'
# lists targets without a recipe, build/exports/%.names's recipe would rewrite them as the whole
# build's list whenever they came out older than the core's).
define SPLIT_NAMES
build/exports/split-$(1)-core.names $(SIDE_MODULES:%=build/exports/split-$(1)-%.names) &: build/exports/public-$(1).names src/modules.inc tools/modules.mjs
	$$(NODE) tools/modules.mjs split build/exports/public-$(1).names build/exports/split-$(1)
endef
$(foreach b,$(SPLIT_BUILDS),$(eval $(call SPLIT_NAMES,$(b))))

# What side modules import from the core: libc functions that need data (log2) or, in the scalar
# build without bulk memory, memcpy and memset.
CORE_LIBC = log2 $(if $(filter scalar,$(1)),memcpy memset)
build/exports/split-%-core.json: build/exports/split-%-core.names
	(cat $<; printf '%s\n' $(call CORE_LIBC,$*)) | sed 's/^/"_/; s/$$/"/' | paste -sd, | sed 's/^/[/; s/$$/]/' > $@
build/exports/split-%.txt: build/exports/split-%.names
	sed 's/^/--export=/' $< > $@

wasm/blockquant-simd128-core.wasm: $(OBJ_SIMD) build/simd128/build_info.o build/exports/split-simd128-core.json
	$(EMCC) $(WASM_FLAGS) -msimd128 -sEXPORTED_FUNCTIONS=@build/exports/split-simd128-core.json \
	  $(OBJ_SIMD) build/simd128/build_info.o -o $@
wasm/blockquant-scalar-core.wasm: $(OBJ_SCALAR) build/scalar/build_info.o build/exports/split-scalar-core.json
	$(EMCC) $(WASM_FLAGS) -sEXPORTED_FUNCTIONS=@build/exports/split-scalar-core.json \
	  $(OBJ_SCALAR) build/scalar/build_info.o -o $@
wasm/blockquant-relaxed-core.wasm: $(OBJ_RELAXED) build/relaxed/build_info.o $(LIBC_RELAXED) build/exports/split-relaxed-core.txt
	$(LINK_RELAXED) $$(cat build/exports/split-relaxed-core.txt) --export=log2 $(OBJ_RELAXED) \
	  build/relaxed/build_info.o $(LIBC_RELAXED) -o $@

# Position-independent objects of each build, with hidden visibility so that calls and data
# inside a module stay direct (no GOT); the same sources as the build's whole module.
PIC_ISA_scalar :=
PIC_ISA_simd128 := -msimd128 -mbulk-memory
PIC_ISA_relaxed := -msimd128 -mrelaxed-simd -mbulk-memory
SRC_PIC_scalar := $(SRC_COMMON) $(SRC_REF)
SRC_PIC_simd128 := $(SRC_COMMON) $(SRC_REF) $(SRC_SIMD)
SRC_PIC_relaxed := $(filter-out src/wasm.c,$(SRC_RELAXED))
CLANG_PIC = $(CLANG_WASM) --target=wasm32 -O3 $(CFLAGS_COMMON) -fPIC -fvisibility=hidden -isystem /usr/include/wasm32-wasi
define pic_rules
build/pic-$(1)/%.o: src/%.c $$(HEADERS) $$(wildcard src/relaxed/*.h) | deps-relaxed
	@mkdir -p $$(dir $$@)
	$$(CLANG_PIC) $$(PIC_ISA_$(1)) -c $$< -o $$@
build/pic-$(1)/kernels.a: $$(patsubst src/%.c,build/pic-$(1)/%.o,$$(SRC_PIC_$(1)))
	rm -f $$@
	ar rcs $$@ $$^
wasm/blockquant-$(1)-%.wasm: build/pic-$(1)/kernels.a build/exports/split-$(1)-%.txt build/relaxed/libc/roundf.o tools/trim-data.mjs
	$$(WASM_LD) --experimental-pic -shared --strip-all --unresolved-symbols=import-dynamic \
	  $$$$(cat build/exports/split-$(1)-$$*.txt) build/pic-$(1)/kernels.a build/relaxed/libc/roundf.o -o $$@
	$$(NODE) tools/trim-data.mjs $$@
endef
$(foreach b,$(SPLIT_BUILDS),$(eval $(call pic_rules,$(b))))
$(patsubst src/%.c,build/pic-relaxed/%.o,$(SRC_RELAXED_OWN)): build/pic-relaxed/relaxed/%.o: src/simd128/%.c
.SECONDARY: $(foreach b,$(SPLIT_BUILDS),build/exports/split-$(b)-core.names $(SIDE_MODULES:%=build/exports/split-$(b)-%.names))
.PHONY: split
