// One core's fp32 FMA peak and its streaming read bandwidth, for
// bench/gemm.py's fractions of peak. Built with -O2 -march=native.
//   peak flops             GFLOP/s of independent vector FMA chains
//   peak read MiB          GB/s reading a buffer of MiB mebibytes (4 streams)
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
#define LOAD _mm512_loadu_ps
#define STORE _mm512_storeu_ps
#else
typedef __m256 vec;
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
#define LOAD _mm256_loadu_ps
#define STORE _mm256_storeu_ps
#endif

// 12 chains: more than FMA latency x FMA ports on current x86 cores.
static double flops(void) {
  vec a[12], b = SET1(0.999999f), c = SET1(1e-7f);
  for (int j = 0; j < 12; ++j)
    a[j] = SET1(1.0f + j);
  long n = 20000000;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    double t = now();
    for (long i = 0; i < n; ++i)
      for (int j = 0; j < 12; ++j)
        a[j] = FMA(a[j], b, c);
    t = now() - t;
    double g = 2.0 * 12 * LANES * n / t * 1e-9;
    best = g > best ? g : best;
  }
  vec s = a[0];
  for (int j = 1; j < 12; ++j)
    s = ADD(s, a[j]);
  float out[LANES];
  STORE(out, s);
  if (out[0] == 42.0f) // keeps the chains live
    puts("");
  return best;
}

static double readBandwidth(size_t mib) {
  size_t n = mib << 18; // floats
  float *p = aligned_alloc(64, n * sizeof(float));
  memset(p, 0, n * sizeof(float));
  double best = 0;
  float out[LANES];
  for (int rep = 0; rep < 5; ++rep) {
    // 8 sums over 4 streams (the buffer's quarters at once): a core's
    // prefetchers fetch several streams in parallel, one stream alone
    // leaves bandwidth unused.
    vec s[8];
    for (int j = 0; j < 8; ++j)
      s[j] = SET1(0);
    size_t q = n / 4;
    double t = now();
    for (size_t i = 0; i < q; i += 2 * LANES)
      for (int j = 0; j < 8; ++j)
        s[j] = ADD(s[j], LOAD(p + (j / 2) * q + i + (j % 2) * LANES));
    t = now() - t;
    for (int j = 1; j < 8; ++j)
      s[0] = ADD(s[0], s[j]);
    STORE(out, s[0]);
    double g = n * sizeof(float) / t * 1e-9;
    best = g > best ? g : best;
  }
  free(p);
  if (out[0] == 42.0f)
    puts("");
  return best;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "flops")) {
    printf("%.2f\n", flops());
    return 0;
  }
  if (argc >= 3 && !strcmp(argv[1], "read")) {
    printf("%.2f\n", readBandwidth(strtoul(argv[2], 0, 10)));
    return 0;
  }
  fprintf(stderr, "usage: peak flops | peak read MiB\n");
  return 2;
}
