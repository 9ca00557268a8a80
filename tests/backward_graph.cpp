// The backward kernel's instantiations on the plain graph games (backward_graph.hpp), compiled
// once for backward_kernel_test and backward_out_of_core_test. Thread safety: as the kernel's.
#include "backward_graph.hpp"

namespace retra::graph_test {

RETRA_GRAPH_TEST_RUNS()

}  // namespace retra::graph_test
