// An application of a model whose batch is symbolic ("batch_mlp",
// make_model.py --kind batch-mlp): reads N samples of x from a raw float32
// file, runs them in one call, prints y.
#include "batch_mlp.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  using namespace kiln_models::batch_mlp;
  static_assert(runtime_sizes, "the model should take any batch at run time");
  if (argc != 3)
    return 2;
  long n = std::atol(argv[2]);
  std::vector<float> x(x_t::num_elements_at(n)), y(y_t::num_elements_at(n));
  FILE *f = std::fopen(argv[1], "rb");
  if (!f || std::fread(x.data(), sizeof(float), x.size(), f) != x.size())
    return 2;
  std::fclose(f);
  Model model;
  if (!model.ok() || model.run(n, x.data(), y.data()) != KILN_OK) {
    std::fprintf(stderr, "run failed: %s\n", model.error());
    return 1;
  }
  int64_t shape[2];
  y_t::shape_at(n, shape);
  std::printf("y shape %lld %lld\n", (long long)shape[0], (long long)shape[1]);
  for (float v : y)
    std::printf("%.9g\n", v);
  return 0;
}
