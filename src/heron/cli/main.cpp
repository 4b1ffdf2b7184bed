// heron: one binary, many subcommands.
#include <iostream>

int main(int argc, char** argv) {
  (void)argc;
  (void)argv;
  std::cout << "heron " << HERON_VERSION << "\n";
  return 0;
}
