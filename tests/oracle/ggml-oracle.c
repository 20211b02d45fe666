/* The test oracle: llama.cpp's own prebuilt ggml (the devDependency @node-llama-cpp/linux-x64),
 * loaded with dlopen and driven by commands on standard input, one per line. Tests and the
 * benchmark use it; the package never does.
 *
 *   ggml-oracle LIBDIR            LIBDIR holds libggml-base.so and libggml-cpu-x64.so
 *
 * Commands (files are raw little-endian arrays; every command answers one line, "ok ..." or
 * "error ..."):
 *   info                                      one line per ggml type id 0..GGML_TYPE_COUNT-1:
 *                                             "type ID NAME BLCK TYPESIZE REQUIRES_IMATRIX"
 *                                             (absent ids have blck 0), then "ok"
 *   quantize TYPE NROWS NPERROW IN OUT [IMAT] ggml_quantize_chunk(TYPE, IN, OUT, 0, NROWS,
 *                                             NPERROW, IMAT or NULL); "ok BYTES", or, when
 *                                             ggml aborts on the input (a failed GGML_ASSERT in
 *                                             a grid quantizer's search, from NaN or overflow),
 *                                             "ok abort MESSAGE" and no OUT file
 *   quantize-ref TYPE N IN OUT                quantize_row_<name>_ref(IN, OUT, N), found by
 *                                             name (Q8_1 and Q8_K, the activation formats, are
 *                                             not cases of ggml_quantize_chunk); "ok BYTES"
 *   dequantize TYPE N IN OUT                  the type's to_float over N values, or, for a
 *                                             type whose traits have none (Q8_K), the
 *                                             library's dequantize_row_<name>; "ok"
 *   dot TYPE N X Y                            the CPU backend's vec_dot (generic C build) of N
 *                                             values of TYPE with its vec_dot type; "ok HEXBITS"
 *   tables TYPE PREFIX                        ggml_quantize_init(TYPE), then the grid search
 *                                             tables ggml built for it into PREFIX.grid,
 *                                             PREFIX.map, PREFIX.neighbours; "ok GRID MAP NEIGH"
 *                                             (counts of elements)
 *   time-init TYPE                            seconds ggml_quantize_init(TYPE) takes the first
 *                                             time in this process; "ok SECONDS"
 *   time TYPE NROWS NPERROW IN [IMAT] MS      repeats the quantize for at least MS milliseconds;
 *                                             "ok SECONDS_PER_CALL CALLS"
 *
 * The tables live in static arrays of ggml-quants.c (iq2_data, iq3_data) that the library does
 * not export; they are found through the library's ELF symbol table (it is not stripped). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef void (*to_float_t)(const void *x, float *y, int64_t k);
typedef void (*from_float_t)(const float *x, void *y, int64_t k);
typedef void (*vec_dot_t)(int n, float *s, size_t bs, const void *x, size_t bx, const void *y,
                          size_t by, int nrc);

/* ggml.h's struct ggml_type_traits and ggml-cpu.h's struct ggml_type_traits_cpu (ggml 0.23). */
struct type_traits {
  const char *type_name;
  int64_t blck_size;
  int64_t blck_size_interleave;
  size_t type_size;
  _Bool is_quantized;
  to_float_t to_float;
  from_float_t from_float_ref;
};
struct type_traits_cpu {
  from_float_t from_float;
  vec_dot_t vec_dot;
  int vec_dot_type;
  int64_t nrows;
};
/* ggml-quants.c's iq2_entry_t / iq3_entry_t. */
struct grid_entry {
  void *grid;
  int *map;
  uint16_t *neighbours;
};

static const struct type_traits *(*get_traits)(int);
static const struct type_traits_cpu *(*get_traits_cpu)(int);
static size_t (*quantize_chunk)(int, const float *, void *, int64_t, int64_t, int64_t,
                                const float *);
static _Bool (*requires_imatrix)(int);
static void (*quantize_init)(int);
static void (*cpu_init)(void);
static int type_count;
static char base_path[4096];

static void *must(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "ggml-oracle: %s not found: %s\n", name, dlerror());
    exit(2);
  }
  return p;
}

static void *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc(n > 0 ? (size_t)n : 1);
  if (p && n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return p;
}

static int write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  const int ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* The address of a local symbol of libggml-base.so in this process: its value in the file's
 * .symtab plus the load base. */
static void *local_symbol(const char *name) {
  size_t len;
  uint8_t *elf = read_file(base_path, &len);
  if (!elf || len < sizeof(Elf64_Ehdr)) return NULL;
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
  uint64_t value = 0;
  for (int i = 0; i < eh->e_shnum && !value; i++) {
    if (sh[i].sh_type != SHT_SYMTAB) continue;
    const Elf64_Sym *sym = (const Elf64_Sym *)(elf + sh[i].sh_offset);
    const char *str = (const char *)(elf + sh[sh[i].sh_link].sh_offset);
    for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
      if (strcmp(str + sym[k].st_name, name) == 0) value = sym[k].st_value;
  }
  free(elf);
  Dl_info info;
  if (!value || !dladdr((void *)quantize_chunk, &info)) return NULL;
  return (uint8_t *)info.dli_fbase + value;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static size_t row_bytes(int type, int64_t n) {
  const struct type_traits *t = get_traits(type);
  return (size_t)(n / t->blck_size) * t->type_size;
}

static int valid_type(int type) {
  return type >= 0 && type < type_count && get_traits(type)->blck_size > 0;
}

static void cmd_tables(int type, const char *prefix) {
  quantize_init(type);
  const int iq3 = type == 18 || type == 21; /* IQ3_XXS, IQ3_S */
  struct grid_entry *data = local_symbol(iq3 ? "iq3_data" : "iq2_data");
  if (!data) {
    printf("error no symbol table\n");
    return;
  }
  /* iq2_data: IQ2_XXS, IQ2_XS, IQ1_S and IQ1_M, IQ2_S; iq3_data: 256, 512 */
  int index, grid_size, map_size = iq3 ? 4096 : 43692;
  size_t grid_elem = iq3 ? 4 : 8;
  switch (type) {
    case 16:
      index = 0, grid_size = 256;
      break;
    case 17:
      index = 1, grid_size = 512;
      break;
    case 19:
    case 29:
      index = 2, grid_size = 2048;
      break;
    case 22:
      index = 3, grid_size = 1024;
      break;
    case 18:
      index = 0, grid_size = 256;
      break;
    case 21:
      index = 1, grid_size = 512;
      break;
    default:
      printf("error type %d has no tables\n", type);
      return;
  }
  const struct grid_entry *e = &data[index];
  size_t neigh = 0;
  for (int i = 0; i < map_size; i++) {
    if (e->map[i] >= 0) continue;
    const size_t off = (size_t)(-e->map[i] - 1);
    const size_t end = off + 1 + e->neighbours[off];
    if (end > neigh) neigh = end;
  }
  char path[4200];
  int bad = 0;
  snprintf(path, sizeof path, "%s.grid", prefix);
  bad |= write_file(path, e->grid, grid_elem * grid_size);
  snprintf(path, sizeof path, "%s.map", prefix);
  bad |= write_file(path, e->map, 4 * (size_t)map_size);
  snprintf(path, sizeof path, "%s.neighbours", prefix);
  bad |= write_file(path, e->neighbours, 2 * neigh);
  if (bad)
    printf("error cannot write %s.*\n", prefix);
  else
    printf("ok %d %d %zu\n", grid_size, map_size, neigh);
}

/* The quantize command. ggml_quantize_chunk runs in a child process, since ggml aborts on some
 * inputs (the grid quantizers assert that their search found a point, that a scale is not NaN):
 * the child writes OUT and exits 0, or dies of SIGABRT after printing ggml's message to stderr,
 * which a pipe brings back into the answer, with what it printed to stdout. The search tables are
 * built here first, once, so that children inherit them instead of each building its own. */
static void quantize_chunk_or_abort(int type, const float *x, int64_t nrows, int64_t nper,
                                    const float *w, const char *out) {
  quantize_init(type);
  const size_t bytes = (size_t)nrows * row_bytes(type, nper);
  int fd[2];
  if (pipe(fd)) {
    printf("error pipe\n");
    return;
  }
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    printf("error fork\n");
    close(fd[0]), close(fd[1]);
    return;
  }
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 1); /* ggml prints its search failures ("Oops, ...") to stdout */
    dup2(fd[1], 2);
    void *y = calloc(bytes ? bytes : 1, 1);
    const size_t got = quantize_chunk(type, x, y, 0, nrows, nper, w);
    _exit(got != bytes ? 3 : write_file(out, y, bytes) ? 4 : 0);
  }
  close(fd[1]);
  char msg[512];
  size_t len = 0;
  for (ssize_t r; len < sizeof msg - 1 && (r = read(fd[0], msg + len, sizeof msg - 1 - len)) > 0;)
    len += (size_t)r;
  for (char c; read(fd[0], &c, 1) > 0;) {
  } /* the rest, so the child never blocks on a full pipe */
  close(fd[0]);
  msg[len] = 0;
  for (char *c = msg; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  int status;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)
    printf("ok abort %s\n", msg);
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    printf("error quantize failed (status %d) %s\n", status, msg);
  else
    printf("ok %zu\n", bytes);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ggml-oracle LIBDIR < commands\n");
    return 2;
  }
  /* ggml_abort would attach gdb to print a backtrace; its message is enough. */
  setenv("GGML_NO_BACKTRACE", "1", 1);
  snprintf(base_path, sizeof base_path, "%s/libggml-base.so", argv[1]);
  void *base = dlopen(base_path, RTLD_NOW | RTLD_GLOBAL);
  if (!base) {
    fprintf(stderr, "ggml-oracle: %s\n", dlerror());
    return 2;
  }
  char cpu_path[4200];
  snprintf(cpu_path, sizeof cpu_path, "%s/libggml-cpu-x64.so", argv[1]);
  void *cpu = dlopen(cpu_path, RTLD_NOW | RTLD_GLOBAL);
  if (!cpu) {
    fprintf(stderr, "ggml-oracle: %s\n", dlerror());
    return 2;
  }
  get_traits = must(base, "ggml_get_type_traits");
  quantize_chunk = must(base, "ggml_quantize_chunk");
  requires_imatrix = must(base, "ggml_quantize_requires_imatrix");
  quantize_init = must(base, "ggml_quantize_init");
  get_traits_cpu = must(cpu, "ggml_get_type_traits_cpu");
  cpu_init = must(cpu, "ggml_cpu_init");
  cpu_init();
  /* GGML_TYPE_COUNT of the pinned library (ggml 0.23): ids 0..42, the last being Q2_0. The
   * trait table has no end marker, so a library of another version is refused here. */
  type_count = 43;
  if (strcmp(get_traits(42)->type_name, "q2_0") != 0) {
    fprintf(stderr, "ggml-oracle: type 42 is not q2_0: not the ggml version this oracle knows\n");
    return 2;
  }

  char line[16384];
  setvbuf(stdout, NULL, _IOLBF, 0);
  while (fgets(line, sizeof line, stdin)) {
    char *argv2[16];
    int n = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok && n < 16; tok = strtok(NULL, " \t\r\n"))
      argv2[n++] = tok;
    if (n == 0) continue;
    const char *cmd = argv2[0];
    const int type = n > 1 ? atoi(argv2[1]) : -1;
    if (strcmp(cmd, "info") == 0) {
      for (int t = 0; t < type_count; t++) {
        const struct type_traits *tt = get_traits(t);
        printf("type %d %s %lld %zu %d\n", t, tt->type_name ? tt->type_name : "-",
               (long long)tt->blck_size, tt->type_size, requires_imatrix(t) ? 1 : 0);
      }
      printf("ok\n");
    } else if (strcmp(cmd, "quantize") == 0 && (n == 6 || n == 7) && valid_type(type)) {
      const int64_t nrows = atoll(argv2[2]), nper = atoll(argv2[3]);
      size_t len, wlen = 0;
      float *x = read_file(argv2[4], &len);
      float *w = n == 7 ? read_file(argv2[6], &wlen) : NULL;
      if (!x || len != (size_t)(nrows * nper) * 4 || (n == 7 && (!w || wlen != (size_t)nper * 4))) {
        printf("error bad input sizes\n");
      } else {
        quantize_chunk_or_abort(type, x, nrows, nper, w, argv2[5]);
      }
      free(x);
      free(w);
    } else if (strcmp(cmd, "quantize-ref") == 0 && n == 5 && valid_type(type)) {
      const int64_t count = atoll(argv2[2]);
      char name[64];
      snprintf(name, sizeof name, "quantize_row_%s_ref", get_traits(type)->type_name);
      from_float_t ref = (from_float_t)dlsym(RTLD_DEFAULT, name);
      size_t len;
      float *x = read_file(argv2[3], &len);
      if (!ref) {
        printf("error no function %s\n", name);
      } else if (!x || len != (size_t)count * 4 || count % get_traits(type)->blck_size) {
        printf("error bad input size\n");
      } else {
        const size_t bytes = row_bytes(type, count);
        void *y = calloc(bytes ? bytes : 1, 1);
        ref(x, y, count);
        if (write_file(argv2[4], y, bytes))
          printf("error write\n");
        else
          printf("ok %zu\n", bytes);
        free(y);
      }
      free(x);
    } else if (strcmp(cmd, "dequantize") == 0 && n == 5 && valid_type(type)) {
      const int64_t count = atoll(argv2[2]);
      size_t len;
      void *q = read_file(argv2[3], &len);
      const struct type_traits *tt = get_traits(type);
      to_float_t to_float = tt->to_float;
      if (!to_float) {
        char name[64];
        snprintf(name, sizeof name, "dequantize_row_%s", tt->type_name);
        to_float = (to_float_t)dlsym(base, name);
      }
      if (!q || len != row_bytes(type, count) || !to_float) {
        printf("error bad input\n");
      } else {
        float *y = malloc(4 * (size_t)count + 4);
        to_float(q, y, count);
        printf(write_file(argv2[4], y, 4 * (size_t)count) ? "error write\n" : "ok\n");
        free(y);
      }
      free(q);
    } else if (strcmp(cmd, "dot") == 0 && n == 5 && valid_type(type)) {
      const int64_t count = atoll(argv2[2]);
      const struct type_traits_cpu *tc = get_traits_cpu(type);
      size_t lx, ly;
      void *x = read_file(argv2[3], &lx), *y = read_file(argv2[4], &ly);
      if (!x || !y || !tc->vec_dot || lx != row_bytes(type, count) ||
          ly != row_bytes(tc->vec_dot_type, count)) {
        printf("error bad input\n");
      } else {
        float s = 0;
        tc->vec_dot((int)count, &s, 0, x, 0, y, 0, 1);
        uint32_t u;
        memcpy(&u, &s, 4);
        printf("ok %08x\n", u);
      }
      free(x);
      free(y);
    } else if (strcmp(cmd, "tables") == 0 && n == 3) {
      cmd_tables(type, argv2[2]);
    } else if (strcmp(cmd, "time-init") == 0 && n == 2 && valid_type(type)) {
      const double t0 = now();
      quantize_init(type);
      printf("ok %.6f\n", now() - t0);
    } else if (strcmp(cmd, "time") == 0 && (n == 6 || n == 7) && valid_type(type)) {
      const int64_t nrows = atoll(argv2[2]), nper = atoll(argv2[3]);
      const double ms = atof(argv2[n - 1]);
      size_t len, wlen = 0;
      float *x = read_file(argv2[4], &len);
      float *w = n == 7 ? read_file(argv2[5], &wlen) : NULL;
      if (!x || len != (size_t)(nrows * nper) * 4 || (n == 7 && (!w || wlen != (size_t)nper * 4))) {
        printf("error bad input sizes\n");
      } else {
        void *y = malloc((size_t)nrows * row_bytes(type, nper) + 1);
        quantize_init(type);
        long calls = 0;
        const double t0 = now();
        double t;
        do {
          quantize_chunk(type, x, y, 0, nrows, nper, w);
          calls++;
        } while ((t = now() - t0) * 1e3 < ms);
        printf("ok %.9f %ld\n", t / calls, calls);
        free(y);
      }
      free(x);
      free(w);
    } else {
      printf("error bad command %s\n", cmd);
    }
  }
  return 0;
}
