#pragma once
// Python str semantics over UTF-8 std::string: code-point lengths and indexing, the
// whitespace set of str.isspace(), repr() of str and float, case mapping (via ICU) and
// the strip/split family. Templates index, slice and compare strings as Python does,
// so every helper here works in code points, never bytes.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heron::chat::jinja::py {

bool is_ascii(std::string_view s);
size_t length(std::string_view s);  // in code points
std::u32string decode(std::string_view s);
void append_utf8(std::string& out, char32_t c);
std::string encode(std::u32string_view s);

bool isspace(char32_t c);
bool isprintable(char32_t c);

// repr(str): quotes chosen and characters escaped as CPython does.
std::string repr(std::string_view s);
// repr(float) / str(float): shortest round-trip digits, CPython's fixed/exponent switch.
std::string float_repr(double d);
// str(int(d)) without the sign, for a finite integral d of any magnitude (Python's ints
// are unbounded; "%.0f" of an integral double is exact).
std::string integral_digits(double d);

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string title(std::string_view s);       // str.title()
std::string capitalize(std::string_view s);  // str.capitalize()
std::string swapcase(std::string_view s);
bool islower(std::string_view s);
bool isupper(std::string_view s);
bool isalpha(std::string_view s);
bool isdigit(std::string_view s);
bool isalnum(std::string_view s);
bool isspace(std::string_view s);

enum class Side { Both, Left, Right };
// str.strip([chars]); chars == nullopt strips whitespace.
std::string strip(std::string_view s, const std::optional<std::string>& chars, Side side);
std::string_view strip_view(std::string_view s, const std::optional<std::string>& chars, Side side);
// str.split(sep=None, maxsplit=-1) and rsplit.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep,
                               long maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep,
                                long maxsplit);
std::vector<std::string> splitlines(std::string_view s, bool keepends);
std::string replace(std::string_view s, std::string_view old, std::string_view repl, long count);
// Code-point index of the first/last match at or after `start` (in code points), or -1.
long find(std::string_view s, std::string_view sub, bool reverse);
size_t count(std::string_view s, std::string_view sub);
std::string center(std::string_view s, long width, std::string_view fill);
std::string ljust(std::string_view s, long width, std::string_view fill);
std::string rjust(std::string_view s, long width, std::string_view fill);
std::string zfill(std::string_view s, long width);

}  // namespace heron::chat::jinja::py
