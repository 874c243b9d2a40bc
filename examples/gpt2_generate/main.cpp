// Greedy text generation with a GPT-2 decoder step compiled once by kiln
// for every batch, sequence and past length (run-time sizes).
//
// Each step feeds the tokens so far (the prompt, then the last token) with
// the KV cache of the previous steps and reads back the next token's
// logits and the grown cache. The cache lives in two sets of buffers the
// app owns, sized once for the longest run: a step reads `past` from one
// set and writes `present` into the other, so nothing is copied between
// steps.
#include "gpt2.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace g = kiln_models::gpt2;

int main(int argc, char **argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 32;
  std::vector<int64_t> tokens = {5, 17, 42, 99};
  const int64_t heads = g::past_key_values_0_key_t::shape[1];
  const int64_t headDim = g::past_key_values_0_key_t::shape[3];
  const int64_t vocab = g::logits_t::shape[2];
  const int64_t maxLen = static_cast<int64_t>(tokens.size()) + steps;

  g::Model model;
  if (!model.ok()) {
    std::fprintf(stderr, "gpt2-generate: %s\n", model.error());
    return 1;
  }
  // Two sets of the four cache tensors (2 layers x key/value), each big
  // enough for the longest sequence.
  std::vector<float> cache[2][4];
  for (auto &set : cache)
    for (auto &t : set)
      t.resize(heads * maxLen * headDim);
  int cur = 0;
  int64_t past = 0;
  std::vector<int64_t> ids = tokens;
  std::vector<int64_t> mask;
  std::vector<float> logits;
  std::printf("tokens:");
  for (int step = 0; step < steps; ++step) {
    int64_t seq = static_cast<int64_t>(ids.size());
    mask.assign(past + seq, 1);
    logits.resize(seq * vocab);
    std::vector<float> *in = cache[cur], *out = cache[1 - cur];
    kiln_status st = model.run(/*batch=*/1, seq, /*total_seq=*/past + seq, past,
                               ids.data(), mask.data(), in[0].data(), in[1].data(),
                               in[2].data(), in[3].data(), logits.data(), out[0].data(),
                               out[1].data(), out[2].data(), out[3].data());
    if (st != KILN_OK) {
      std::fprintf(stderr, "\ngpt2-generate: step %d: %s\n", step, model.error());
      return 1;
    }
    // The next token: argmax of the last position's logits.
    const float *last = logits.data() + (seq - 1) * vocab;
    int64_t next = 0;
    for (int64_t v = 1; v < vocab; ++v)
      if (last[v] > last[next])
        next = v;
    std::printf(" %lld", static_cast<long long>(next));
    past += seq;
    ids.assign(1, next);
    cur = 1 - cur;
  }
  std::printf("\n");
  return 0;
}
