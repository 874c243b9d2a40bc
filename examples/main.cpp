// The example app: runs the bundled tiny CNN, compiled ahead of time by
// kiln_add_model(), on a fixed input and prints the class probabilities.
#include "tiny_cnn.h"

#include <cmath>
#include <cstdio>

namespace model = kiln_models::tiny_cnn;

int main() {
  float image[model::image_t::num_elements];
  for (int i = 0; i < model::image_t::num_elements; ++i)
    image[i] = std::sin(0.37f * i); // the same input as examples/check.py
  float probs[model::probs_t::num_elements];

  model::Model net;
  if (!net.ok()) {
    std::fprintf(stderr, "error: %s\n", net.error());
    return 1;
  }
  if (net.run(image, probs) != KILN_OK) {
    std::fprintf(stderr, "error: %s\n", net.error());
    return 1;
  }
  int best = 0;
  for (int i = 0; i < model::probs_t::num_elements; ++i) {
    std::printf("probs[%d] = %.6f\n", i, probs[i]);
    if (probs[i] > probs[best])
      best = i;
  }
  std::printf("predicted class: %d\n", best);
  return 0;
}
