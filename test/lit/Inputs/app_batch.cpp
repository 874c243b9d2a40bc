// An application of a model whose batch is resolved at run time
// ("batch_mlp", make_model.py --kind batch-mlp): reads BATCH samples of x
// from a raw float32 file, runs them in one call, prints y.
#include "batch_mlp.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  using namespace kiln_models::batch_mlp;
  static_assert(dynamic_batch, "the model should resolve its batch at run time");
  if (argc != 3)
    return 2;
  long batch = std::atol(argv[2]);
  std::vector<float> x(x_t::num_elements * batch), y(y_t::num_elements * batch);
  FILE *f = std::fopen(argv[1], "rb");
  if (!f || std::fread(x.data(), sizeof(float), x.size(), f) != x.size())
    return 2;
  std::fclose(f);
  Model model;
  if (!model.ok() || model.run(batch, x.data(), y.data()) != KILN_OK) {
    std::fprintf(stderr, "run failed: %s\n", model.error());
    return 1;
  }
  std::printf("y batch axis %d, per-sample shape %lld %lld\n", y_t::batch_axis,
              (long long)y_t::shape[0], (long long)y_t::shape[1]);
  for (float v : y)
    std::printf("%.9g\n", v);
  return 0;
}
