/* The model-quantization oracle: llama.cpp's own llama_model_quantize (libllama of the
 * devDependency @node-llama-cpp/linux-x64, llama.cpp 0.4.0), loaded with dlopen. Tests and the
 * benchmark run it; the package never does.
 *
 *   llama-oracle LIBDIR IN OUT FTYPE [options]
 *   llama-oracle LIBDIR - < jobs      one job a line, its fields (IN OUT FTYPE [options]) separated
 *                                     by tabs: the IQ grids are built once for all of them
 *
 * FTYPE is a llama_ftype number. Options, as llama-quantize spells them where it has them:
 *   --nthread N                 threads (default 1)
 *   --imatrix FILE              importance weights in this oracle's own simple format: records of
 *                               u32 name length, name bytes, u32 count, count float32
 *   --pure, --leave-output-tensor, --allow-requantize, --keep-split, --dry-run
 *   --output-tensor-type T, --token-embedding-type T   ggml type ids
 *   --tensor-type REGEX=T       (repeatable; T a ggml type id)
 *   --override-kv KEY=TYPE:VALUE   TYPE int, float, bool or str (repeatable)
 *   --prune-layers a,b,c
 * Prints "ok" and exits 0 when llama_model_quantize returns 0; llama.cpp's log goes to stderr.
 *
 * The parameter structs as the 0.4.0 library lays them out (checked against
 * llama_model_quantize_default_params: nthread 0, ftype 7, the two type overrides 43 =
 * GGML_TYPE_COUNT, quantize_output_tensor 1 at byte 17, pointers from byte 24). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct quantize_params {
  int32_t nthread, ftype, output_tensor_type, token_embedding_type;
  _Bool allow_requantize, quantize_output_tensor, only_copy, pure, keep_split, dry_run;
  void *imatrix, *kv_overrides, *tt_overrides, *prune_layers;
  uint64_t max_buf_size;
};
_Static_assert(sizeof(struct quantize_params) == 64, "0.4.0's llama_model_quantize_params");

struct imatrix_entry { /* llama_model_imatrix_data */
  const char *name;
  const float *data;
  size_t size;
};

struct kv_override { /* llama_model_kv_override */
  int32_t tag;       /* 0 int, 1 float, 2 bool, 3 str */
  char key[128];
  union {
    int64_t i64;
    double f64;
    _Bool b;
    char str[128];
  } val;
};
_Static_assert(sizeof(struct kv_override) == 264, "llama_model_kv_override");

struct tt_override { /* tensor_type_option as the library takes it: pattern, ggml type */
  const char *pattern;
  int32_t type;
};

static void *must(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "llama-oracle: %s not found\n", name);
    exit(2);
  }
  return p;
}

static void *open_lib(const char *dir, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    fprintf(stderr, "llama-oracle: %s\n", dlerror());
    exit(2);
  }
  return h;
}

static struct imatrix_entry *read_imatrix(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  size_t n = 0, cap = 16;
  struct imatrix_entry *e = calloc(cap, sizeof *e);
  uint32_t len;
  while (fread(&len, 4, 1, f) == 1) {
    if (n + 1 >= cap) e = realloc(e, (cap *= 2) * sizeof *e);
    char *name = calloc(len + 1, 1);
    uint32_t count;
    if (fread(name, 1, len, f) != len || fread(&count, 4, 1, f) != 1) exit(3);
    float *data = malloc(4 * (size_t)count + 4);
    if (fread(data, 4, count, f) != count) exit(3);
    e[n++] = (struct imatrix_entry){name, data, count};
  }
  fclose(f);
  e[n] = (struct imatrix_entry){NULL, NULL, 0};
  return e;
}

static void quiet_log(int level, const char *text, void *user) {
  (void)level, (void)user;
  fputs(text, stderr);
}

typedef uint32_t (*quantize_fn)(const char *, const char *, const struct quantize_params *);
static struct quantize_params (*default_params)(void);
static quantize_fn quantize;

/* One job: IN OUT FTYPE [options] (argv[0] is IN). Returns 0 when llama_model_quantize did. */
static int job(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "llama-oracle: a job is IN OUT FTYPE [options]\n");
    return 2;
  }
  struct quantize_params p = default_params();
  p.nthread = 1;
  p.ftype = atoi(argv[2]);
  static struct kv_override kv[64];
  static struct tt_override tt[64];
  static int32_t prune[256];
  int nkv = 0, ntt = 0;
  memset(kv, 0, sizeof kv);
  for (int i = 3; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--nthread") && v)
      p.nthread = atoi(argv[++i]);
    else if (!strcmp(a, "--imatrix") && v)
      p.imatrix = read_imatrix(argv[++i]);
    else if (!strcmp(a, "--pure"))
      p.pure = 1;
    else if (!strcmp(a, "--leave-output-tensor"))
      p.quantize_output_tensor = 0;
    else if (!strcmp(a, "--allow-requantize"))
      p.allow_requantize = 1;
    else if (!strcmp(a, "--keep-split"))
      p.keep_split = 1;
    else if (!strcmp(a, "--dry-run"))
      p.dry_run = 1;
    else if (!strcmp(a, "--output-tensor-type") && v)
      p.output_tensor_type = atoi(argv[++i]);
    else if (!strcmp(a, "--token-embedding-type") && v)
      p.token_embedding_type = atoi(argv[++i]);
    else if (!strcmp(a, "--tensor-type") && v && ntt < 63) {
      char *s = strdup(argv[++i]), *eq = strrchr(s, '=');
      if (!eq) return 2;
      *eq = 0;
      tt[ntt++] = (struct tt_override){s, atoi(eq + 1)};
    } else if (!strcmp(a, "--override-kv") && v && nkv < 63) {
      char *s = strdup(argv[++i]), *eq = strchr(s, '='), *colon = eq ? strchr(eq, ':') : NULL;
      if (!colon) return 2;
      *eq = 0, *colon = 0;
      struct kv_override *o = &kv[nkv++];
      snprintf(o->key, sizeof o->key, "%s", s);
      const char *type = eq + 1, *val = colon + 1;
      if (!strcmp(type, "int"))
        o->tag = 0, o->val.i64 = strtoll(val, NULL, 10);
      else if (!strcmp(type, "float"))
        o->tag = 1, o->val.f64 = strtod(val, NULL);
      else if (!strcmp(type, "bool"))
        o->tag = 2, o->val.b = !strcmp(val, "true");
      else if (!strcmp(type, "str"))
        o->tag = 3, snprintf(o->val.str, sizeof o->val.str, "%s", val);
      else
        return 2;
    } else if (!strcmp(a, "--prune-layers") && v) {
      int n = 0;
      for (char *t = strtok(strdup(argv[++i]), ","); t && n < 254; t = strtok(NULL, ","))
        prune[n++] = atoi(t);
      prune[n] = -1;
      p.prune_layers = prune;
    } else {
      fprintf(stderr, "llama-oracle: bad option %s\n", a);
      return 2;
    }
  }
  if (nkv) p.kv_overrides = kv; /* ends at the first zero key */
  tt[ntt] = (struct tt_override){NULL, 0};
  if (ntt) p.tt_overrides = tt;
  const uint32_t r = quantize(argv[0], argv[1], &p);
  if (r) {
    printf("error llama_model_quantize returned %u\n", r);
    return 1;
  }
  printf("ok\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || (argc < 5 && strcmp(argv[2], "-") != 0)) {
    fprintf(stderr,
            "usage: llama-oracle LIBDIR IN OUT FTYPE [options]\n"
            "       llama-oracle LIBDIR - < jobs (one job a line: IN OUT FTYPE [options], "
            "tab-separated)\n");
    return 2;
  }
  open_lib(argv[1], "libggml-base.so");
  void *ggml = open_lib(argv[1], "libggml.v0.4.0.so");
  void *llama = open_lib(argv[1], "libllama.v0.4.0.so");
  void (*backend_load)(const char *) = must(ggml, "ggml_backend_load");
  char cpu[4096];
  snprintf(cpu, sizeof cpu, "%s/libggml-cpu-x64.so", argv[1]);
  backend_load(cpu);
  ((void (*)(void (*)(int, const char *, void *), void *))must(llama, "llama_log_set"))(quiet_log,
                                                                                        NULL);
  ((void (*)(void))must(llama, "llama_backend_init"))();
  default_params =
      (struct quantize_params(*)(void))must(llama, "llama_model_quantize_default_params");
  quantize = (quantize_fn)must(llama, "llama_model_quantize");
  if (strcmp(argv[2], "-") != 0) return job(argc - 2, argv + 2);
  /* Batch mode: the grids of the IQ types are built once for all jobs. Each job's answer is one
   * line on stdout ("ok" or "error ..."); llama.cpp's log of job k starts with a line
   * "llama-oracle: job k" on stderr. */
  static char line[1 << 16];
  int k = 0, status = 0;
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    char *args[256];
    int n = 0;
    for (char *t = strtok(line, "\t"); t && n < 255; t = strtok(NULL, "\t")) args[n++] = t;
    if (n == 0) continue;
    fprintf(stderr, "llama-oracle: job %d\n", k++);
    const int r = job(n, args);
    if (r == 2) printf("error bad job\n");
    fflush(stdout);
    fflush(stderr);
    if (r) status = 1;
  }
  return status;
}
