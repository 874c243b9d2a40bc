// An application of a model compiled once per sequence length ("variants",
// make_variants_model.py softmax, --dim-values T=...): reads BATCH x T
// float32 values of x from a raw file, runs them, prints y then z.
#include "variants.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  using namespace kiln_models::variants;
  static_assert(shape_variants, "the model should be compiled per size of T");
  if (argc != 4)
    return 2;
  long batch = std::atol(argv[2]), t = std::atol(argv[3]);
  std::vector<float> x(x_t::num_elements_at(batch, t)), y(y_t::num_elements_at(batch, t)),
      z(z_t::num_elements_at(batch, t));
  FILE *f = std::fopen(argv[1], "rb");
  if (!f || std::fread(x.data(), sizeof(float), x.size(), f) != x.size())
    return 2;
  std::fclose(f);
  Model model;
  if (!model.ok() || model.run(batch, t, x.data(), y.data(), z.data()) != KILN_OK) {
    std::fprintf(stderr, "run failed: %s\n", model.error());
    return 1;
  }
  for (float v : y)
    std::printf("%.9g\n", v);
  for (float v : z)
    std::printf("%.9g\n", v);
  return 0;
}
