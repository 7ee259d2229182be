// tools/function_lengths.py's own test (tests/CMakeLists.txt): its listing of this file with
// --all --max 5 must be sample.expected, line for line. Not compiled. Braces in comments { and
// in strings, default arguments, initializer lists, template specializations and unbalanced
// braces in the branches of an #if must not move a function's ends.
#include <string>

namespace sample {

struct Point {
  int x{0}, y = 1;
  Point(int a, int b) : x{a}, y(b) {
    x += 1;
    y += 1;
    x *= 2;
    y *= 2;
  }
  int sum() const { return x + y; }
};

const char* kText = R"({"a": {"b": 1}})";

std::string raw(const std::string& s = std::string{}) {
  return s + R"(}}})" + "{";
}

void six_lines(int n,
               int m) {
  // } a brace in a comment
  const char c = '}';
  n += m + c;
}

int branches(int k) {
#ifdef SOMETHING
  if (k) {
#else
  if (!k) {
#endif
    k = 1;
  }
  return k;
}

template <class T>
T twice(T a) {
  return a + a;
}

template <>
int twice<int>(int a) {
  int b = a;
  b += a;
  return b;
}

}  // namespace sample
