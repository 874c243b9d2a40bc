// A tiny application linked against a kiln-compiled model ("mlp", see
// make_model.py): reads x from a raw float32 file, runs, prints y.
#include "mlp.h"

#include <cstdio>

int main(int argc, char **argv) {
  using namespace kiln_models::mlp;
  if (argc != 2)
    return 2;
  float x[x_t::num_elements], y[y_t::num_elements];
  FILE *f = std::fopen(argv[1], "rb");
  if (!f || std::fread(x, sizeof(float), x_t::num_elements, f) != x_t::num_elements)
    return 2;
  std::fclose(f);
  Model model;
  if (!model.ok() || model.run(x, y) != KILN_OK) {
    std::fprintf(stderr, "run failed: %s\n", model.error());
    return 1;
  }
  std::printf("y shape %lld %lld\n", (long long)y_t::shape[0], (long long)y_t::shape[1]);
  for (long i = 0; i < y_t::num_elements; ++i)
    std::printf("%.9g\n", y[i]);
  return 0;
}
