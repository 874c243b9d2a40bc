// Runs the model of make_sequence_model.py through its generated header:
// sequence outputs are kiln_sequence objects the app creates and reads.
#include "seq.h"

#include <cstdio>

int main() {
  namespace m = kiln_models::seq;
  m::Model model;
  if (!model.ok()) {
    std::fprintf(stderr, "session: %s\n", model.error());
    return 1;
  }
  float x[6] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f};
  int64_t pos = 1, n = 4, len = 0;
  float at[6], cat[12], stacked[12], grown[6];
  bool has = false;
  kiln_sequence *parts = nullptr, *prefixes = nullptr, *joined = nullptr;
  if (kiln_sequence_create(KILN_DTYPE_FLOAT, &parts) != KILN_OK ||
      kiln_sequence_create(KILN_DTYPE_FLOAT, &prefixes) != KILN_OK ||
      kiln_sequence_create(KILN_DTYPE_FLOAT, &joined) != KILN_OK)
    return 1;
  if (model.run(x, &pos, &n, &len, at, cat, stacked, parts, prefixes, joined, grown, &has) !=
      KILN_OK) {
    std::fprintf(stderr, "run: %s\n", model.error());
    return 1;
  }
  std::printf("len %lld has %d parts %lld prefixes %lld\n", (long long)len, (int)has,
              (long long)kiln_sequence_length(parts), (long long)kiln_sequence_length(prefixes));
  for (int64_t i = 0; i < kiln_sequence_length(prefixes); ++i) {
    kiln_tensor t;
    if (kiln_sequence_at(prefixes, i, &t) != KILN_OK)
      return 1;
    const float *v = static_cast<const float *>(t.data);
    std::printf("prefix %lld: [%lld] last %g\n", (long long)i, (long long)t.shape[0],
                v[t.shape[0] - 1]);
  }
  kiln_tensor all;
  if (kiln_sequence_at(joined, 0, &all) != KILN_OK)
    return 1;
  std::printf("joined [%lld]\n", (long long)all.shape[0]);
  kiln_sequence_destroy(joined);
  kiln_sequence_destroy(parts);
  kiln_sequence_destroy(prefixes);
  return 0;
}
